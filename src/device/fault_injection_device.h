// fault_injection_device.h — a BlockDevice wrapper for tests that models what
// a real disk does on power loss (unflushed writes lost, reordered, or torn
// between logical blocks or inside one; writes in flight, completing out of
// order, and flushes in progress, in its timed mode) and fails chosen
// operations on demand.
#ifndef PGRING_DEVICE_FAULT_INJECTION_DEVICE_H_
#define PGRING_DEVICE_FAULT_INJECTION_DEVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "device/block_device.h"
#include "device/delayed_task_thread.h"
#include "device/volatile_write_cache.h"

namespace pgring {

// Wraps a base device (usually a MemoryBlockDevice) and passes I/O through,
// while modelling the disk's volatile write cache (VolatileWriteCache): for
// every logical block written since it was last made durable, its durable
// content and each version written to it since, in flight or completed.
//
// Power loss is modelled in two steps, like a real crash and reboot:
//   1. The crash: SetCrashAfterOps(), TearNextWrite() or CrashNow(). From
//      then on every operation (reads too) fails with kUnavailable
//      "... power lost (simulated) ...", and the on-crash hook runs once.
//   2. The reboot: MakeCrashImage() rewrites the base so each block touched
//      since it was last durable holds a version a real disk could have kept,
//      then revives the device so the store can be reopened on it.
// MakeCrashImage() also works without step 1 (power lost "right now").
//
// Ops: every WriteAsync()/Write() and Flush() call counts as one op,
// whatever its outcome; reads are not ops. Run a workload once to learn
// op_count(), then re-run it with SetCrashAfterOps(k) for each k.
//
// Two timings (Options::timed):
// - Inline (the default): a write is applied to the base and `done` runs
//   before WriteAsync returns (as with MemoryBlockDevice), and a flush makes
//   every write durable; the op order, and so every crash point, is
//   deterministic.
// - Timed: a write completes on the device's completion thread after a
//   seeded random delay (only then is it applied to the base, so readable),
//   so writes complete out of order and well after they were issued. Flush() takes a
//   seeded random time too, and covers only the writes that completed before
//   it began: those still in flight, or completing while it runs, stay
//   volatile. Power can go with writes in flight (each then completes with
//   the power-lost error; in the crash image each of its blocks, or tear
//   units, holds the old or the new content) and with a flush in progress
//   (the flush fails and makes nothing durable). Every completion, errors
//   included (except argument errors, reported inline), runs on the
//   completion thread. Deterministic under the seed up to thread timing.
//
// Options::tear_unit: the crash image's kRandomPerBlock chooses per tear
// unit rather than per logical block, to model a device that tears inside
// its logical block (a 4096-byte block of 512-byte sectors).
//
// Thread-safe. bytes_written()/flushes()/writes() count what reached the
// base through this wrapper (including the kept part of a torn write, one
// write), not the rewrites made by MakeCrashImage().
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

  // What MakeCrashImage() leaves in each block written since it was last
  // durable (see volatile_write_cache.h).
  using CrashImage = CrashImageMode;

  struct Options {
    // Writes complete on a completion thread after a delay (see the class
    // comment); false: inline.
    bool timed = false;
    // Timed: each write's delay, uniform in [min_write_delay,
    // max_write_delay]; each flush's, in [0, max_flush_delay].
    std::chrono::microseconds min_write_delay{0};
    std::chrono::microseconds max_write_delay{300};
    std::chrono::microseconds max_flush_delay{200};
    // Timed: the delays' RNG seed.
    uint64_t seed = 1;
    // Bytes a power loss writes whole: a power of two in [512, the base's
    // logical block size]; 0 means the logical block.
    uint32_t tear_unit = 0;
  };

  explicit FaultInjectionDevice(std::shared_ptr<BlockDevice> base)
      : FaultInjectionDevice(std::move(base), Options{}) {}
  FaultInjectionDevice(std::shared_ptr<BlockDevice> base, const Options& options);
  // Timed: waits for every write still in flight to complete first.
  ~FaultInjectionDevice() override;

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

  // Loses the power if it is still on; timed, waits until every write in
  // flight has completed (with the power-lost error); rewrites the base as
  // described by `mode` (see CrashImage), forgets the unflushed history, and
  // revives the device: crashed() becomes false and no crash, tear or
  // injected failure stays scheduled (the on-crash hook is kept). Fails only
  // if the base refuses the rewrite. Must not be called from a completion
  // callback.
  [[nodiscard]] absl::Status MakeCrashImage(CrashImage mode, uint64_t seed);

  // Write and flush ops issued since construction (see the class comment).
  uint64_t op_count() const;
  bool crashed() const;
  // Logical blocks written since they were last made durable.
  uint64_t unflushed_blocks() const;
  // The candidates MakeCrashImage(kRandomPerBlock) chooses from for the
  // block at `offset`: the durable content first, then each version written
  // since (completed ones in completion order, then those in flight). Empty
  // if the block was not written since it was last durable.
  std::vector<std::string> BlockCandidates(uint64_t offset) const;

  // What the model reached, for tests to show a campaign covered it.
  struct ModelStats {
    // At the instant the last power loss fell (zero before the first; kept
    // across MakeCrashImage): writes issued and not completed, and flushes
    // begun and not finished. Only the timed device has either.
    uint64_t writes_in_flight_at_crash = 0;
    uint64_t flushes_in_progress_at_crash = 0;
    // Blocks the last MakeCrashImage() tore inside (the tear unit being
    // smaller than the block): their image is no version whole.
    uint64_t blocks_torn_inside_by_last_image = 0;
    // Timed: writes issued and not yet completed, now, and the most there
    // ever were at once.
    uint64_t writes_in_flight = 0;
    uint64_t max_writes_in_flight = 0;
    // Timed: flushes begun and not yet finished, now.
    uint64_t flushes_in_progress = 0;
  };
  ModelStats model_stats() const;

  const std::shared_ptr<BlockDevice>& base() const { return base_; }

 private:
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
  // The power goes now (crashed_ set, what it fell on noted).
  void LoseDataLocked();
  // Writes `data` (whole blocks) to the base and records it as completed.
  absl::Status TrackedWriteLocked(uint64_t offset, const char* data,
                                  uint64_t length);
  // The end of a flush begun at `mark`: the base's flush, then the writes
  // completed before `mark` are durable.
  absl::Status FinishFlushLocked(uint64_t mark);
  // Timed: the completion of write `id`, on the completion thread.
  void CompleteTimedWrite(uint64_t id, uint64_t offset,
                          const std::shared_ptr<AlignedBuffer>& buf,
                          const IoCallback& done);
  // A random delay in [lo, hi].
  std::chrono::microseconds DelayLocked(std::chrono::microseconds lo,
                                        std::chrono::microseconds hi);
  void RunOnCrash();

  const std::shared_ptr<BlockDevice> base_;
  const uint64_t size_;
  const uint32_t block_size_;
  const Options options_;

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
  VolatileWriteCache cache_;
  // Timed: the delays, write ids, flushes running, what the crash fell on.
  std::mt19937_64 rng_;
  uint64_t next_write_id_ = 1;
  uint64_t flushes_running_ = 0;
  uint64_t power_ons_ = 0;  // MakeCrashImage calls: a flush spanning one fails
  ModelStats stats_;  // all but writes_in_flight
  // Timed: runs the completions. Declared last, so destroyed first, while
  // everything its tasks touch is still there.
  std::unique_ptr<DelayedTaskThread> completions_;

  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> writes_{0};
};

}  // namespace pgring

#endif  // PGRING_DEVICE_FAULT_INJECTION_DEVICE_H_
