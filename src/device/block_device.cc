// block_device.cc — the parts of BlockDevice shared by every implementation:
// the synchronous Write() helper and the common argument checks.
#include "device/block_device.h"

#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pgring {

absl::Status BlockDevice::Write(uint64_t offset, absl::Span<const char> data) {
  auto buf = std::make_shared<AlignedBuffer>(data.size());
  if (!data.empty()) std::memcpy(buf->data(), data.data(), data.size());

  // The completion state lives in a shared_ptr rather than on this stack
  // frame: the callback may still be unwinding on a device thread after the
  // waiter has woken up and returned. (std::mutex rather than absl::Mutex
  // throughout the device layer: Debian's libabsl is not built with TSan, so
  // TSan cannot see absl::Mutex, while it does see pthread-based locks.)
  struct Completion {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;    // guarded by mu
    absl::Status status;  // guarded by mu
  };
  auto completion = std::make_shared<Completion>();
  WriteAsync(offset, std::move(buf), [completion](absl::Status s) {
    std::lock_guard<std::mutex> lock(completion->mu);
    completion->status = std::move(s);
    completion->done = true;
    completion->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(completion->mu);
  completion->cv.wait(lock, [&] { return completion->done; });
  // Moved, not copied: a copy would share the status' refcounted payload
  // with the Completion that the device thread may free, and the refcount
  // lives in uninstrumented libabsl, so TSan would see a race.
  return std::move(completion->status);
}

namespace {

// Each write through WriteAsync at once; Wait waits for their callbacks (on
// the device's thread, or inline), then runs the caller's.
class CallbackCallerWrites final : public CallerWrites {
 public:
  CallbackCallerWrites(BlockDevice* device, bool durable) : device_(device), durable_(durable) {}
  ~CallbackCallerWrites() override { Wait().IgnoreError(); }

  void Start(uint64_t offset, std::shared_ptr<AlignedBuffer> buf, IoCallback done) override {
    size_t index;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      index = state_->statuses.size();
      state_->statuses.emplace_back();
      ++state_->pending;
    }
    dones_.push_back(std::move(done));
    device_->WriteAsync(offset, std::move(buf), [state = state_, index](absl::Status s) {
      std::lock_guard<std::mutex> lock(state->mu);
      state->statuses[index] = std::move(s);
      if (--state->pending == 0) state->cv.notify_all();
    });
  }

  absl::Status Wait() override {
    std::vector<absl::Status> statuses;
    {
      std::unique_lock<std::mutex> lock(state_->mu);
      state_->cv.wait(lock, [&] { return state_->pending == 0; });
      // Moved out, not copied (see Write above).
      statuses = std::move(state_->statuses);
      state_->statuses.clear();
    }
    std::vector<IoCallback> dones = std::move(dones_);
    dones_.clear();
    if (durable_ && !statuses.empty()) {
      // Durable when done: the flush comes before any callback hears of
      // its write, and a write it did not make durable fails.
      absl::Status f = device_->Flush();
      if (!f.ok()) {
        f = WriteThroughFlushError(f);
        for (absl::Status& st : statuses) {
          if (st.ok()) st = f;
        }
      }
    }
    absl::Status first;
    for (size_t i = 0; i < statuses.size(); ++i) {
      if (!statuses[i].ok() && first.ok()) first = statuses[i];
      if (dones[i]) dones[i](std::move(statuses[i]));
    }
    return first;
  }

 private:
  // Shared with the callbacks, which may still be unwinding on a device
  // thread after Wait has returned.
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    int pending = 0;                    // guarded by mu
    std::vector<absl::Status> statuses;  // one per write since Wait; guarded by mu
  };
  BlockDevice* const device_;
  const bool durable_;
  const std::shared_ptr<State> state_ = std::make_shared<State>();
  std::vector<IoCallback> dones_;  // the caller's, one per write since Wait
};

}  // namespace

absl::Status WriteThroughFlushError(const absl::Status& flush) {
  return absl::Status(flush.code(), absl::StrCat("write-through flush: ", flush.message()));
}

absl::Status BlockDevice::ReadMany(absl::Span<const ReadRequest> reads) {
  for (const ReadRequest& r : reads) {
    absl::Status s = Read(r.offset, r.buf);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

std::unique_ptr<CallerWrites> BlockDevice::NewCallerWrites(bool durable) {
  return std::make_unique<CallbackCallerWrites>(this, durable);
}

absl::Status BlockDevice::CheckIoArgs(const std::string& device, const char* op,
                                      uint64_t offset, uint64_t length,
                                      const void* data, uint32_t block_size,
                                      uint64_t device_size) {
  if (offset % block_size != 0 || length % block_size != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s %s at offset %d, length %d: offset and length must be multiples "
        "of the %d-byte logical block",
        op, device, offset, length, block_size));
  }
  if (length != 0 && reinterpret_cast<uintptr_t>(data) % block_size != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s %s at offset %d: buffer address %p is not aligned to the %d-byte "
        "logical block (use AlignedBuffer)",
        op, device, offset, data, block_size));
  }
  // Written so that offset + length cannot overflow.
  if (offset > device_size || length > device_size - offset) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%s %s at offset %d, length %d: past the end of the %d-byte device", op,
        device, offset, length, device_size));
  }
  return absl::OkStatus();
}

}  // namespace pgring
