// ceph_payload.h — PG-log payloads in Ceph's own encoding, as a Ceph 19
// (Squid) OSD writes them (pgring_payload=ceph): pg_log_entry_t v14,
// pg_log_dup_t v2, pg_info_t v32 (pg_stat_t v29, pg_history_t v10) and
// pg_fast_info_t v1, the layouts of the encodings in Ceph's object corpus
// (tests/tool/ceph_corpus/). What varies is what varies on an OSD: the
// object (an RBD data object whose hash maps to the PG), its offset, the
// version and prior version, the client and its tid, the mtime, the stats.
// Every payload is a deterministic function of (PG, version), as the
// random payloads are, so the model can check every byte it reads back.
//
// pgring-tool decodes all four (src/tool/ceph/); tests/fio checks that.
#ifndef PGRING_TOOLS_FIO_ENGINE_CEPH_PAYLOAD_H_
#define PGRING_TOOLS_FIO_ENGINE_CEPH_PAYLOAD_H_

#include <cstdint>
#include <string>

#include "engine_config.h"

namespace pgring::fio {

std::string CephLogEntry(const EngineConfig& c, uint32_t pg, uint64_t version);
// The dup an entry becomes when it is trimmed: its reqid, version, result.
std::string CephLogDup(const EngineConfig& c, uint32_t pg, uint64_t version);
std::string CephPgInfo(const EngineConfig& c, uint32_t pg, uint64_t version);
std::string CephPgFastInfo(const EngineConfig& c, uint32_t pg, uint64_t version);

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_CEPH_PAYLOAD_H_
