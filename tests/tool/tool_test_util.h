// tool_test_util.h — helpers for the pgring-tool tests: run the built binary
// as a subprocess (exit status, stdout, stderr, with a timeout so a hang is a
// failure, not a stuck test), build file-backed stores through the public
// API, damage them, snapshot them (to prove a command changed nothing), and
// compare outputs with golden files.
#ifndef PGRING_TESTS_TOOL_TOOL_TEST_UTIL_H_
#define PGRING_TESTS_TOOL_TOOL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "format/metadata_keys.h"
#include "pgring/store.h"
#include "util/test_util.h"

namespace pgring::testing {

struct ToolRun {
  int exit_code = -1;  // -1: did not exit normally (signal, timeout)
  bool timed_out = false;
  std::string out;
  std::string err;
  nlohmann::json json() const;  // stdout parsed; fails the test if it is not JSON
};

// Runs the pgring-tool binary with `args`; its standard input is the file
// `stdin_path`.
ToolRun RunTool(const std::vector<std::string>& args, int timeout_seconds = 120,
                const std::string& stdin_path = "/dev/null");

// A store in a temporary directory: a partition file and a RocksDB dir.
// With a column family, the store is embedded as the README recommends: its
// keys in that family of a RocksDB that also holds an embedder's own keys
// (in the default family and in "other"), through MetadataLocation::SharedDb;
// Args() then adds --column-family. Such a store is written through
// Populate() and WithStore() (the RocksDB is open only while they run, so
// the tool can open it).
class ToolStore {
 public:
  static constexpr uint64_t kPartitionSize = 2ull << 20;  // 31 chunks of 64 KiB
  static constexpr uint32_t kChunkSize = 64 << 10;

  explicit ToolStore(Backend backend = Backend::kRing, uint64_t size = kPartitionSize,
                     std::string column_family = "");
  const std::string& column_family() const { return column_family_; }
  // Opens the store (through the embedder's RocksDB when it has a column
  // family) with `options` and runs `fn` on it; closes it after.
  void WithStore(const Options& options, const std::function<void(Store*)>& fn) const;
  const std::string& dev() const { return dev_; }
  const std::string& db() const { return db_; }
  std::string Join(const std::string& name) const { return dir_.Join(name); }
  // --dev X --db Y, followed by `args`.
  std::vector<std::string> Args(std::vector<std::string> args) const;
  ToolRun Run(std::vector<std::string> args) const { return RunTool(Args(std::move(args))); }
  // With standard input read from the file `stdin_path`.
  ToolRun RunWithStdin(std::vector<std::string> args, const std::string& stdin_path) const {
    return RunTool(Args(std::move(args)), 120, stdin_path);
  }

  std::unique_ptr<Store> Open(RecoveryPolicy policy = RecoveryPolicy::kRefuse) const;
  std::unique_ptr<Store> Open(const Options& options) const;
  // Fills the store with the standard content (see tool_test_util.cc).
  void Populate() const;
  // The standard PGs written in the stream layout (StreamLayoutOptions),
  // so that PG 1.0 and 1.2 have all their bytes only in the log stream, PG
  // 1.1 has homed blocks and its last partial block in the stream, and PG
  // 2.1f is empty. PG 1.0 is written last, so the stream records from its
  // stream_pos on hold its bytes only. `before_last` (if given) runs with
  // the store closed before PG 1.0's last transaction.
  void PopulateStream(const std::function<void()>& before_last = nullptr) const;

  // Raw access for damage tests (store closed).
  std::string ReadDevice(uint64_t offset, uint64_t n) const;
  void WriteDevice(uint64_t offset, const std::string& bytes) const;
  void FlipDeviceByte(uint64_t offset) const;
  // Every key and value; a key of a column family other than the default
  // one is prefixed with "<family>:".
  std::map<std::string, std::string> DbContents() const;
  void PutDbValue(const std::string& key, const std::string& value) const;
  void DeleteDbKey(const std::string& key) const;
  PgPointer Pointer(const PgId& pg) const;
  PgChunkList Chunks(const PgId& pg) const;
  void SetChunks(const PgId& pg, const PgChunkList& c) const;
  // Device offset of lpos in a PG's ring.
  uint64_t DeviceOffset(const PgId& pg, uint64_t lpos) const;
  // The log stream's keys, and the device offset of a stream lpos.
  StreamPointer StreamPtr() const;
  PgChunkList StreamChunks() const;
  uint64_t StreamDeviceOffset(uint64_t lpos) const;

  // Everything a command could change: the device's bytes and the RocksDB's
  // keys and values (Files(): every file of the RocksDB dir, byte for byte,
  // for the read-only checks).
  std::string DeviceBytes() const;
  std::map<std::string, std::string> Files() const;

 private:
  TempDir dir_;
  std::string dev_, db_;
  std::string column_family_;
};

// Writes the standard content (PgA..PgD below) through `store`.
void PopulateStore(Store* store);

// A stream-layout store's options: a stream of two chunks that homes a PG's
// records as soon as one whole block of them is unhomed.
Options StreamLayoutOptions();

// The standard content's PGs.
PgId PgA();  // 1.0: 20 entries, 3 dups, info
PgId PgB();  // 1.1: spans several chunks, trimmed, so its head is past chunk 0
PgId PgC();  // 2.1f: created, empty
PgId PgD();  // 1.2: rewound, then appended again

// Replaces what differs between runs: UUIDs with <UUID>, `dir` with <DIR>.
std::string Normalize(const std::string& text, const std::string& dir = "");
// Masks the RocksDB's size on disk (it varies from run to run) in `stats`
// output, text or JSON.
std::string MaskRocksDbSize(const std::string& s);
// Compares `actual` (normalized by the caller) with tests/tool/golden/<name>.
// PGRING_UPDATE_GOLDEN=1 rewrites the file instead.
void ExpectGolden(const std::string& name, const std::string& actual);

// The problem kinds in fsck --format json output, in order ("kind@pg").
std::vector<std::string> ProblemKinds(const nlohmann::json& fsck);
std::vector<std::string> NoteKinds(const nlohmann::json& fsck);

}  // namespace pgring::testing

#endif  // PGRING_TESTS_TOOL_TOOL_TEST_UTIL_H_
