// fault_injection_device.cc — power loss, torn writes and failed operations
// over a base BlockDevice.
#include "device/fault_injection_device.h"

#include <algorithm>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"

namespace pgring {
namespace {

const std::string kDeviceName = "fault-injection device";

int KindIndex(FaultInjectionDevice::OpKind kind) {
  return static_cast<int>(kind);
}

}  // namespace

FaultInjectionDevice::FaultInjectionDevice(std::shared_ptr<BlockDevice> base,
                                           const Options& options)
    : base_(std::move(base)),
      size_(base_->size()),
      block_size_(base_->logical_block_size()),
      options_(options),
      cache_(block_size_, options.tear_unit),
      rng_(options.seed) {
  if (options_.timed) completions_ = std::make_unique<DelayedTaskThread>("fault-complete");
}

FaultInjectionDevice::~FaultInjectionDevice() {
  // Every write's `done` runs exactly once, before the device goes.
  if (completions_) completions_->WaitIdle();
}

std::chrono::microseconds FaultInjectionDevice::DelayLocked(std::chrono::microseconds lo,
                                                            std::chrono::microseconds hi) {
  if (hi <= lo) return lo;
  return lo + std::chrono::microseconds(rng_() % static_cast<uint64_t>((hi - lo).count() + 1));
}

void FaultInjectionDevice::LoseDataLocked() {
  crashed_ = true;
  stats_.writes_in_flight_at_crash = cache_.in_flight();
  stats_.flushes_in_progress_at_crash = flushes_running_;
}

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
    LoseDataLocked();
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
  const uint64_t id = next_write_id_++;
  absl::Status s = cache_.Issue(id, offset, data, length, base_.get());
  if (!s.ok()) return s;
  s = base_->Write(offset, absl::MakeConstSpan(data, length));
  if (!s.ok()) {
    cache_.Abandon(id);
    return s;
  }
  cache_.Complete(id);
  bytes_written_.fetch_add(length, std::memory_order_relaxed);
  writes_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

void FaultInjectionDevice::CompleteTimedWrite(uint64_t id, uint64_t offset,
                                              const std::shared_ptr<AlignedBuffer>& buf,
                                              const IoCallback& done) {
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (crashed_) {
      // Lost in flight: the crash image decides whether it landed.
      status = absl::UnavailableError(absl::StrFormat(
          "write %s at offset %d (%d bytes) was in flight: power lost (simulated) at op %d",
          kDeviceName, offset, buf->size(), op_count_));
    } else {
      status = base_->Write(offset, absl::MakeConstSpan(buf->data(), buf->size()));
      if (status.ok()) {
        cache_.Complete(id);
        bytes_written_.fetch_add(buf->size(), std::memory_order_relaxed);
        writes_.fetch_add(1, std::memory_order_relaxed);
      } else {
        cache_.Abandon(id);
      }
    }
  }
  done(std::move(status));
}

void FaultInjectionDevice::WriteAsync(uint64_t offset,
                                      std::shared_ptr<AlignedBuffer> buf,
                                      IoCallback done) {
  const uint64_t length = buf == nullptr ? 0 : buf->size();
  const char* data = buf == nullptr ? nullptr : buf->data();
  bool crashed_now = false;
  bool complete_inline = !options_.timed;
  absl::Status status;
  // Timed: the write in flight (id != 0) and when it completes.
  uint64_t id = 0;
  std::chrono::microseconds delay{0};
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = BeginOpLocked("write", offset, &crashed_now);
    if (status.ok()) {
      status = CheckIoArgs(kDeviceName, "write", offset, length, data,
                           block_size_, size_);
      // Argument errors are reported inline, as by every device.
      complete_inline |= !status.ok();
    }
    if (status.ok()) status = InjectedFailureLocked(OpKind::kWrite);
    if (status.ok()) {
      const uint64_t blocks = length / block_size_;
      if (tear_armed_ && blocks > tear_keep_blocks_) {
        tear_armed_ = false;
        const uint64_t kept = uint64_t{tear_keep_blocks_} * block_size_;
        status = TrackedWriteLocked(offset, data, kept);
        if (status.ok()) {
          LoseDataLocked();
          crashed_now = true;
          status = absl::UnavailableError(absl::StrFormat(
              "write %s at offset %d (%d bytes) torn after %d blocks: power "
              "lost (simulated) at op %d",
              kDeviceName, offset, length, tear_keep_blocks_, op_count_));
        }
      } else if (!options_.timed) {
        status = TrackedWriteLocked(offset, data, length);
      } else if (length > 0) {
        id = next_write_id_++;
        status = cache_.Issue(id, offset, data, length, base_.get());
        if (!status.ok()) id = 0;
        stats_.max_writes_in_flight = std::max(stats_.max_writes_in_flight, cache_.in_flight());
      }
    }
    if (!complete_inline) {
      delay = DelayLocked(options_.min_write_delay, options_.max_write_delay);
    }
  }
  if (crashed_now) RunOnCrash();
  if (complete_inline) {
    done(std::move(status));
    return;
  }
  const auto due = DelayedTaskThread::Clock::now() + delay;
  if (id == 0) {
    // Refused (power lost, injected failure, tear) or empty: reported from
    // the completion thread like any completion.
    completions_->Schedule(due, [done = std::move(done), status = std::move(status)]() mutable {
      done(std::move(status));
    });
    return;
  }
  completions_->Schedule(due, [this, id, offset, buf = std::move(buf), done = std::move(done)] {
    CompleteTimedWrite(id, offset, buf, done);
  });
}

absl::Status FaultInjectionDevice::Flush() {
  bool crashed_now = false;
  absl::Status status;
  uint64_t mark = 0;
  uint64_t power_on = 0;
  std::chrono::microseconds delay{0};
  {
    std::lock_guard<std::mutex> lock(mu_);
    power_on = power_ons_;
    status = BeginOpLocked("flush", 0, &crashed_now);
    if (status.ok()) status = InjectedFailureLocked(OpKind::kFlush);
    if (status.ok()) {
      // Covers what completed before now, and nothing after.
      mark = cache_.FlushBegin();
      if (options_.timed) {
        delay = DelayLocked(std::chrono::microseconds(0), options_.max_flush_delay);
        ++flushes_running_;
      } else {
        // Inline: the flush is one instant (no crash falls inside it).
        status = FinishFlushLocked(mark);
      }
    }
  }
  if (crashed_now) RunOnCrash();
  if (!status.ok() || !options_.timed) return status;
  // The flush in progress: writes go on completing (not covered), and the
  // power may go.
  std::this_thread::sleep_for(delay);
  std::lock_guard<std::mutex> lock(mu_);
  --flushes_running_;
  // The power went meanwhile (and may even be back, after a crash image).
  if (crashed_ || power_ons_ != power_on) {
    return absl::UnavailableError(absl::StrFormat(
        "flush %s was in progress: power lost (simulated) at op %d", kDeviceName, op_count_));
  }
  return FinishFlushLocked(mark);
}

absl::Status FaultInjectionDevice::FinishFlushLocked(uint64_t mark) {
  absl::Status status = base_->Flush();
  if (status.ok()) {
    cache_.FlushDone(mark);
    flushes_.fetch_add(1, std::memory_order_relaxed);
  }
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
    LoseDataLocked();
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
  if (options_.timed) {
    // The power goes first, so that no write completes while the image is
    // made; then every completion (the power-lost errors) is delivered, so
    // that none runs into the revived device.
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!crashed_) LoseDataLocked();
    }
    completions_->WaitIdle();
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status s = cache_.WriteImage(mode, seed, base_.get(),
                                     &stats_.blocks_torn_inside_by_last_image);
  if (!s.ok()) return s;
  crashed_ = false;
  ++power_ons_;
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
  return cache_.blocks();
}

std::vector<std::string> FaultInjectionDevice::BlockCandidates(
    uint64_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.Candidates(offset / block_size_);
}

FaultInjectionDevice::ModelStats FaultInjectionDevice::model_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ModelStats st = stats_;
  st.writes_in_flight = cache_.in_flight();
  st.flushes_in_progress = flushes_running_;
  return st;
}

}  // namespace pgring
