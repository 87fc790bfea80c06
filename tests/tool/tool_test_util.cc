#include "tool_test_util.h"

#include <fcntl.h>
#include <poll.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/str_format.h"
#include "log/ring_layout.h"
#include "util/embedder_db.h"

extern char** environ;

namespace pgring::testing {

nlohmann::json ToolRun::json() const {
  nlohmann::json j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "stdout is not JSON:\n" << out << "\nstderr:\n" << err;
  return j;
}

ToolRun RunTool(const std::vector<std::string>& args, int timeout_seconds,
                const std::string& stdin_path) {
  ToolRun r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  std::vector<std::string> argv_s = {PGRING_TOOL_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, PGRING_TOOL_BIN, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ADD_FAILURE() << "posix_spawn " << PGRING_TOOL_BIN << ": " << std::strerror(rc);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(std::min<long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof(buf));
      if (got > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  EXPECT_FALSE(r.timed_out) << "pgring-tool hung: " << ::testing::PrintToString(args);
  EXPECT_FALSE(WIFSIGNALED(status) && !r.timed_out)
      << "pgring-tool died of signal " << WTERMSIG(status) << ": " << ::testing::PrintToString(args)
      << "\nstderr:\n"
      << r.err;
  return r;
}

// ---------------------------------------------------------------------------

namespace {

// The families of a ToolStore's embedder's RocksDB (util/embedder_db.h)
// besides the default one: one more of the embedder's, and pgring's
// (handle 2).
std::vector<std::string> EmbedderFamilies(const std::string& pgring_family) {
  return {"other", pgring_family};
}

}  // namespace

ToolStore::ToolStore(Backend backend, uint64_t size, std::string column_family)
    : column_family_(std::move(column_family)) {
  dev_ = dir_.Join("partition");
  db_ = dir_.Join("db");
  MakeFile(dev_, size);
  MkfsOptions m;
  m.chunk_size = kChunkSize;
  m.backend = backend;
  if (column_family_.empty()) {
    absl::Status s = Mkfs(dev_, MetadataLocation::OwnDb(db_), m);
    EXPECT_TRUE(s.ok()) << s;
    return;
  }
  EmbedderDb e(db_, EmbedderFamilies(column_family_));
  if (e.db() == nullptr) return;  // EmbedderDb failed the test
  // The embedder's own keys, beside pgring's: the tool must not see them.
  rocksdb::WriteOptions wo;
  wo.sync = true;
  EXPECT_TRUE(e.db()->Put(wo, e.handle(0), "osd_superblock", "embedder's").ok());
  EXPECT_TRUE(e.db()->Put(wo, e.handle(1), "pgring.meta", "not pgring's").ok());
  absl::Status s = Mkfs(dev_, e.location(2), m);
  EXPECT_TRUE(s.ok()) << s;
}

void ToolStore::WithStore(const Options& options, const std::function<void(Store*)>& fn) const {
  Options o = options;
  o.log_sink = NullLogSink();
  o.io_engine = IoEngine::kPsync;
  std::unique_ptr<EmbedderDb> e;
  MetadataLocation where = MetadataLocation::OwnDb(db_);
  if (!column_family_.empty()) {
    e = std::make_unique<EmbedderDb>(db_, EmbedderFamilies(column_family_));
    where = e->location(2);
  }
  auto s = Store::Open(dev_, where, o);
  ASSERT_TRUE(s.ok()) << s.status();
  fn(s->get());
  absl::Status c = (*s)->Close();
  EXPECT_TRUE(c.ok()) << c;
}

std::vector<std::string> ToolStore::Args(std::vector<std::string> args) const {
  std::vector<std::string> out = {"--dev", dev_, "--db", db_};
  if (!column_family_.empty()) {
    out.push_back("--column-family");
    out.push_back(column_family_);
  }
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

std::unique_ptr<Store> ToolStore::Open(RecoveryPolicy policy) const {
  Options o;
  // Per-PG rings (a version-1 store): the per-PG goldens; the stream's
  // tests open with StreamLayoutOptions().
  o.log_layout = LogLayout::kPerPgRings;
  o.log_sink = NullLogSink();
  o.io_engine = IoEngine::kPsync;
  o.recovery_policy = policy;
  auto s = Store::Open(dev_, MetadataLocation::OwnDb(db_), o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

std::unique_ptr<Store> ToolStore::Open(const Options& options) const {
  Options o = options;
  o.log_sink = NullLogSink();
  o.io_engine = IoEngine::kPsync;
  auto s = Store::Open(dev_, MetadataLocation::OwnDb(db_), o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

Options StreamLayoutOptions() {
  Options o;
  o.log_layout = LogLayout::kStream;
  o.stream.max_chunks = 2;
  o.stream.home_bytes = 4096;  // one block of the partition file
  o.stream.bypass_when_idle = false;  // the tests commit one at a time
  return o;
}

PgId PgA() { return PgId{1, 0x0, -1}; }
PgId PgB() { return PgId{1, 0x1, -1}; }
PgId PgC() { return PgId{2, 0x1f, -1}; }
PgId PgD() { return PgId{1, 0x2, -1}; }

void ToolStore::Populate() const {
  Options o;
  o.log_layout = LogLayout::kPerPgRings;  // as Open()
  WithStore(o, [](Store* store) { PopulateStore(store); });
}

void PopulateStore(Store* store) {
  auto commit = [&](Transaction t) {
    absl::Status s = store->Commit(std::move(t));
    ASSERT_TRUE(s.ok()) << s;
  };
  {
    Transaction t;
    for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) t.CreatePg(pg);
    commit(std::move(t));
  }
  {
    Transaction t;
    for (uint64_t v = 1; v <= 10; ++v) t.AppendEntry(PgA(), {1, v}, absl::StrFormat("a-%02d", v));
    t.SetInfo(PgA(), "info-A-1");
    commit(std::move(t));
  }
  {
    Transaction t;
    for (uint64_t v = 11; v <= 20; ++v) t.AppendEntry(PgA(), {1, v}, absl::StrFormat("a-%02d", v));
    for (uint64_t v = 1; v <= 3; ++v) t.AppendDup(PgA(), {1, v}, absl::StrFormat("dup-%d", v));
    t.SetInfo(PgA(), "info-A-2");
    commit(std::move(t));
  }
  // PG B: 12 batches of 50 entries of ~300 bytes, trimmed to the newest 150:
  // about three chunks' worth written, so the ring turns (lap > 0).
  for (uint64_t batch = 0; batch < 12; ++batch) {
    Transaction t;
    for (uint64_t v = batch * 50 + 1; v <= batch * 50 + 50; ++v) {
      std::string p = absl::StrFormat("b-%04d-", v);
      p.resize(300, static_cast<char>('a' + v % 26));
      t.AppendEntry(PgB(), {2, v}, p);
    }
    if (batch * 50 + 50 > 150) t.Trim(PgB(), {2, batch * 50 + 50 - 150});
    if (batch % 4 == 0) t.SetInfo(PgB(), absl::StrFormat("info-B-%d", batch));
    commit(std::move(t));
  }
  {
    Transaction t;
    for (uint64_t v = 1; v <= 10; ++v) t.AppendEntry(PgD(), {1, v}, absl::StrFormat("d-%02d", v));
    t.AppendDup(PgD(), {1, 5}, "dup-5");
    t.AppendDup(PgD(), {1, 6}, "dup-6");
    commit(std::move(t));
  }
  {
    Transaction t;
    t.Rewind(PgD(), {1, 7});
    t.AppendEntry(PgD(), {2, 8}, "d-2-08");
    t.AppendEntry(PgD(), {2, 9}, "d-2-09");
    t.TrimDups(PgD(), {1, 5});
    t.SetInfo(PgD(), "info-D");
    commit(std::move(t));
  }
}

void ToolStore::PopulateStream(const std::function<void()>& before_last) const {
  auto store = Open(StreamLayoutOptions());
  ASSERT_NE(store, nullptr);
  auto commit = [&](Transaction t) {
    absl::Status s = store->Commit(std::move(t));
    ASSERT_TRUE(s.ok()) << s;
  };
  {
    Transaction t;
    for (const PgId& pg : {PgA(), PgB(), PgC(), PgD()}) t.CreatePg(pg);
    commit(std::move(t));
  }
  // PG B: 6 batches of 40 entries of ~300 bytes (three blocks each, homed
  // whole), trimmed to the newest 100.
  for (uint64_t batch = 0; batch < 6; ++batch) {
    Transaction t;
    for (uint64_t v = batch * 40 + 1; v <= batch * 40 + 40; ++v) {
      std::string p = absl::StrFormat("b-%04d-", v);
      p.resize(300, static_cast<char>('a' + v % 26));
      t.AppendEntry(PgB(), {2, v}, p);
    }
    if (batch * 40 + 40 > 100) t.Trim(PgB(), {2, batch * 40 + 40 - 100});
    if (batch % 2 == 0) t.SetInfo(PgB(), absl::StrFormat("info-B-%d", batch));
    commit(std::move(t));
  }
  {
    Transaction t;
    for (uint64_t v = 1; v <= 10; ++v) t.AppendEntry(PgD(), {1, v}, absl::StrFormat("d-%02d", v));
    t.AppendDup(PgD(), {1, 5}, "dup-5");
    t.AppendDup(PgD(), {1, 6}, "dup-6");
    commit(std::move(t));
  }
  {
    Transaction t;
    t.Rewind(PgD(), {1, 7});
    t.AppendEntry(PgD(), {2, 8}, "d-2-08");
    t.AppendEntry(PgD(), {2, 9}, "d-2-09");
    t.TrimDups(PgD(), {1, 5});
    t.SetInfo(PgD(), "info-D");
    commit(std::move(t));
  }
  {
    Transaction t;
    for (uint64_t v = 1; v <= 10; ++v) t.AppendEntry(PgA(), {1, v}, absl::StrFormat("a-%02d", v));
    t.SetInfo(PgA(), "info-A-1");
    commit(std::move(t));
  }
  if (before_last) {
    ASSERT_TRUE(store->Close().ok());
    store.reset();
    before_last();
    store = Open(StreamLayoutOptions());
    ASSERT_NE(store, nullptr);
  }
  {
    Transaction t;
    for (uint64_t v = 11; v <= 20; ++v) t.AppendEntry(PgA(), {1, v}, absl::StrFormat("a-%02d", v));
    for (uint64_t v = 1; v <= 3; ++v) t.AppendDup(PgA(), {1, v}, absl::StrFormat("dup-%d", v));
    t.SetInfo(PgA(), "info-A-2");
    commit(std::move(t));
  }
  absl::Status s = store->Close();
  ASSERT_TRUE(s.ok()) << s;
}

std::string ToolStore::ReadDevice(uint64_t offset, uint64_t n) const {
  std::ifstream f(dev_, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  std::string out(n, '\0');
  f.read(out.data(), static_cast<std::streamsize>(n));
  out.resize(static_cast<size_t>(f.gcount()));
  return out;
}

void ToolStore::WriteDevice(uint64_t offset, const std::string& bytes) const {
  int fd = ::open(dev_.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
            static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

void ToolStore::FlipDeviceByte(uint64_t offset) const {
  std::string b = ReadDevice(offset, 1);
  ASSERT_EQ(b.size(), 1u);
  b[0] = static_cast<char>(b[0] ^ 0x5a);
  WriteDevice(offset, b);
}

std::map<std::string, std::string> ToolStore::DbContents() const {
  std::map<std::string, std::string> out;
  rocksdb::DBOptions o;
  std::vector<std::string> families;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(o, db_, &families);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return out;
  std::vector<rocksdb::ColumnFamilyDescriptor> d;
  for (const auto& f : families) d.emplace_back(f, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  s = rocksdb::DB::OpenForReadOnly(o, db_, d, &handles, &raw);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return out;
  for (auto* h : handles) {
    const std::string prefix =
        h->GetName() == rocksdb::kDefaultColumnFamilyName ? "" : h->GetName() + ":";
    std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(rocksdb::ReadOptions(), h));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out[prefix + it->key().ToString()] = it->value().ToString();
  }
  for (auto* h : handles) EXPECT_TRUE(raw->DestroyColumnFamilyHandle(h).ok());
  delete raw;
  return out;
}

void ToolStore::PutDbValue(const std::string& key, const std::string& value) const {
  rocksdb::Options o;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, db_, &raw);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  ASSERT_TRUE(db->Put(wo, key, value).ok());
  ASSERT_TRUE(db->Close().ok());
}

void ToolStore::DeleteDbKey(const std::string& key) const {
  rocksdb::Options o;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, db_, &raw);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  ASSERT_TRUE(db->Delete(wo, key).ok());
  ASSERT_TRUE(db->Close().ok());
}

PgPointer ToolStore::Pointer(const PgId& pg) const {
  auto c = DbContents();
  auto p = PgPointer::Decode(c[PgPointerKey(pg)]);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : PgPointer();
}

PgChunkList ToolStore::Chunks(const PgId& pg) const {
  auto c = DbContents();
  auto p = PgChunkList::Decode(c[PgChunksKey(pg)]);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : PgChunkList();
}

void ToolStore::SetChunks(const PgId& pg, const PgChunkList& c) const {
  PutDbValue(PgChunksKey(pg), c.Encode());
}

uint64_t ToolStore::DeviceOffset(const PgId& pg, uint64_t lpos) const {
  Geometry g;
  g.chunk_size = kChunkSize;
  g.chunk_count = 1u << 20;
  ChunkPos cp = Locate(Chunks(pg), g, lpos);
  EXPECT_GE(cp.chunk, 0);
  return 4096 + static_cast<uint64_t>(cp.chunk) * kChunkSize + cp.offset;
}

StreamPointer ToolStore::StreamPtr() const {
  auto p = StreamPointer::Decode(DbContents()[std::string(kStreamPointerKey)]);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : StreamPointer();
}

PgChunkList ToolStore::StreamChunks() const {
  auto c = PgChunkList::Decode(DbContents()[std::string(kStreamChunksKey)]);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : PgChunkList();
}

uint64_t ToolStore::StreamDeviceOffset(uint64_t lpos) const {
  Geometry g;
  g.chunk_size = kChunkSize;
  g.chunk_count = 1u << 20;
  ChunkPos cp = Locate(StreamChunks(), g, lpos);
  EXPECT_GE(cp.chunk, 0);
  return 4096 + static_cast<uint64_t>(cp.chunk) * kChunkSize + cp.offset;
}

std::string ToolStore::DeviceBytes() const {
  std::ifstream f(dev_, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> ToolStore::Files() const {
  std::map<std::string, std::string> out;
  for (auto& e : std::filesystem::recursive_directory_iterator(db_)) {
    if (!e.is_regular_file()) continue;
    std::ifstream f(e.path(), std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    out[e.path().string()] = ss.str();
  }
  return out;
}

// ---------------------------------------------------------------------------

std::string Normalize(const std::string& text, const std::string& dir) {
  static const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  // Label CRCs cover the (random) UUID.
  static const std::regex label_crc("stored [0-9a-f]{8}, computed [0-9a-f]{8}");
  std::string s = std::regex_replace(text, uuid, "<UUID>");
  s = std::regex_replace(s, label_crc, "stored <CRC>, computed <CRC>");
  if (!dir.empty()) {
    for (size_t p = s.find(dir); p != std::string::npos; p = s.find(dir, p)) {
      s.replace(p, dir.size(), "<DIR>");
    }
  }
  return s;
}

std::string MaskRocksDbSize(const std::string& s) {
  static const std::regex text("rocksdb: [0-9]+ bytes on disk \\([0-9.\\-]+ per payload byte\\)");
  static const std::regex json1("\"rocksdb_bytes\": [0-9]+");
  static const std::regex json2("\"rocksdb_bytes_per_payload_byte\": [0-9.e+\\-]+");
  std::string out =
      std::regex_replace(s, text, "rocksdb: <N> bytes on disk (<R> per payload byte)");
  out = std::regex_replace(out, json1, "\"rocksdb_bytes\": <N>");
  return std::regex_replace(out, json2, "\"rocksdb_bytes_per_payload_byte\": <R>");
}

void ExpectGolden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(PGRING_TOOL_GOLDEN_DIR) + "/" + name;
  const char* update = std::getenv("PGRING_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << actual;
    return;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f.good()) << "missing golden file " << path
                        << " (run with PGRING_UPDATE_GOLDEN=1 to create it)";
  std::ostringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(actual, ss.str()) << "output differs from " << path
                              << " (PGRING_UPDATE_GOLDEN=1 rewrites it)";
}

namespace {
std::vector<std::string> Kinds(const nlohmann::json& j, const char* field) {
  std::vector<std::string> out;
  if (!j.contains(field)) return out;
  for (const auto& p : j[field]) {
    std::string k = p["kind"].get<std::string>();
    if (!p["pg"].is_null()) k += "@" + p["pg"].get<std::string>();
    out.push_back(k);
  }
  return out;
}
}  // namespace

std::vector<std::string> ProblemKinds(const nlohmann::json& fsck) {
  return Kinds(fsck, "problems");
}
std::vector<std::string> NoteKinds(const nlohmann::json& fsck) { return Kinds(fsck, "notes"); }

}  // namespace pgring::testing
