// rocksdb_keys.h — reading a store's RocksDB directly, for the tests that
// check what the backends keep there: every key and value, the RocksDB
// backend's keys of one PG, and Ceph's key names written out independently.
#ifndef PGRING_TESTS_UTIL_ROCKSDB_KEYS_H_
#define PGRING_TESTS_UTIL_ROCKSDB_KEYS_H_

#include <cstdint>
#include <map>
#include <string>

#include "pgring/types.h"

namespace pgring::testing {

// Every key of the RocksDB at `path` with its value (opened read-only; the
// store must be closed). Adds a test failure and returns what it read if
// the DB cannot be opened or iterated.
std::map<std::string, std::string> ReadAllKeys(const std::string& path);

// The RocksDB backend's keys of `pg` ("pgring.log." + pgkey + "." + name),
// by name, with the prefix taken off.
std::map<std::string, std::string> PgLogKeysOf(const std::map<std::string, std::string>& all,
                                             const PgId& pg);

// Ceph's eversion_t::get_key_name(): "%010u.%020llu".
std::string CephKeyName(uint32_t epoch, uint64_t version);

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_ROCKSDB_KEYS_H_
