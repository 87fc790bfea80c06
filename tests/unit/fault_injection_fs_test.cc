#include "util/fault_injection_fs.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

using rocksdb::IOOptions;
using rocksdb::WALRecoveryMode;

// The RocksDB options pgring's crash tests use (see the report / docs):
// point-in-time WAL recovery, no recycled WALs, nothing timer-driven.
rocksdb::Options CrashTestOptions(rocksdb::Env* env, WALRecoveryMode mode) {
  rocksdb::Options o;
  o.env = env;
  o.create_if_missing = true;
  o.paranoid_checks = true;
  o.wal_recovery_mode = mode;
  o.track_and_verify_wals_in_manifest = true;
  o.recycle_log_file_num = 0;
  o.manual_wal_flush = false;
  o.disable_auto_compactions = true;  // Keeps the I/O sequence deterministic.
  o.stats_dump_period_sec = 0;
  o.stats_persist_period_sec = 0;
  return o;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

bool IsPowerLost(const rocksdb::Status& s) {
  return s.IsIOError() &&
         s.ToString().find(kPowerLostMessage) != std::string::npos;
}

class FaultInjectionFsTest : public ::testing::Test {
 protected:
  FaultInjectionFsTest()
      : fs_(std::make_shared<FaultInjectionFileSystem>()),
        env_(rocksdb::NewCompositeEnv(fs_)),
        db_path_(tmp_.Join("db")),
        dir_(tmp_.Join("files")) {
    std::filesystem::create_directories(dir_);
  }

  // --- File-level helpers (through the FS under test) ---

  std::unique_ptr<rocksdb::FSWritableFile> NewFile(const std::string& name) {
    std::unique_ptr<rocksdb::FSWritableFile> f;
    EXPECT_OK(
        fs_->NewWritableFile(Path(name), rocksdb::FileOptions(), &f, nullptr));
    return f;
  }
  rocksdb::IOStatus Append(rocksdb::FSWritableFile* f, const std::string& s) {
    return f->Append(s, IOOptions(), nullptr);
  }
  rocksdb::IOStatus SyncDir() {
    std::unique_ptr<rocksdb::FSDirectory> d;
    rocksdb::IOStatus s = fs_->NewDirectory(dir_, IOOptions(), &d, nullptr);
    if (!s.ok()) return s;
    s = d->FsyncWithDirOptions(IOOptions(), nullptr,
                               rocksdb::DirFsyncOptions());
    EXPECT_OK(d->Close(IOOptions(), nullptr));
    return s;
  }
  // A durable file holding `content`.
  void MakeDurableFile(const std::string& name, const std::string& content) {
    auto f = NewFile(name);
    ASSERT_OK(Append(f.get(), content));
    ASSERT_OK(f->Sync(IOOptions(), nullptr));
    ASSERT_OK(f->Close(IOOptions(), nullptr));
    ASSERT_OK(SyncDir());
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // --- DB helpers ---

  rocksdb::Status Open(
      WALRecoveryMode mode = WALRecoveryMode::kPointInTimeRecovery) {
    db_.reset();
    rocksdb::Options options = CrashTestOptions(env_.get(), mode);
    if (writable_file_max_buffer_size_ > 0) {
      options.writable_file_max_buffer_size = writable_file_max_buffer_size_;
    }
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, db_path_, &db);
    db_.reset(db);
    return s;
  }
  rocksdb::Status Put(const std::string& k, const std::string& v, bool sync) {
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    return db_->Put(wo, k, v);
  }
  std::optional<std::string> Get(const std::string& k) {
    std::string v;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), k, &v);
    if (s.IsNotFound()) return std::nullopt;
    EXPECT_OK(s);
    return v;
  }
  // Power loss: the power goes, the process dies (the DB object is
  // destroyed), what was not durable is gone, the power comes back.
  void PowerLoss() {
    fs_->SetActive(false);
    db_.reset();
    ASSERT_OK(fs_->DropUnsyncedData());
    fs_->SetActive(true);
  }

  // Destroyed in reverse order: the DB first, the temp dir last.
  TempDir tmp_;
  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
  std::string db_path_;
  std::string dir_;
  size_t writable_file_max_buffer_size_ = 0;  // 0 = RocksDB's default.
  std::unique_ptr<rocksdb::DB> db_;
};

// ---------------------------------------------------------------------------
// File-level model.

TEST_F(FaultInjectionFsTest, CloseDoesNotMakeDataDurableOnlySyncDoes) {
  auto f = NewFile("f");
  ASSERT_OK(Append(f.get(), "aaaa"));
  ASSERT_OK(f->Sync(IOOptions(), nullptr));
  ASSERT_OK(Append(f.get(), "bbbb"));
  ASSERT_OK(f->Flush(IOOptions(), nullptr));
  ASSERT_OK(f->Close(IOOptions(), nullptr));
  f.reset();
  ASSERT_OK(SyncDir());
  auto info = fs_->GetFileInfo(Path("f"));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->size, 8u);
  EXPECT_EQ(info->synced_size, 4u);
  EXPECT_EQ(ReadWholeFile(Path("f")), "aaaabbbb");  // Page cache view.

  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("f")), "aaaa");
  EXPECT_FALSE(fs_->GetFileInfo(Path("f")).has_value());  // Forgotten.
}

TEST_F(FaultInjectionFsTest, FsyncAndPositionedAppendAreTracked) {
  auto f = NewFile("f");
  ASSERT_OK(f->PositionedAppend("0123", 0, IOOptions(), nullptr));
  ASSERT_OK(f->PositionedAppend("4567", 4, IOOptions(), nullptr));
  ASSERT_OK(f->Fsync(IOOptions(), nullptr));
  ASSERT_OK(f->PositionedAppend("89", 8, IOOptions(), nullptr));
  ASSERT_OK(f->Close(IOOptions(), nullptr));
  f.reset();
  ASSERT_OK(SyncDir());
  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("f")), "01234567");
}

TEST_F(FaultInjectionFsTest, InjectedAppendAndSyncErrorsFailOnlyTheMatchingCalls) {
  auto log = NewFile("000004.log");
  auto other = NewFile("MANIFEST-000001");
  // The second append to a *.log file fails and writes nothing; the FS
  // stays active and other files are untouched.
  fs_->FailAppends(1, 1, ".log");
  ASSERT_OK(Append(log.get(), "aaaa"));
  ASSERT_OK(Append(other.get(), "mm"));
  rocksdb::IOStatus s = Append(log.get(), "bbbb");
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("Input/output error"), std::string::npos) << s.ToString();
  EXPECT_TRUE(fs_->IsActive());
  EXPECT_EQ(fs_->GetFileInfo(Path("000004.log"))->size, 4u);
  ASSERT_OK(Append(log.get(), "cccc"));  // count 1: the next one works
  EXPECT_EQ(fs_->injected_errors(), 1u);
  // A failed sync makes nothing durable; the data stays (page cache).
  fs_->FailSyncs(0, 2, ".log");
  ASSERT_OK(other->Sync(IOOptions(), nullptr));
  EXPECT_TRUE(log->Sync(IOOptions(), nullptr).IsIOError());
  EXPECT_TRUE(log->Fsync(IOOptions(), nullptr).IsIOError());
  EXPECT_EQ(fs_->GetFileInfo(Path("000004.log"))->synced_size, 0u);
  EXPECT_EQ(fs_->GetFileInfo(Path("000004.log"))->size, 8u);
  ASSERT_OK(log->Sync(IOOptions(), nullptr));
  EXPECT_EQ(fs_->GetFileInfo(Path("000004.log"))->synced_size, 8u);
  EXPECT_EQ(fs_->injected_errors(), 3u);
  // count 0 clears a schedule.
  fs_->FailAppends(0, 5);
  fs_->FailAppends(0, 0);
  ASSERT_OK(Append(other.get(), "nn"));
  ASSERT_OK(log->Close(IOOptions(), nullptr));
  ASSERT_OK(other->Close(IOOptions(), nullptr));
}

TEST_F(FaultInjectionFsTest, RangeSyncAndFlushAreNotDurable) {
  auto f = NewFile("f");
  ASSERT_OK(Append(f.get(), "abcdef"));
  ASSERT_OK(f->Flush(IOOptions(), nullptr));
  ASSERT_OK(f->RangeSync(0, 6, IOOptions(), nullptr));
  EXPECT_EQ(fs_->GetFileInfo(Path("f"))->synced_size, 0u);
  EXPECT_EQ(fs_->sync_count(), 0u);
  ASSERT_OK(f->Close(IOOptions(), nullptr));
  f.reset();
  ASSERT_OK(SyncDir());
  ASSERT_OK(fs_->DropUnsyncedData());
  ASSERT_TRUE(Exists(Path("f")));
  EXPECT_EQ(std::filesystem::file_size(Path("f")), 0u);
}

TEST_F(FaultInjectionFsTest, NeverSyncedFileIsEmptiedOrVanishes) {
  // Its directory entry is durable, its data is not: it becomes empty.
  auto a = NewFile("a");
  ASSERT_OK(Append(a.get(), "data"));
  ASSERT_OK(a->Close(IOOptions(), nullptr));
  a.reset();
  ASSERT_OK(SyncDir());
  // Its data is durable, its directory entry is not: it vanishes.
  auto b = NewFile("b");
  ASSERT_OK(Append(b.get(), "data"));
  ASSERT_OK(b->Sync(IOOptions(), nullptr));
  ASSERT_OK(b->Close(IOOptions(), nullptr));
  b.reset();
  EXPECT_EQ(fs_->pending_dir_op_count(), 1u);

  ASSERT_OK(fs_->DropUnsyncedData());
  ASSERT_TRUE(Exists(Path("a")));
  EXPECT_EQ(std::filesystem::file_size(Path("a")), 0u);
  EXPECT_FALSE(Exists(Path("b")));
  EXPECT_EQ(fs_->pending_dir_op_count(), 0u);
}

TEST_F(FaultInjectionFsTest, ReopenedFileKeepsItsDurableContent) {
  MakeDurableFile("f", "old");
  ASSERT_OK(fs_->DropUnsyncedData());  // Forget it: untracked from now on.
  std::unique_ptr<rocksdb::FSWritableFile> f;
  ASSERT_OK(
      fs_->ReopenWritableFile(Path("f"), rocksdb::FileOptions(), &f, nullptr));
  ASSERT_OK(Append(f.get(), "new"));
  EXPECT_EQ(fs_->GetFileInfo(Path("f"))->synced_size, 3u);
  ASSERT_OK(f->Close(IOOptions(), nullptr));
  f.reset();
  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("f")), "old");
}

// RocksDB's CURRENT update: write a temp file, sync it, rename it over
// CURRENT, fsync the directory. Without the last step the rename is undone.
TEST_F(FaultInjectionFsTest, RenameWithoutDirSyncIsUndone) {
  MakeDurableFile("CURRENT", "MANIFEST-1\n");
  auto t = NewFile("CURRENT.tmp");
  ASSERT_OK(Append(t.get(), "MANIFEST-2\n"));
  ASSERT_OK(t->Sync(IOOptions(), nullptr));
  ASSERT_OK(t->Close(IOOptions(), nullptr));
  t.reset();
  ASSERT_OK(fs_->RenameFile(Path("CURRENT.tmp"), Path("CURRENT"), IOOptions(),
                            nullptr));
  EXPECT_EQ(ReadWholeFile(Path("CURRENT")), "MANIFEST-2\n");
  EXPECT_EQ(fs_->pending_dir_op_count(), 2u);  // Create + rename.

  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("CURRENT")), "MANIFEST-1\n");
  EXPECT_FALSE(Exists(Path("CURRENT.tmp")));
}

TEST_F(FaultInjectionFsTest, RenameFollowedByDirSyncSurvives) {
  MakeDurableFile("CURRENT", "MANIFEST-1\n");
  auto t = NewFile("CURRENT.tmp");
  ASSERT_OK(Append(t.get(), "MANIFEST-2\n"));
  ASSERT_OK(t->Sync(IOOptions(), nullptr));
  ASSERT_OK(t->Close(IOOptions(), nullptr));
  t.reset();
  ASSERT_OK(fs_->RenameFile(Path("CURRENT.tmp"), Path("CURRENT"), IOOptions(),
                            nullptr));
  ASSERT_OK(SyncDir());
  EXPECT_EQ(fs_->pending_dir_op_count(), 0u);
  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("CURRENT")), "MANIFEST-2\n");
  EXPECT_FALSE(Exists(Path("CURRENT.tmp")));
}

// A renamed file's unsynced tail is still dropped under its new name.
TEST_F(FaultInjectionFsTest, TrackingFollowsRenames) {
  auto f = NewFile("a");
  ASSERT_OK(Append(f.get(), "sync"));
  ASSERT_OK(f->Sync(IOOptions(), nullptr));
  ASSERT_OK(Append(f.get(), "lost"));
  ASSERT_OK(f->Close(IOOptions(), nullptr));
  f.reset();
  ASSERT_OK(fs_->RenameFile(Path("a"), Path("b"), IOOptions(), nullptr));
  ASSERT_OK(SyncDir());
  EXPECT_FALSE(fs_->GetFileInfo(Path("a")).has_value());
  EXPECT_EQ(fs_->GetFileInfo(Path("b"))->synced_size, 4u);
  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("b")), "sync");
}

TEST_F(FaultInjectionFsTest, RandomDropKeepsASyncedPrefix) {
  std::string content;
  for (int i = 0; i < 1000; ++i)
    content.push_back(static_cast<char>('a' + i % 26));
  std::set<uint64_t> sizes;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto f = NewFile("f");
    ASSERT_OK(Append(f.get(), content.substr(0, 300)));
    ASSERT_OK(f->Sync(IOOptions(), nullptr));
    ASSERT_OK(Append(f.get(), content.substr(300)));
    ASSERT_OK(f->Close(IOOptions(), nullptr));
    f.reset();
    ASSERT_OK(SyncDir());
    ASSERT_OK(fs_->DropRandomUnsyncedData(seed));
    std::string got = ReadWholeFile(Path("f"));
    ASSERT_GE(got.size(), 300u);
    ASSERT_LE(got.size(), 1000u);
    EXPECT_EQ(got, content.substr(0, got.size()));
    sizes.insert(got.size());
  }
  EXPECT_GT(sizes.size(), 1u);  // It does vary.
}

TEST_F(FaultInjectionFsTest, DropRefusesWhileAFileIsOpen) {
  auto f = NewFile("f");
  ASSERT_OK(Append(f.get(), "x"));
  EXPECT_CODE(fs_->DropUnsyncedData(), kFailedPrecondition);
  EXPECT_EQ(fs_->GetFileInfo(Path("f"))->open_handles, 1);
  f.reset();  // Destroying the handle closes it.
  ASSERT_OK(fs_->DropUnsyncedData());
}

TEST_F(FaultInjectionFsTest, ResetStateMakesEverythingDurable) {
  auto f = NewFile("f");
  ASSERT_OK(Append(f.get(), "unsynced"));
  ASSERT_OK(f->Close(IOOptions(), nullptr));
  f.reset();
  fs_->ResetState();  // A process crash keeps the page cache.
  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("f")), "unsynced");
}

TEST_F(FaultInjectionFsTest, ResetStateKeepsTrackingOpenFiles) {
  auto f = NewFile("f");
  ASSERT_OK(Append(f.get(), "before"));
  fs_->ResetState();
  ASSERT_OK(Append(f.get(), "after"));
  EXPECT_EQ(fs_->GetFileInfo(Path("f"))->synced_size, 6u);
  ASSERT_OK(f->Close(IOOptions(), nullptr));
  f.reset();
  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("f")), "before");
}

TEST_F(FaultInjectionFsTest, CrashAfterWritesTearsTheWriteAndCutsPower) {
  MakeDurableFile("old", "readable");
  std::unique_ptr<rocksdb::FSRandomAccessFile> reader;
  ASSERT_OK(fs_->NewRandomAccessFile(Path("old"), rocksdb::FileOptions(),
                                     &reader, nullptr));
  const uint64_t writes_before = fs_->write_count();
  int crashes = 0;
  auto f = NewFile("f");
  fs_->SetCrashAfterWrites(3, [&] {
    ++crashes;
    EXPECT_FALSE(fs_->IsActive());  // Already off when the callback runs.
  });
  ASSERT_OK(Append(f.get(), "aa"));
  ASSERT_OK(f->Sync(IOOptions(), nullptr));
  ASSERT_OK(Append(f.get(), "bb"));
  EXPECT_EQ(crashes, 0);
  rocksdb::IOStatus s = Append(f.get(), "cccc");
  EXPECT_TRUE(IsPowerLost(s)) << s.ToString();
  EXPECT_EQ(crashes, 1);
  EXPECT_TRUE(fs_->crashed());
  EXPECT_FALSE(fs_->IsActive());
  EXPECT_EQ(fs_->write_count() - writes_before, 3u);
  EXPECT_EQ(fs_->GetFileInfo(Path("f"))->size, 6u);  // 2 + 2 + torn 2.
  EXPECT_EQ(ReadWholeFile(Path("f")), "aabbcc");

  // Everything fails while the power is off, reads included.
  EXPECT_TRUE(IsPowerLost(Append(f.get(), "d")));
  EXPECT_TRUE(IsPowerLost(f->Sync(IOOptions(), nullptr)));
  EXPECT_TRUE(IsPowerLost(SyncDir()));
  std::unique_ptr<rocksdb::FSWritableFile> g;
  EXPECT_TRUE(IsPowerLost(
      fs_->NewWritableFile(Path("g"), rocksdb::FileOptions(), &g, nullptr)));
  EXPECT_FALSE(Exists(Path("g")));
  EXPECT_TRUE(IsPowerLost(fs_->FileExists(Path("old"), IOOptions(), nullptr)));
  EXPECT_TRUE(IsPowerLost(
      fs_->RenameFile(Path("old"), Path("new"), IOOptions(), nullptr)));
  EXPECT_TRUE(IsPowerLost(fs_->DeleteFile(Path("old"), IOOptions(), nullptr)));
  std::unique_ptr<rocksdb::FSSequentialFile> seq;
  EXPECT_TRUE(IsPowerLost(fs_->NewSequentialFile(
      Path("old"), rocksdb::FileOptions(), &seq, nullptr)));
  char scratch[16];
  rocksdb::Slice got;
  EXPECT_TRUE(
      IsPowerLost(reader->Read(0, 8, IOOptions(), &got, scratch, nullptr)));
  EXPECT_TRUE(IsPowerLost(f->Close(IOOptions(), nullptr)));
  EXPECT_EQ(crashes, 1);  // Fires once.
  f.reset();

  ASSERT_OK(fs_->DropUnsyncedData());
  fs_->SetActive(true);
  ASSERT_OK(reader->Read(0, 8, IOOptions(), &got, scratch, nullptr));
  EXPECT_EQ(got.ToString(), "readable");
  EXPECT_FALSE(Exists(Path("f")));  // Its directory was never fsynced.
}

TEST_F(FaultInjectionFsTest, CrashingSyncHasNoEffect) {
  auto f = NewFile("f");
  ASSERT_OK(SyncDir());
  const uint64_t syncs_before = fs_->sync_count();
  int crashes = 0;
  fs_->SetCrashAfterSyncs(2, [&] { ++crashes; });
  ASSERT_OK(Append(f.get(), "a"));
  ASSERT_OK(f->Sync(IOOptions(), nullptr));
  ASSERT_OK(Append(f.get(), "b"));
  EXPECT_TRUE(IsPowerLost(f->Fsync(IOOptions(), nullptr)));
  EXPECT_EQ(crashes, 1);
  EXPECT_EQ(fs_->sync_count() - syncs_before, 2u);
  EXPECT_EQ(fs_->GetFileInfo(Path("f"))->synced_size, 1u);
  f.reset();
  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_EQ(ReadWholeFile(Path("f")), "a");
}

TEST_F(FaultInjectionFsTest, DirectoryFsyncIsACrashPoint) {
  auto f = NewFile("f");
  ASSERT_OK(f->Sync(IOOptions(), nullptr));
  f.reset();
  bool crashed = false;
  fs_->SetCrashAfterSyncs(1, [&] { crashed = true; });
  EXPECT_TRUE(IsPowerLost(SyncDir()));
  EXPECT_TRUE(crashed);
  EXPECT_EQ(fs_->pending_dir_op_count(), 1u);
  ASSERT_OK(fs_->DropUnsyncedData());
  EXPECT_FALSE(Exists(Path("f")));
}

TEST_F(FaultInjectionFsTest, DisarmAndRearm) {
  auto f = NewFile("f");
  fs_->SetCrashAfterWrites(1);
  fs_->DisarmCrash();
  ASSERT_OK(Append(f.get(), "a"));
  fs_->SetCrashAfterWrites(2);
  fs_->SetCrashAfterSyncs(1);  // Replaces the write crash point.
  ASSERT_OK(Append(f.get(), "b"));
  ASSERT_OK(Append(f.get(), "c"));
  EXPECT_TRUE(IsPowerLost(f->Sync(IOOptions(), nullptr)));
  EXPECT_TRUE(fs_->crashed());
}

// ---------------------------------------------------------------------------
// With a real RocksDB.

TEST_F(FaultInjectionFsTest, SyncedWritesSurvivePowerLoss) {
  ASSERT_OK(Open());
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(Put("k" + std::to_string(i), "v" + std::to_string(i), true));
  }
  PowerLoss();
  ASSERT_OK(Open());
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(Get("k" + std::to_string(i)), "v" + std::to_string(i)) << i;
  }
}

TEST_F(FaultInjectionFsTest, UnsyncedWritesAfterTheLastSyncAreLost) {
  ASSERT_OK(Open());
  ASSERT_OK(Put("a", "1", /*sync=*/true));
  ASSERT_OK(Put("b", "2", /*sync=*/false));
  ASSERT_OK(Put("c", "3", /*sync=*/false));
  EXPECT_EQ(Get("b"), "2");  // Visible before the crash.
  PowerLoss();
  ASSERT_OK(Open());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), std::nullopt);
  EXPECT_EQ(Get("c"), std::nullopt);
  // The DB keeps working after recovery, and a later sync covers earlier
  // unsynced writes of the same WAL.
  ASSERT_OK(Put("d", "4", /*sync=*/false));
  ASSERT_OK(Put("e", "5", /*sync=*/true));
  PowerLoss();
  ASSERT_OK(Open());
  EXPECT_EQ(Get("d"), "4");
  EXPECT_EQ(Get("e"), "5");
}

TEST_F(FaultInjectionFsTest, SyncWalMakesEarlierWritesDurable) {
  ASSERT_OK(Open());
  ASSERT_OK(Put("a", "1", /*sync=*/false));
  ASSERT_OK(db_->SyncWAL());
  ASSERT_OK(Put("b", "2", /*sync=*/false));
  PowerLoss();
  ASSERT_OK(Open());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), std::nullopt);
}

TEST_F(FaultInjectionFsTest, ProcessCrashKeepsUnsyncedWrites) {
  ASSERT_OK(Open());
  ASSERT_OK(Put("a", "1", /*sync=*/false));
  db_.reset();
  fs_->ResetState();  // kill -9: the page cache survives.
  ASSERT_OK(Open());
  EXPECT_EQ(Get("a"), "1");
}

TEST_F(FaultInjectionFsTest, InactiveFsFailsWritesCleanly) {
  ASSERT_OK(Open());
  ASSERT_OK(Put("a", "1", /*sync=*/true));
  ASSERT_OK(Put("pending", "x", /*sync=*/false));
  fs_->SetActive(false);
  rocksdb::Status s = Put("b", "2", /*sync=*/true);
  EXPECT_TRUE(IsPowerLost(s)) << s.ToString();
  EXPECT_FALSE(Put("c", "3", /*sync=*/false).ok());
  EXPECT_FALSE(db_->Flush(rocksdb::FlushOptions()).ok());
  // Not db_->SyncWAL(): after a WAL write error RocksDB 7.8 reaches
  // assert(sync_without_flush_called_) in WritableFileWriter, and Debian's
  // librocksdb is built with assertions on (fixed upstream by
  // facebook/rocksdb#12448). Callers must not SyncWAL after a failed write.
  // Closing a DB whose file system has no power: errors, no crash, no leak
  // (LeakSanitizer checks the latter in the sanitizer build).
  EXPECT_FALSE(db_->Close().ok());
  db_.reset();
  ASSERT_OK(fs_->DropUnsyncedData());
  fs_->SetActive(true);
  ASSERT_OK(Open());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("pending"), std::nullopt);
  EXPECT_EQ(Get("b"), std::nullopt);
  EXPECT_EQ(Get("c"), std::nullopt);
}

TEST_F(FaultInjectionFsTest, DbDestructorWithInactiveFsAndDirtyMemtable) {
  ASSERT_OK(Open());
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(Put("k" + std::to_string(i), std::string(100, 'v'), false));
  }
  fs_->SetActive(false);
  db_.reset();  // No Close() first; the destructor copes with the errors.
  ASSERT_OK(fs_->DropUnsyncedData());
  fs_->SetActive(true);
  ASSERT_OK(Open());
  EXPECT_EQ(Get("k0"), std::nullopt);
}

TEST_F(FaultInjectionFsTest, CrashCallbackFiresOnceAtTheCrashPoint) {
  ASSERT_OK(Open());
  ASSERT_OK(Put("a", "1", /*sync=*/true));
  int crashes = 0;
  fs_->SetCrashAfterSyncs(1, [&] { ++crashes; });
  EXPECT_TRUE(IsPowerLost(Put("b", "2", /*sync=*/true)));
  EXPECT_EQ(crashes, 1);
  EXPECT_FALSE(Put("c", "3", /*sync=*/true).ok());
  EXPECT_EQ(crashes, 1);
  PowerLoss();
  ASSERT_OK(Open());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), std::nullopt);  // Its WAL sync never happened.
}

// The crash tears a WAL record: the torn tail is real (a strict recovery
// refuses it) and point-in-time recovery drops the whole record.
TEST_F(FaultInjectionFsTest, TornWalRecordIsDroppedWhole) {
  ASSERT_OK(Open());
  ASSERT_OK(Put("a", "1", /*sync=*/true));
  fs_->SetCrashAfterWrites(1);
  rocksdb::WriteBatch batch;
  ASSERT_OK(batch.Put("b", std::string(50000, 'b')));
  ASSERT_OK(batch.Put("c", "3"));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  EXPECT_TRUE(IsPowerLost(db_->Write(wo, &batch)));
  db_.reset();
  fs_->ResetState();  // Process crash: the torn half stays in the WAL.

  rocksdb::Status s = Open(WALRecoveryMode::kAbsoluteConsistency);
  EXPECT_FALSE(s.ok()) << "expected the torn tail to be detected";
  ASSERT_OK(Open(WALRecoveryMode::kPointInTimeRecovery));
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), std::nullopt);
  EXPECT_EQ(Get("c"), std::nullopt);
}

// Why pgring uses kPointInTimeRecovery: after a real power cut the unsynced
// WAL tail can hold stale blocks, not just be short. Here the tail looks like
// a record header with a bad checksum. kTolerateCorruptedTailRecords refuses
// to open; point-in-time recovery stops at the last good record. (The model
// above never writes garbage; this test adds it by hand.)
TEST_F(FaultInjectionFsTest, GarbageWalTailNeedsPointInTimeRecovery) {
  ASSERT_OK(Open());
  ASSERT_OK(Put("a", "1", /*sync=*/true));
  db_.reset();
  fs_->ResetState();
  std::string wal;
  for (const auto& e : std::filesystem::directory_iterator(db_path_)) {
    if (e.path().extension() == ".log") wal = e.path().string();
  }
  ASSERT_FALSE(wal.empty());
  {
    // checksum (4) | length (2, little-endian) = 16 | type 1 (full) | data.
    std::ofstream out(wal, std::ios::binary | std::ios::app);
    const char header[7] = {'\xde', '\xad', '\xbe', '\xef', 16, 0, 1};
    out.write(header, sizeof(header));
    out.write(std::string(16, '\xab').data(), 16);
  }
  rocksdb::Status s = Open(WALRecoveryMode::kTolerateCorruptedTailRecords);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  ASSERT_OK(Open(WALRecoveryMode::kPointInTimeRecovery));
  EXPECT_EQ(Get("a"), "1");
}

// ---------------------------------------------------------------------------
// Crash at every write / every sync of a small workload. Whatever the crash
// point and whatever the crash keeps, the reopened DB holds a prefix of the
// batches: every batch whose synced write was acknowledged, plus possibly
// the one in flight, and never part of a batch.

constexpr int kBatches = 8;
constexpr int kKeysPerBatch = 5;
constexpr int kBigBatch = 3;  // ~100 KiB: spans several 32 KiB WAL blocks.
constexpr int kFlushAfter =
    4;  // Flush after this batch: SST, MANIFEST, new WAL.

enum class CrashPoint { kWrite, kSync };
enum class Loss {
  kPowerLoss,         // DropUnsyncedData()
  kPartialWriteBack,  // DropRandomUnsyncedData()
  kProcessCrash,      // Nothing lost (page cache survives).
};

std::string BatchKey(int batch, int key) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "b%02d/k%d", batch, key);
  return buf;
}

std::string BatchValue(int batch, int key) {
  std::string v = "v" + std::to_string(batch) + "." + std::to_string(key);
  if (batch == kBigBatch) v.append(20000, static_cast<char>('a' + key));
  return v;
}

class CrashPointTest : public FaultInjectionFsTest,
                       public ::testing::WithParamInterface<
                           std::tuple<CrashPoint, WALRecoveryMode>> {
 protected:
  CrashPoint crash_point() const { return std::get<0>(GetParam()); }
  WALRecoveryMode mode() const { return std::get<1>(GetParam()); }

  // Opens a fresh DB and commits the batches with sync=true, flushing once;
  // stops at the first failure. Returns how many batches were acknowledged.
  int RunWorkload(uint64_t* big_batch_writes = nullptr,
                  bool* open_failed = nullptr) {
    if (!Open(mode()).ok()) {
      if (open_failed != nullptr) *open_failed = true;
      return 0;
    }
    int acked = 0;
    for (int b = 0; b < kBatches; ++b) {
      rocksdb::WriteBatch batch;
      for (int k = 0; k < kKeysPerBatch; ++k) {
        EXPECT_OK(batch.Put(BatchKey(b, k), BatchValue(b, k)));
      }
      EXPECT_OK(batch.Put("head", std::to_string(b)));
      rocksdb::WriteOptions wo;
      wo.sync = true;
      const uint64_t writes_before = fs_->write_count();
      if (!db_->Write(wo, &batch).ok()) return acked;
      if (b == kBigBatch && big_batch_writes != nullptr) {
        *big_batch_writes = fs_->write_count() - writes_before;
      }
      ++acked;
      if (b == kFlushAfter && !db_->Flush(rocksdb::FlushOptions()).ok()) {
        return acked;
      }
    }
    return acked;
  }

  // Reopens without faults and checks the prefix property; sets *present
  // to the number of batches found.
  void Verify(int acked, const std::string& where, int* present_out) {
    SCOPED_TRACE(where);
    rocksdb::Status s = Open(mode());
    ASSERT_TRUE(s.ok()) << "reopen after crash: " << s.ToString();
    std::map<int, int> keys_per_batch;
    std::optional<std::string> head;
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key = it->key().ToString();
      if (key == "head") {
        head = it->value().ToString();
        continue;
      }
      int b = -1, k = -1;
      ASSERT_EQ(std::sscanf(key.c_str(), "b%d/k%d", &b, &k), 2) << key;
      ASSERT_EQ(it->value().ToString(), BatchValue(b, k)) << key;
      ++keys_per_batch[b];
    }
    ASSERT_OK(it->status());
    it.reset();
    int present = 0;
    for (const auto& [b, n] : keys_per_batch) {
      ASSERT_EQ(n, kKeysPerBatch) << "partial batch " << b;
      ASSERT_EQ(b, present) << "batches are not a prefix";
      ++present;
    }
    if (present == 0) {
      EXPECT_EQ(head, std::nullopt);
    } else {
      EXPECT_EQ(head, std::to_string(present - 1));
    }
    *present_out = present;
    EXPECT_GE(present, acked) << "an acknowledged batch was lost";
    EXPECT_LE(present, acked + 1) << "more than the in-flight batch appeared";
    // And the recovered DB takes new synced writes.
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ASSERT_OK(db_->Put(wo, "after-recovery", "ok"));
    db_.reset();
  }

  void FreshStart() {
    db_.reset();
    fs_->ResetState();
    std::filesystem::remove_all(db_path_);
  }
};

TEST_P(CrashPointTest, EveryCrashPointLeavesAPrefixOfWholeBatches) {
  // A small write buffer makes a big WAL record reach the file in several
  // appends, so crash points also fall inside a record (with the default
  // 1 MiB buffer only the torn half of the crashing append does that).
  writable_file_max_buffer_size_ = 16 << 10;
  // Hundreds of DB lifetimes: the model needs no real fsync.
  fs_->set_skip_real_syncs(true);
  // Dry run: how many crash points are there? (Background threads can shift
  // which operation the n-th one is by a little between runs; the property
  // checked holds for every n, so that does not matter.)
  FreshStart();
  uint64_t big_batch_writes = 0;
  ASSERT_EQ(RunWorkload(&big_batch_writes), kBatches);
  const uint64_t points = crash_point() == CrashPoint::kWrite
                              ? fs_->write_count()
                              : fs_->sync_count();
  db_.reset();
  ASSERT_GT(points, static_cast<uint64_t>(kBatches));
  // The big batch reaches the file in several appends, so some crash points
  // fall inside one WAL record, not only between records.
  EXPECT_GE(big_batch_writes, 2u);

  int runs = 0;
  int crashed_runs = 0;
  int crashed_in_open = 0;
  int in_flight_survived = 0;
  for (uint64_t n = 1; n <= points + 1; ++n) {
    for (Loss loss :
         {Loss::kPowerLoss, Loss::kPartialWriteBack, Loss::kProcessCrash}) {
      const std::string where = "crash point " + std::to_string(n) + " of " +
                                std::to_string(points) + ", loss " +
                                std::to_string(static_cast<int>(loss));
      FreshStart();
      int crashes = 0;
      auto on_crash = [&] { ++crashes; };
      if (crash_point() == CrashPoint::kWrite) {
        fs_->SetCrashAfterWrites(n, on_crash);
      } else {
        fs_->SetCrashAfterSyncs(n, on_crash);
      }
      bool open_failed = false;
      const int acked = RunWorkload(nullptr, &open_failed);
      // Usually n <= points fires and n == points + 1 does not (a power cut
      // after the last write), but the count can differ by one or two from
      // the dry run's, so check what happened rather than what was planned.
      ASSERT_LE(crashes, 1) << where;
      ASSERT_EQ(fs_->crashed(), crashes == 1) << where;
      if (crashes == 0) {
        ASSERT_EQ(acked, kBatches) << where;
      } else {
        ++crashed_runs;
      }
      fs_->SetActive(false);
      db_.reset();
      switch (loss) {
        case Loss::kPowerLoss:
          ASSERT_OK(fs_->DropUnsyncedData());
          break;
        case Loss::kPartialWriteBack:
          ASSERT_OK(fs_->DropRandomUnsyncedData(n));
          break;
        case Loss::kProcessCrash:
          break;
      }
      fs_->ResetState();
      int present = 0;
      Verify(acked, where, &present);
      if (::testing::Test::HasFatalFailure()) return;
      ++runs;
      if (open_failed) ++crashed_in_open;
      if (present > acked) ++in_flight_survived;
    }
  }
  // The enumeration covered what it claims to.
  std::printf(
      "  %llu crash points, %d runs, %d crashed: %d inside DB::Open, "
      "%d kept the in-flight batch\n",
      static_cast<unsigned long long>(points), runs, crashed_runs,
      crashed_in_open, in_flight_survived);
  EXPECT_GE(crashed_runs, static_cast<int>(3 * (points - 2)));
  EXPECT_GT(crashed_in_open, 0);
  // A process crash at a WAL sync keeps a whole, unacknowledged batch. (At a
  // write crash point the in-flight batch is torn, so it survives only when
  // the crash hits a later MANIFEST append, which depends on timing.)
  if (crash_point() == CrashPoint::kSync) {
    EXPECT_GT(in_flight_survived, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, CrashPointTest,
    ::testing::Combine(
        ::testing::Values(CrashPoint::kWrite, CrashPoint::kSync),
        ::testing::Values(WALRecoveryMode::kPointInTimeRecovery,
                          WALRecoveryMode::kTolerateCorruptedTailRecords)),
    [](const auto& info) {
      std::string name =
          std::get<0>(info.param) == CrashPoint::kWrite ? "Write" : "Sync";
      name += std::get<1>(info.param) == WALRecoveryMode::kPointInTimeRecovery
                  ? "_PointInTime"
                  : "_TolerateTail";
      return name;
    });

}  // namespace
}  // namespace pgring::testing
