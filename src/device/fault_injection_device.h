// fault_injection_device.h — a BlockDevice wrapper for tests that models what
// a real disk does on power loss (unflushed writes lost, reordered, or torn
// between logical blocks) and fails chosen operations on demand.
#ifndef PGRING_DEVICE_FAULT_INJECTION_DEVICE_H_
#define PGRING_DEVICE_FAULT_INJECTION_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "device/block_device.h"

namespace pgring {

// Wraps a base device (usually a MemoryBlockDevice) and passes I/O through,
// while remembering, for every logical block written since the last
// successful Flush(), its durable content (read from the base before the
// first such write) and each version written to it since, in order.
//
// Power loss is modelled in two steps, like a real crash and reboot:
//   1. The crash: SetCrashAfterOps(), TearNextWrite() or CrashNow(). From
//      then on every operation (reads too) fails with kUnavailable
//      "... power lost (simulated) ...", and the on-crash hook runs once.
//   2. The reboot: MakeCrashImage() rewrites the base so each block touched
//      since the last flush holds a version a real disk could have kept, then
//      revives the device so the store can be reopened on it.
// MakeCrashImage() also works without step 1 (power lost "right now").
//
// Ops: every WriteAsync()/Write() and Flush() call counts as one op,
// whatever its outcome; reads are not ops. Run a workload once to learn
// op_count(), then re-run it with SetCrashAfterOps(k) for each k.
//
// Writes are applied to the base synchronously and `done` runs inline,
// before WriteAsync returns (as with MemoryBlockDevice); that makes the op
// order, and so every crash point, deterministic. Thread-safe.
//
// bytes_written()/flushes()/writes() count what reached the base through
// this wrapper (including the kept part of a torn write, one write), not
// the rewrites made by MakeCrashImage().
//
// Example:
//   auto mem = std::make_shared<MemoryBlockDevice>(64 << 20);
//   auto dev = std::make_shared<FaultInjectionDevice>(mem);
//   dev->SetCrashAfterOps(7);
//   RunWorkload(dev);                 // fails from the 7th write/flush on
//   ASSERT_OK(dev->MakeCrashImage(
//       FaultInjectionDevice::CrashImage::kRandomPerBlock, seed));
//   Reopen(dev);                      // must find every committed record
class FaultInjectionDevice final : public BlockDevice {
 public:
  enum class OpKind { kRead, kWrite, kFlush };

  // What MakeCrashImage() leaves in each block written since the last flush.
  enum class CrashImage {
    // The durable content: every unflushed write lost.
    kDropUnflushed,
    // The latest content: every completed write survived.
    kKeepAll,
    // Per block, independently (seeded RNG): the durable content or any one
    // of the versions written since the flush. Covers writes torn between
    // blocks, writes reordered by the disk, and older versions surviving
    // newer ones.
    kRandomPerBlock,
  };

  explicit FaultInjectionDevice(std::shared_ptr<BlockDevice> base);
  ~FaultInjectionDevice() override = default;

  FaultInjectionDevice(const FaultInjectionDevice&) = delete;
  FaultInjectionDevice& operator=(const FaultInjectionDevice&) = delete;

  uint64_t size() const override { return size_; }
  uint32_t logical_block_size() const override { return block_size_; }

  [[nodiscard]] absl::Status Read(uint64_t offset,
                                  absl::Span<char> buf) override;
  void WriteAsync(uint64_t offset, std::shared_ptr<AlignedBuffer> buf,
                  IoCallback done) override;
  [[nodiscard]] absl::Status Flush() override;

  uint64_t bytes_written() const override {
    return bytes_written_.load(std::memory_order_relaxed);
  }
  uint64_t flushes() const override {
    return flushes_.load(std::memory_order_relaxed);
  }
  uint64_t writes() const override {
    return writes_.load(std::memory_order_relaxed);
  }

  // The n-th write/flush op from now (n >= 1) does not happen: power is lost
  // instead. n == 0 cancels a scheduled crash.
  void SetCrashAfterOps(uint64_t n);
  // The next write covering more than `keep_blocks` logical blocks writes
  // only its first `keep_blocks` blocks, and then power is lost. Writes that
  // are not longer pass through and leave the tear armed.
  void TearNextWrite(uint32_t keep_blocks);
  // Power is lost now (the hook runs on this thread).
  void CrashNow();
  // Runs once per power loss, on the thread whose op hit it, before that op
  // reports its failure; not under the device's lock, so it may call
  // crashed() and friends. Tests use it to stop RocksDB at the same instant.
  void SetOnCrash(std::function<void()> on_crash);

  // After `skip` further ops of `kind` go through, the next `count` fail
  // with `error`'s code and message (kInternal if `error` is OK; payloads
  // are not copied) without crashing the device; a failed write changes
  // nothing. Replaces the previous schedule for
  // `kind`; count == 0 clears it.
  void FailOps(OpKind kind, uint64_t skip, uint64_t count, absl::Status error);

  // Rewrites the base as described by `mode` (see CrashImage), forgets the
  // unflushed history, and revives the device: crashed() becomes false and
  // no crash, tear or injected failure stays scheduled (the on-crash hook is
  // kept). Fails only if the base refuses the rewrite.
  [[nodiscard]] absl::Status MakeCrashImage(CrashImage mode, uint64_t seed);

  // Write and flush ops issued since construction (see the class comment).
  uint64_t op_count() const;
  bool crashed() const;
  // Logical blocks written since the last successful flush.
  uint64_t unflushed_blocks() const;
  // The candidates MakeCrashImage(kRandomPerBlock) chooses from for the
  // block at `offset`: the durable content first, then each version written
  // since the last flush. Empty if the block was not written since then.
  std::vector<std::string> BlockCandidates(uint64_t offset) const;

  const std::shared_ptr<BlockDevice>& base() const { return base_; }

 private:
  struct BlockHistory {
    std::string durable;
    std::vector<std::string> versions;  // oldest first
  };
  struct FailSchedule {
    uint64_t skip = 0;
    uint64_t count = 0;
    absl::Status error;
  };

  // Counts an op and decides whether power is lost at it. Returns the error
  // to report (power lost) or OK; sets *crashed_now when this op crashed.
  absl::Status BeginOpLocked(const char* what, uint64_t offset,
                             bool* crashed_now);
  // Returns the injected error for an op of `kind`, or OK.
  absl::Status InjectedFailureLocked(OpKind kind);
  absl::Status PowerLostError(const char* what, uint64_t offset) const;
  // Writes `data` (whole blocks) to the base, recording history first.
  absl::Status TrackedWriteLocked(uint64_t offset, const char* data,
                                  uint64_t length);
  void RunOnCrash();

  const std::shared_ptr<BlockDevice> base_;
  const uint64_t size_;
  const uint32_t block_size_;

  // std::mutex, not absl::Mutex: TSan sees it (see block_device.cc).
  // Guards everything below it except the counters. The *Locked() methods
  // need it held.
  mutable std::mutex mu_;
  uint64_t op_count_ = 0;
  uint64_t crash_at_op_ = 0;  // 0: none scheduled
  bool tear_armed_ = false;
  uint32_t tear_keep_blocks_ = 0;
  bool crashed_ = false;
  std::function<void()> on_crash_;
  FailSchedule fail_[3];
  // Keyed by block index; ordered so a seeded image is reproducible.
  std::map<uint64_t, BlockHistory> history_;

  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> writes_{0};
};

}  // namespace pgring

#endif  // PGRING_DEVICE_FAULT_INJECTION_DEVICE_H_
