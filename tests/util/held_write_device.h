// held_write_device.h — a BlockDevice that keeps one write in flight for
// as long as a test wants: the disk's timing, which the in-memory and fault
// devices (completing writes inline) never have.
#ifndef PGRING_TESTS_UTIL_HELD_WRITE_DEVICE_H_
#define PGRING_TESTS_UTIL_HELD_WRITE_DEVICE_H_

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "absl/status/status.h"
#include "device/aligned_buffer.h"
#include "device/block_device.h"
#include "util/forwarding_device.h"

namespace pgring::testing {

// Passes everything to `base`, except that after HoldNextWrite() the next
// WriteAsync is neither applied nor completed until ReleaseHeldWrite(): to
// the layers above, a write that is still in flight on the disk.
class HeldWriteDevice final : public ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf,
                  IoCallback done) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (hold_next_) {
        hold_next_ = false;
        held_ = Held{offset, std::move(buf), std::move(done)};
        held_cv_.notify_all();
        return;
      }
    }
    ForwardingDevice::WriteAsync(offset, std::move(buf), std::move(done));
  }
  absl::Status Flush() override {
    store_flushes_.fetch_add(1);
    return ForwardingDevice::Flush();
  }
  // Flushes that came through this device (the store's), not counting
  // flushes of the device beneath it by others.
  uint64_t store_flushes() const { return store_flushes_.load(); }

  void HoldNextWrite() {
    std::lock_guard<std::mutex> l(mu_);
    hold_next_ = true;
  }
  // Blocks until a write is held.
  void WaitUntilHeld() {
    std::unique_lock<std::mutex> l(mu_);
    held_cv_.wait(l, [&] { return held_.done != nullptr; });
  }
  // Lets the held write go to the device.
  void ReleaseHeldWrite() {
    Held h;
    {
      std::lock_guard<std::mutex> l(mu_);
      h = std::move(held_);
      held_ = Held{};
    }
    ASSERT_TRUE(h.done != nullptr);
    base()->WriteAsync(h.offset, std::move(h.buf), std::move(h.done));
  }
  // Completes the held write with `error`, writing nothing: a write that
  // failed on the disk.
  void FailHeldWrite(absl::Status error) {
    Held h;
    {
      std::lock_guard<std::mutex> l(mu_);
      h = std::move(held_);
      held_ = Held{};
    }
    ASSERT_TRUE(h.done != nullptr) << "no write was held";
    h.done(std::move(error));
  }

 private:
  struct Held {
    uint64_t offset = 0;
    std::shared_ptr<AlignedBuffer> buf;
    IoCallback done;
  };
  std::mutex mu_;
  std::condition_variable held_cv_;
  bool hold_next_ = false;
  Held held_;
  std::atomic<uint64_t> store_flushes_{0};
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_HELD_WRITE_DEVICE_H_
