#include "data_file.h"

namespace pgring::fio {

absl::StatusOr<std::unique_ptr<DataFile>> DataFile::Open(const std::string& path, bool use_io_uring,
                                                         uint32_t queue_depth,
                                                         bool flush_before_commit) {
  DeviceOptions o;
  o.io_engine = use_io_uring ? IoEngine::kIoUring : IoEngine::kPsync;
  o.io_queue_depth = queue_depth;
  o.exclusive_lock = false;
  auto dev = Device::Open(path, o);
  if (!dev.ok()) return dev.status();
  return std::unique_ptr<DataFile>(new DataFile(path, std::move(*dev), flush_before_commit));
}

DataFile::DataFile(std::string path, std::shared_ptr<Device> dev, bool flush_before_commit)
    : path_(std::move(path)), dev_(std::move(dev)), flush_before_commit_(flush_before_commit) {
  if (flush_before_commit_) flusher_ = std::thread([this] { FlusherLoop(); });
}

DataFile::~DataFile() {
  {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return in_flight_ == 0; });
    stop_ = true;
  }
  cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  // Joins the device's threads, so no completion callback still runs when
  // mu_ and cv_ go.
  dev_.reset();
}

void DataFile::Finished() {
  std::lock_guard<std::mutex> lk(mu_);
  if (--in_flight_ == 0) cv_.notify_all();
}

void DataFile::Write(uint64_t offset, const char* data, size_t len, std::shared_ptr<CommitGate> gate) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    ++in_flight_;
    ++started_;
  }
  requests_.Issued(0, offset, len);
  dev_->WriteAsync(offset, std::string_view(data, len), [this, gate = std::move(gate)](absl::Status s) {
    if (s.ok() && flush_before_commit_) {
      {
        std::lock_guard<std::mutex> lk(mu_);
        ++completed_;
        if (to_flush_.empty()) {
          oldest_ = std::chrono::steady_clock::now();
          started_at_oldest_ = started_;
        }
        to_flush_.push_back(gate);
      }
      cv_.notify_all();
      return;  // the flusher opens the gate and calls Finished()
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      ++completed_;
    }
    cv_.notify_all();
    gate->Open(std::move(s));
    Finished();
  });
}

void DataFile::FlusherLoop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !to_flush_.empty(); });
    if (to_flush_.empty()) return;  // stop_ and nothing left
    // Let the writes in flight join this flush, for a little while.
    cv_.wait_until(lk, oldest_ + kFlushCoalesce,
                   [&] { return stop_ || completed_ >= started_at_oldest_; });
    std::vector<std::shared_ptr<CommitGate>> batch;
    batch.swap(to_flush_);
    lk.unlock();
    // Every write in `batch` completed before this flush started, so the
    // flush makes all of them durable.
    absl::Status s = dev_->Flush();
    for (auto& g : batch) g->Open(s);
    lk.lock();
    in_flight_ -= batch.size();
    if (in_flight_ == 0) cv_.notify_all();
  }
}

absl::Status DataFile::Read(uint64_t offset, char* buf, size_t len) {
  return dev_->Read(offset, absl::Span<char>(buf, len));
}

}  // namespace pgring::fio
