// ceph_types.h — decoders of the Ceph types a PG log holds, each reading one
// value at the reader's position into JSON (field names as Ceph's own dump
// uses them), plus the one-line forms Ceph prints them in. The layouts are
// Ceph's (src/osd/osd_types.{h,cc}, src/common/hobject.cc), learnt from its
// source; every field of the versions Ceph 16 (Pacific) to 19 (Squid) write
// is read, and what a newer version appends is skipped by its length.
//
// Internal to the decoder: ceph_decode.h is the interface.
#ifndef PGRING_TOOL_CEPH_CEPH_TYPES_H_
#define PGRING_TOOL_CEPH_CEPH_TYPES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "tool/ceph/ceph_reader.h"
#include "tool/tool_common.h"

namespace pgring::tool::ceph {

// Plain values: a version "epoch'version", a time, an entity name.
absl::StatusOr<Json> ReadEversion(CephReader& r, absl::string_view field);
absl::StatusOr<Json> ReadUtime(CephReader& r, absl::string_view field);
absl::StatusOr<Json> ReadReqid(CephReader& r, absl::string_view field);
absl::StatusOr<Json> ReadHobject(CephReader& r, absl::string_view field);
// interval_set<uint64_t> or <snapid_t> (u32 count, then start and length
// pairs), as a log entry's clean regions and an info's purged snaps hold it.
absl::StatusOr<Json> ReadIntervalSet(CephReader& r, absl::string_view field);

// The log's records.
absl::StatusOr<Json> ReadLogEntry(CephReader& r, absl::string_view field);
absl::StatusOr<Json> ReadLogDup(CephReader& r, absl::string_view field);
absl::StatusOr<Json> ReadPgInfo(CephReader& r, absl::string_view field);
// pg_fast_info_t: the few pg_info_t fields most writes change, which an OSD
// writes instead of the whole info when the rest did not change.
absl::StatusOr<Json> ReadPgFastInfo(CephReader& r, absl::string_view field);

// One-line forms of decoded values, as Ceph prints them.
std::string HobjectText(const Json& hobject);
std::string LogEntryText(const Json& entry);
std::string LogDupText(const Json& dup);
std::string PgInfoText(const Json& info);
std::string PgFastInfoText(const Json& fast_info);

}  // namespace pgring::tool::ceph

#endif  // PGRING_TOOL_CEPH_CEPH_TYPES_H_
