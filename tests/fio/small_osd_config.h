// small_osd_config.h — the small OSD the fio engine's model tests drive: 16
// PGs, target 480 / 16 = 30 entries, trims of >= 10, 60 dups tracked.
#ifndef PGRING_TESTS_FIO_SMALL_OSD_CONFIG_H_
#define PGRING_TESTS_FIO_SMALL_OSD_CONFIG_H_

#include "engine_config.h"

namespace pgring::fio {

inline EngineConfig SmallConfig() {
  EngineConfig c;
  c.log_dev = "mem";
  c.pgs = 16;
  c.object_size = 64 << 10;
  c.osd_target_pg_log_entries_per_osd = 480;
  c.osd_min_pg_log_entries = 20;
  c.osd_max_pg_log_entries = 40;
  c.osd_pg_log_trim_min = 10;
  c.osd_pg_log_dups_tracked = 60;
  return c;
}

}  // namespace pgring::fio

#endif  // PGRING_TESTS_FIO_SMALL_OSD_CONFIG_H_
