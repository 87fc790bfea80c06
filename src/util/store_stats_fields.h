// store_stats_fields.h — every StoreStats counter under its name: the one
// table the "pgring.stats" property, StoreMetrics::Visit and the tools read.
#ifndef PGRING_UTIL_STORE_STATS_FIELDS_H_
#define PGRING_UTIL_STORE_STATS_FIELDS_H_

#include <cstdint>
#include <iterator>

#include "pgring/types.h"

namespace pgring {

struct StoreStatsField {
  const char* name;
  uint64_t StoreStats::*field;
};
inline constexpr StoreStatsField kStoreStatsFields[] = {
    {"pgs", &StoreStats::pgs},
    {"total_chunks", &StoreStats::total_chunks},
    {"free_chunks", &StoreStats::free_chunks},
    {"chunk_size", &StoreStats::chunk_size},
    {"live_entries", &StoreStats::live_entries},
    {"live_dups", &StoreStats::live_dups},
    {"transactions_committed", &StoreStats::transactions_committed},
    {"commit_groups", &StoreStats::commit_groups},
    {"superseded_key_writes", &StoreStats::superseded_key_writes},
    {"record_bytes_appended", &StoreStats::record_bytes_appended},
    {"payload_bytes_appended", &StoreStats::payload_bytes_appended},
    {"device_bytes_written", &StoreStats::device_bytes_written},
    {"device_flushes", &StoreStats::device_flushes},
    {"mapping_table_bytes", &StoreStats::mapping_table_bytes},
    {"device_writes", &StoreStats::device_writes},
    {"device_seeks", &StoreStats::device_seeks},
    {"stream_chunks", &StoreStats::stream_chunks},
    {"stream_max_chunks", &StoreStats::stream_max_chunks},
    {"stream_bytes_used", &StoreStats::stream_bytes_used},
    {"stream_records", &StoreStats::stream_records},
    {"stream_writes", &StoreStats::stream_writes},
    {"stream_bytes_written", &StoreStats::stream_bytes_written},
    {"home_writes", &StoreStats::home_writes},
    {"home_bytes_written", &StoreStats::home_bytes_written},
    {"forced_homes", &StoreStats::forced_homes},
    {"stream_full_fallbacks", &StoreStats::stream_full_fallbacks},
    {"stream_restates", &StoreStats::stream_restates},
    {"stream_restated_bytes", &StoreStats::stream_restated_bytes},
    {"stream_compressed_records", &StoreStats::stream_compressed_records},
    {"stream_compression_saved_bytes", &StoreStats::stream_compression_saved_bytes},
    {"stream_reads", &StoreStats::stream_reads},
    {"stream_bytes_read", &StoreStats::stream_bytes_read},
    {"unhomed_resident_bytes", &StoreStats::unhomed_resident_bytes},
    {"stream_index_bytes", &StoreStats::stream_index_bytes},
};
// A counter added to StoreStats must get a name here too.
static_assert(sizeof(StoreStats) == std::size(kStoreStatsFields) * sizeof(uint64_t));

}  // namespace pgring

#endif  // PGRING_UTIL_STORE_STATS_FIELDS_H_
