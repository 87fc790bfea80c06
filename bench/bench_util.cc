#include "bench_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <map>

#include <rocksdb/env.h>
#include <rocksdb/statistics.h>

#include "absl/strings/str_cat.h"
#include "pgring/device.h"

namespace pgring::bench {
namespace {

std::string& ScratchPath() {
  static std::string* path = new std::string;
  return *path;
}

// O_DIRECT wants an aligned buffer.
constexpr size_t kDirectIoAlignment = 4096;

// A ticker's count from the "pgring.rocksdb_tickers" property.
uint64_t Ticker(const std::map<std::string, std::string>& tickers, rocksdb::Tickers t) {
  for (const auto& [ticker, name] : rocksdb::TickersNameMap) {
    if (ticker != t) continue;
    auto it = tickers.find(name);
    return it == tickers.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
  }
  return 0;
}

}  // namespace

const std::string& ScratchDir() {
  std::string& path = ScratchPath();
  if (path.empty()) {
    const char* env = std::getenv("PGRING_BENCH_DIR");
    std::filesystem::path root =
        env != nullptr && *env != '\0' ? std::filesystem::path(env)
                                       : std::filesystem::temp_directory_path();
    path = (root / absl::StrCat("pgring-bench-", getpid())).string();
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  return path;
}

void RemoveScratch() {
  std::string& path = ScratchPath();
  if (!path.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    path.clear();
  }
}

absl::Status EnsureZeroFile(const std::string& path, uint64_t size) {
  constexpr uint64_t kStep = 4 << 20;
  size = (size + kStep - 1) / kStep * kStep;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return absl::InternalError(absl::StrCat("stat ", path, ": ", std::strerror(errno)));
  }
  // Files this function made are multiples of kStep; start from there.
  uint64_t have = static_cast<uint64_t>(st.st_size) / kStep * kStep;
  std::unique_ptr<char, decltype(&std::free)> zeros(
      static_cast<char*>(std::aligned_alloc(kDirectIoAlignment, kStep)), &std::free);
  if (zeros == nullptr) {
    close(fd);
    return absl::ResourceExhaustedError("no memory for a zero buffer");
  }
  std::memset(zeros.get(), 0, kStep);
  for (uint64_t off = have; off < size; off += kStep) {
    ssize_t n = pwrite(fd, zeros.get(), kStep, static_cast<off_t>(off));
    if (n != static_cast<ssize_t>(kStep)) {
      int e = errno;
      close(fd);
      return absl::InternalError(absl::StrCat("write ", path, ": ", n < 0 ? std::strerror(e) : "short write"));
    }
  }
  int rc = have < size ? fdatasync(fd) : 0;
  close(fd);
  if (rc != 0) return absl::InternalError(absl::StrCat("fdatasync ", path));
  return absl::OkStatus();
}

const char* DeviceName(DeviceKind d) { return d == DeviceKind::kMemory ? "mem" : "file"; }
const char* BackendName(Backend b) { return b == Backend::kRing ? "ring" : "rocksdb"; }

RocksDbCounters RocksDbCounters::operator-(const RocksDbCounters& o) const {
  RocksDbCounters d;
  d.wal_bytes = wal_bytes - o.wal_bytes;
  d.flush_bytes = flush_bytes - o.flush_bytes;
  d.compact_bytes = compact_bytes - o.compact_bytes;
  d.keys_written = keys_written - o.keys_written;
  d.wal_syncs = wal_syncs - o.wal_syncs;
  d.available = available && o.available;
  return d;
}

BenchStore::BenchStore(const BenchStoreConfig& config) : config_(config) {}

absl::StatusOr<std::unique_ptr<BenchStore>> BenchStore::Create(const BenchStoreConfig& config) {
  static std::atomic<int> serial{0};
  std::unique_ptr<BenchStore> b(new BenchStore(config));
  const int n = serial.fetch_add(1);
  b->db_path_ = absl::StrCat(ScratchDir(), "/db-", n);
  const MetadataLocation meta = MetadataLocation::OwnDb(b->db_path_);
  MkfsOptions m;
  m.backend = config.backend;
  m.chunk_size = config.chunk_size;
  m.force = true;
  Options o = config.options;
  if (o.log_sink == nullptr) o.log_sink = NullLogSink();
  if (config.device == DeviceKind::kMemory) {
    std::shared_ptr<rocksdb::Env> mem_env(rocksdb::NewMemEnv(rocksdb::Env::Default()));
    m.rocksdb_env = mem_env;
    o.rocksdb_env = mem_env;
    auto device = Device::InMemory(config.device_size);
    if (!device.ok()) return device.status();
    if (absl::Status s = Mkfs(*device, meta, m); !s.ok()) return s;
    auto store = Store::Open(*device, meta, o);
    if (!store.ok()) return store.status();
    b->store_ = std::move(store).value();
  } else {
    const std::string part = ScratchDir() + "/log.part";
    if (absl::Status s = EnsureZeroFile(part, config.device_size); !s.ok()) return s;
    m.size = config.device_size;
    if (absl::Status s = Mkfs(part, meta, m); !s.ok()) return s;
    auto store = Store::Open(part, meta, o);
    if (!store.ok()) return store.status();
    b->store_ = std::move(store).value();
  }
  return b;
}

BenchStore::~BenchStore() {
  if (store_) (void)store_->Close();
  store_.reset();
  if (config_.device == DeviceKind::kFile) {
    std::error_code ec;
    std::filesystem::remove_all(db_path_, ec);
  }
}

RocksDbCounters BenchStore::rocksdb_counters() const {
  RocksDbCounters c;
  std::map<std::string, std::string> tickers;
  if (!store_->GetMapProperty("pgring.rocksdb_tickers", &tickers)) return c;
  c.wal_bytes = Ticker(tickers, rocksdb::WAL_FILE_BYTES);
  c.flush_bytes = Ticker(tickers, rocksdb::FLUSH_WRITE_BYTES);
  c.compact_bytes = Ticker(tickers, rocksdb::COMPACT_WRITE_BYTES);
  c.keys_written = Ticker(tickers, rocksdb::NUMBER_KEYS_WRITTEN);
  c.wal_syncs = Ticker(tickers, rocksdb::WAL_FILE_SYNCED);
  c.available = true;
  return c;
}

CommitCallback InFlight::Acquire() {
  {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return outstanding_ < depth_; });
    ++outstanding_;
  }
  return [this](absl::Status s) { Release(s); };
}

void InFlight::Cancel() { Release(absl::OkStatus()); }

void InFlight::Release(const absl::Status& s) {
  std::lock_guard<std::mutex> l(mu_);
  if (!s.ok() && status_.ok()) status_ = s;
  --outstanding_;
  // Under the lock: once outstanding_ reaches 0 the waiter may return from
  // Drain() and destroy this object. One thread waits (the submitter).
  cv_.notify_one();
}

void InFlight::Drain() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return outstanding_ == 0; });
}

absl::Status InFlight::status() {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

}  // namespace pgring::bench
