// suppression_probe — a data race in our own (instrumented) code that runs
// under RocksDB frames, which tests/tsan.supp must NOT hide.
//
// RocksDB calls back into pgring's code: WriteBatch::Handler (the group
// batch merge, the tests' models), the FileSystem the tests wrap
// (FaultInjectionFileSystem), listeners. A race in such a callback has
// librocksdb.so frames below ours in its stack, so a suppression by module
// ("race:librocksdb.so") or a pattern that names a RocksDB function on such
// a path would silence it. Here two threads iterate their own write batches
// with handlers that bump one unsynchronized counter: a real race in
// instrumented code, called from rocksdb::WriteBatch::Iterate. The ctest
// (tests/CMakeLists.txt, tsan builds only) runs this with the suppressions
// file and passes only if TSan reports the race: it fails if the broad line
// comes back.
#include <rocksdb/slice.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <string>
#include <thread>

namespace {

long g_puts = 0;  // racy on purpose

class CountingHandler : public rocksdb::WriteBatch::Handler {
 public:
  void Put(const rocksdb::Slice& /*key*/, const rocksdb::Slice& /*value*/) override {
    g_puts = g_puts + 1;
  }
};

void IterateBatch() {
  rocksdb::WriteBatch batch;
  for (int i = 0; i < 64; ++i) batch.Put("key" + std::to_string(i), "value");
  CountingHandler h;
  for (int round = 0; round < 16; ++round) {
    if (!batch.Iterate(&h).ok()) std::abort();
  }
}

}  // namespace

int main() {
  std::thread a(IterateBatch);
  std::thread b(IterateBatch);
  a.join();
  b.join();
  std::printf("suppression_probe: %ld puts counted\n", g_puts);
  return 0;
}
