// MkfsOptions::rocksdb_env and Options::rocksdb_env (pgring/options.h): the
// RocksDB pgring opens itself does its file I/O through the given Env — the
// files it creates go through a wrapping FileSystem, an in-memory Env keeps
// them off the disk — and the store holds the Env while it is open. An
// embedder's RocksDB keeps its own Env: the option is refused with it. The
// same for MkfsOptions::rocksdb_options and Options::rocksdb_options: the
// RocksDB options of pgring's own RocksDB (BlueStore's by default), applied
// at mkfs and at each open, refused by name when RocksDB does not know them,
// and refused with an embedder's RocksDB.
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pgring/device.h"
#include "pgring/store.h"
#include "store/store_core.h"
#include "util/test_util.h"

namespace pgring::testing {
namespace {

// Remembers the name of every file opened for writing through it.
class FileNameRecorder : public rocksdb::FileSystemWrapper {
 public:
  FileNameRecorder() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "FileNameRecorder"; }
  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& opts,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      names_.push_back(std::filesystem::path(fname).filename().string());
    }
    return FileSystemWrapper::NewWritableFile(fname, opts, result, dbg);
  }
  std::vector<std::string> names() {
    std::lock_guard<std::mutex> l(mu_);
    return names_;
  }
  // Whether a file whose name contains `part` was opened for writing.
  bool Saw(const std::string& part) {
    for (const std::string& n : names()) {
      if (n.find(part) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> names_;
};

class RocksDbEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dev = Device::InMemory(16 << 20);
    ASSERT_OK(dev);
    device_ = *dev;
    mkfs_.chunk_size = 64 << 10;
    options_.log_sink = NullLogSink();
  }
  MetadataLocation Meta() const { return MetadataLocation::OwnDb(db_path_); }
  // An embedder's own RocksDB at db_path_ (null, with a failure, if it
  // does not open).
  std::unique_ptr<rocksdb::DB> OpenEmbedderDb() const {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    const rocksdb::Status s = rocksdb::DB::Open(o, db_path_, &raw);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return std::unique_ptr<rocksdb::DB>(raw);
  }
  static absl::Status CreateAndAppend(Store* s) {
    Transaction t;
    t.CreatePg(PgId{1, 1, -1});
    t.AppendEntry(PgId{1, 1, -1}, Version{1, 1}, "entry");
    return s->Commit(std::move(t));
  }

  TempDir dir_;
  const std::string db_path_ = dir_.Join("db");
  std::shared_ptr<Device> device_;
  MkfsOptions mkfs_;
  Options options_;
};

TEST_F(RocksDbEnvTest, TheDbsFilesGoThroughTheEnvsFileSystem) {
  auto fs = std::make_shared<FileNameRecorder>();
  mkfs_.rocksdb_env = rocksdb::NewCompositeEnv(fs);
  ASSERT_OK(Mkfs(device_, Meta(), mkfs_));
  EXPECT_TRUE(fs->Saw("MANIFEST-")) << "mkfs wrote no MANIFEST through the Env";
  EXPECT_TRUE(fs->Saw(".log")) << "mkfs wrote no WAL through the Env";
  const size_t after_mkfs = fs->names().size();

  options_.rocksdb_env = rocksdb::NewCompositeEnv(fs);
  auto store = Store::Open(device_, Meta(), options_);
  ASSERT_OK(store);
  ASSERT_OK(CreateAndAppend(store->get()));
  // Open makes a new WAL and MANIFEST, through the Env again.
  EXPECT_GT(fs->names().size(), after_mkfs);
  ASSERT_OK((*store)->Close());
  store->reset();

  // Without the option nothing goes through it.
  const size_t before = fs->names().size();
  options_.rocksdb_env = nullptr;
  store = Store::Open(device_, Meta(), options_);
  ASSERT_OK(store);
  EXPECT_EQ(fs->names().size(), before);
}

// rocksdb::NewMemEnv keeps the DB in memory: nothing on the disk at the
// path, the store reopens from the Env, and without it there is no DB.
TEST_F(RocksDbEnvTest, AnInMemoryEnvKeepsTheDbOffTheDisk) {
  std::shared_ptr<rocksdb::Env> mem(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  mkfs_.rocksdb_env = mem;
  options_.rocksdb_env = mem;
  ASSERT_OK(Mkfs(device_, Meta(), mkfs_));
  {
    auto store = Store::Open(device_, Meta(), options_);
    ASSERT_OK(store);
    ASSERT_OK(CreateAndAppend(store->get()));
  }
  EXPECT_FALSE(std::filesystem::exists(db_path_ + "/CURRENT"));
  auto store = Store::Open(device_, Meta(), options_);
  ASSERT_OK(store);
  auto entries = (*store)->ReadEntries(PgId{1, 1, -1});
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].payload, "entry");
  store->reset();
  options_.rocksdb_env = nullptr;
  EXPECT_CODE(Store::Open(device_, Meta(), options_), kNotFound);
}

// The caller may drop its reference: the store holds the Env until it is
// destroyed, and lets it go then.
TEST_F(RocksDbEnvTest, TheStoreHoldsTheEnvWhileOpen) {
  std::shared_ptr<rocksdb::Env> mem(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  std::weak_ptr<rocksdb::Env> watch = mem;
  mkfs_.rocksdb_env = mem;
  ASSERT_OK(Mkfs(device_, Meta(), mkfs_));
  mkfs_.rocksdb_env = nullptr;
  options_.rocksdb_env = std::move(mem);
  auto store = Store::Open(device_, Meta(), options_);
  ASSERT_OK(store);
  options_.rocksdb_env = nullptr;
  ASSERT_FALSE(watch.expired());
  ASSERT_OK(CreateAndAppend(store->get()));
  ASSERT_OK((*store)->Close());
  EXPECT_FALSE(watch.expired());
  store->reset();
  EXPECT_TRUE(watch.expired());
}

TEST_F(RocksDbEnvTest, AnEmbeddersDbRefusesIt) {
  std::unique_ptr<rocksdb::DB> db = OpenEmbedderDb();
  ASSERT_NE(db, nullptr);
  const MetadataLocation shared = MetadataLocation::SharedDb(db.get(), db->DefaultColumnFamily());
  std::shared_ptr<rocksdb::Env> mem(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  mkfs_.rocksdb_env = mem;
  EXPECT_CODE(Mkfs(device_, shared, mkfs_), kInvalidArgument);
  mkfs_.rocksdb_env = nullptr;
  ASSERT_OK(Mkfs(device_, shared, mkfs_));
  options_.rocksdb_env = mem;
  EXPECT_CODE(Store::Open(device_, shared, options_), kInvalidArgument);
  options_.rocksdb_env = nullptr;
  EXPECT_OK(Store::Open(device_, shared, options_));
}

// Each open applies its own options over RocksDB's defaults: BlueStore's
// unless told otherwise, a later pair overriding an earlier one.
TEST_F(RocksDbEnvTest, RocksDbOptionsApplyAtEachOpen) {
  mkfs_.rocksdb_options = std::string(kBlueStoreRocksDbOptions) + ",write_buffer_size=1048576";
  ASSERT_OK(Mkfs(device_, Meta(), mkfs_));
  {
    auto store = Store::Open(device_, Meta(), options_);
    ASSERT_OK(store);
    const rocksdb::Options o = CoreOf(**store).metadata_db().db()->GetOptions();
    EXPECT_EQ(o.write_buffer_size, 16u << 20);  // BlueStore's, not mkfs's
    EXPECT_EQ(o.compression, rocksdb::kNoCompression);
    EXPECT_EQ(o.min_write_buffer_number_to_merge, 32);
    ASSERT_OK(CreateAndAppend(store->get()));
  }
  options_.rocksdb_options = std::string(kBlueStoreRocksDbOptions) +
                             ",compression=kLZ4Compression;write_buffer_size=4194304";
  auto store = Store::Open(device_, Meta(), options_);
  ASSERT_OK(store);
  const rocksdb::Options o = CoreOf(**store).metadata_db().db()->GetOptions();
  EXPECT_EQ(o.compression, rocksdb::kLZ4Compression);
  EXPECT_EQ(o.write_buffer_size, 4u << 20);
  EXPECT_EQ(o.max_write_buffer_number, 64);
  auto entries = (*store)->ReadEntries(PgId{1, 1, -1});
  ASSERT_OK(entries);
  EXPECT_EQ(entries->size(), 1u);
}

TEST_F(RocksDbEnvTest, UnknownRocksDbOptionsAreRefusedByName) {
  mkfs_.rocksdb_options = "write_buffer_size=1048576,no_such_option=1";
  absl::Status s = Mkfs(device_, Meta(), mkfs_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("no_such_option"), std::string::npos) << s;
  mkfs_.rocksdb_options = kBlueStoreRocksDbOptions;
  ASSERT_OK(Mkfs(device_, Meta(), mkfs_));
  options_.rocksdb_options = "write_buffer_size=lots";
  auto store = Store::Open(device_, Meta(), options_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument) << store.status();
  EXPECT_NE(store.status().message().find("write_buffer_size=lots"), std::string::npos)
      << store.status();
  options_.rocksdb_options = kBlueStoreRocksDbOptions;
  EXPECT_OK(Store::Open(device_, Meta(), options_));
}

TEST_F(RocksDbEnvTest, AnEmbeddersDbRefusesRocksDbOptions) {
  std::unique_ptr<rocksdb::DB> db = OpenEmbedderDb();
  ASSERT_NE(db, nullptr);
  const MetadataLocation shared = MetadataLocation::SharedDb(db.get(), db->DefaultColumnFamily());
  mkfs_.rocksdb_options = "write_buffer_size=1048576";
  EXPECT_CODE(Mkfs(device_, shared, mkfs_), kInvalidArgument);
  mkfs_.rocksdb_options = kBlueStoreRocksDbOptions;
  ASSERT_OK(Mkfs(device_, shared, mkfs_));
  options_.rocksdb_options = "";
  EXPECT_CODE(Store::Open(device_, shared, options_), kInvalidArgument);
  options_.rocksdb_options = kBlueStoreRocksDbOptions;
  EXPECT_OK(Store::Open(device_, shared, options_));
}

}  // namespace
}  // namespace pgring::testing
