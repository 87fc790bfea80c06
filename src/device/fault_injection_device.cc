// fault_injection_device.cc — power loss, torn writes and failed operations
// over a base BlockDevice.
#include "device/fault_injection_device.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_format.h"

namespace pgring {
namespace {

const std::string kDeviceName = "fault-injection device";

int KindIndex(FaultInjectionDevice::OpKind kind) {
  return static_cast<int>(kind);
}

}  // namespace

FaultInjectionDevice::FaultInjectionDevice(std::shared_ptr<BlockDevice> base)
    : base_(std::move(base)),
      size_(base_->size()),
      block_size_(base_->logical_block_size()) {}

absl::Status FaultInjectionDevice::PowerLostError(const char* what,
                                                  uint64_t offset) const {
  return absl::UnavailableError(absl::StrFormat(
      "%s %s at offset %d refused: power lost (simulated) at op %d", what,
      kDeviceName, offset, op_count_));
}

absl::Status FaultInjectionDevice::BeginOpLocked(const char* what,
                                                 uint64_t offset,
                                                 bool* crashed_now) {
  ++op_count_;
  if (crashed_) return PowerLostError(what, offset);
  if (crash_at_op_ != 0 && op_count_ == crash_at_op_) {
    crash_at_op_ = 0;
    crashed_ = true;
    *crashed_now = true;
    return PowerLostError(what, offset);
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionDevice::InjectedFailureLocked(OpKind kind) {
  FailSchedule& f = fail_[KindIndex(kind)];
  if (f.count == 0) return absl::OkStatus();
  if (f.skip > 0) {
    --f.skip;
    return absl::OkStatus();
  }
  --f.count;
  // A fresh Status each time (code and message), so no refcounted payload is
  // shared between the threads that receive it.
  return absl::Status(f.error.code(), f.error.message());
}

void FaultInjectionDevice::RunOnCrash() {
  std::function<void()> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hook = on_crash_;
  }
  if (hook) hook();
}

absl::Status FaultInjectionDevice::Read(uint64_t offset, absl::Span<char> buf) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (crashed_) return PowerLostError("read", offset);
    absl::Status s = CheckIoArgs(kDeviceName, "read", offset, buf.size(),
                                 buf.data(), block_size_, size_);
    if (!s.ok()) return s;
    s = InjectedFailureLocked(OpKind::kRead);
    if (!s.ok()) return s;
  }
  return base_->Read(offset, buf);
}

absl::Status FaultInjectionDevice::TrackedWriteLocked(uint64_t offset,
                                                      const char* data,
                                                      uint64_t length) {
  if (length == 0) return absl::OkStatus();
  const uint64_t first = offset / block_size_;
  const uint64_t blocks = length / block_size_;

  // The durable content of each block this write touches first since the
  // last flush: what the disk holds if the write never reaches it.
  bool any_new = false;
  for (uint64_t b = first; b < first + blocks && !any_new; ++b) {
    any_new = history_.find(b) == history_.end();
  }
  if (any_new) {
    AlignedBuffer before(length);
    absl::Status s = base_->Read(offset, before.span());
    if (!s.ok()) return s;
    for (uint64_t i = 0; i < blocks; ++i) {
      if (history_.find(first + i) == history_.end()) {
        history_[first + i].durable.assign(before.data() + i * block_size_,
                                           block_size_);
      }
    }
  }

  absl::Status s = base_->Write(offset, absl::MakeConstSpan(data, length));
  if (!s.ok()) return s;
  bytes_written_.fetch_add(length, std::memory_order_relaxed);
  writes_.fetch_add(1, std::memory_order_relaxed);
  for (uint64_t i = 0; i < blocks; ++i) {
    history_[first + i].versions.emplace_back(data + i * block_size_,
                                              block_size_);
  }
  return absl::OkStatus();
}

void FaultInjectionDevice::WriteAsync(uint64_t offset,
                                      std::shared_ptr<AlignedBuffer> buf,
                                      IoCallback done) {
  const uint64_t length = buf == nullptr ? 0 : buf->size();
  const char* data = buf == nullptr ? nullptr : buf->data();
  bool crashed_now = false;
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = BeginOpLocked("write", offset, &crashed_now);
    if (status.ok()) {
      status = CheckIoArgs(kDeviceName, "write", offset, length, data,
                           block_size_, size_);
    }
    if (status.ok()) status = InjectedFailureLocked(OpKind::kWrite);
    if (status.ok()) {
      const uint64_t blocks = length / block_size_;
      if (tear_armed_ && blocks > tear_keep_blocks_) {
        tear_armed_ = false;
        const uint64_t kept = uint64_t{tear_keep_blocks_} * block_size_;
        status = TrackedWriteLocked(offset, data, kept);
        if (status.ok()) {
          crashed_ = true;
          crashed_now = true;
          status = absl::UnavailableError(absl::StrFormat(
              "write %s at offset %d (%d bytes) torn after %d blocks: power "
              "lost (simulated) at op %d",
              kDeviceName, offset, length, tear_keep_blocks_, op_count_));
        }
      } else {
        status = TrackedWriteLocked(offset, data, length);
      }
    }
  }
  if (crashed_now) RunOnCrash();
  done(std::move(status));
}

absl::Status FaultInjectionDevice::Flush() {
  bool crashed_now = false;
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = BeginOpLocked("flush", 0, &crashed_now);
    if (status.ok()) status = InjectedFailureLocked(OpKind::kFlush);
    if (status.ok()) {
      status = base_->Flush();
      if (status.ok()) {
        history_.clear();  // everything written so far is durable now
        flushes_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  if (crashed_now) RunOnCrash();
  return status;
}

void FaultInjectionDevice::SetCrashAfterOps(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  crash_at_op_ = n == 0 ? 0 : op_count_ + n;
}

void FaultInjectionDevice::TearNextWrite(uint32_t keep_blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  tear_armed_ = true;
  tear_keep_blocks_ = keep_blocks;
}

void FaultInjectionDevice::CrashNow() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (crashed_) return;
    crashed_ = true;
  }
  RunOnCrash();
}

void FaultInjectionDevice::SetOnCrash(std::function<void()> on_crash) {
  std::lock_guard<std::mutex> lock(mu_);
  on_crash_ = std::move(on_crash);
}

void FaultInjectionDevice::FailOps(OpKind kind, uint64_t skip, uint64_t count,
                                   absl::Status error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error.ok()) {
    error = absl::InternalError("injected failure (FailOps with an OK status)");
  }
  fail_[KindIndex(kind)] = FailSchedule{skip, count, std::move(error)};
}

absl::Status FaultInjectionDevice::MakeCrashImage(CrashImage mode,
                                                  uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  // mt19937_64 is specified exactly by the standard, so a seed names the
  // same image on every platform (absl::BitGen makes no such promise).
  std::mt19937_64 rng(seed);
  for (const auto& [block, h] : history_) {
    const std::string* pick = &h.durable;
    switch (mode) {
      case CrashImage::kDropUnflushed:
        break;
      case CrashImage::kKeepAll:
        if (!h.versions.empty()) pick = &h.versions.back();
        break;
      case CrashImage::kRandomPerBlock: {
        const uint64_t k = rng() % (h.versions.size() + 1);
        if (k > 0) pick = &h.versions[k - 1];
        break;
      }
    }
    absl::Status s = base_->Write(block * block_size_, *pick);
    if (!s.ok()) return s;
  }
  history_.clear();
  crashed_ = false;
  crash_at_op_ = 0;
  tear_armed_ = false;
  for (FailSchedule& f : fail_) f = FailSchedule{};
  return absl::OkStatus();
}

uint64_t FaultInjectionDevice::op_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return op_count_;
}

bool FaultInjectionDevice::crashed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return crashed_;
}

uint64_t FaultInjectionDevice::unflushed_blocks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return history_.size();
}

std::vector<std::string> FaultInjectionDevice::BlockCandidates(
    uint64_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  auto it = history_.find(offset / block_size_);
  if (it == history_.end()) return out;
  out.push_back(it->second.durable);
  out.insert(out.end(), it->second.versions.begin(), it->second.versions.end());
  return out;
}

}  // namespace pgring
