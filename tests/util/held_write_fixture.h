// held_write_fixture.h — a store on a fault-injecting memory device with a
// HeldWriteDevice above it (one write kept in flight for as long as a test
// wants) and power loss: the fixture of the commit pipeline's ordering tests
// (tests/contract/commit_pipeline_test.cc) and of the stream layout's
// power-loss moments (tests/crash/stream_power_loss_test.cc).
#ifndef PGRING_TESTS_UTIL_HELD_WRITE_FIXTURE_H_
#define PGRING_TESTS_UTIL_HELD_WRITE_FIXTURE_H_

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "device/fault_injection_device.h"
#include "gtest/gtest.h"
#include "pgring/store.h"
#include "pgring/transaction.h"
#include "util/held_write_device.h"
#include "util/power_loss_rig.h"
#include "util/sync.h"
#include "util/test_util.h"

namespace pgring::testing {

// A submitted transaction's outcome: Callback() for Store::Submit, Wait()
// for the status its commit callback reported.
struct Outcome {
  Notification done;
  absl::Status status;
  CommitCallback Callback() {
    return [this](absl::Status s) {
      status = s;
      done.Notify();
    };
  }
  absl::Status Wait() {
    done.WaitForNotification();
    return status;
  }
};

class HeldWriteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MkfsOptions m;
    m.chunk_size = 64 << 10;
    ASSERT_OK(rig_.Mkfs(m));
    options_.log_sink = NullLogSink();
    // The ring writes these tests hold and count are per-PG rings' writes
    // (but where a test says otherwise).
    options_.log_layout = layout_;
    options_.durability = DurabilityMode::kGroupCommit;
    ASSERT_OK(Open());
    Transaction c;
    c.CreatePg(a_);
    c.CreatePg(b_);
    ASSERT_OK(store_->Commit(std::move(c)));
  }
  absl::Status Open() {
    absl::Status s = rig_.Open(options_);
    store_ = rig_.store();
    return s;
  }
  // Power loss now: every write not covered by a finished flush is lost,
  // and so is RocksDB's unsynced data.
  void PowerLossAndReopen() {
    ASSERT_OK(rig_.PowerLoss(FaultInjectionDevice::CrashImage::kDropUnflushed));
    ASSERT_OK(Open());
  }
  // Polls the device's flush count; false after 30 s (a missing flush fails
  // the test rather than hanging it).
  bool WaitForFlushesAbove(uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (dev_->flushes() <= n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }
  static Transaction Append(PgId pg, uint64_t v) {
    Transaction t;
    t.AppendEntry(pg, Version{1, v}, std::string(300, static_cast<char>('a' + v % 26)));
    return t;
  }

  const PgId a_{1, 1, -1}, b_{1, 2, -1};
  LogLayout layout_ = LogLayout::kPerPgRings;
  std::shared_ptr<HeldWriteDevice> dev_;
  PowerLossRig rig_{16 << 20, [this](std::shared_ptr<BlockDevice> base) {
                      dev_ = std::make_shared<HeldWriteDevice>(std::move(base));
                      return dev_;
                    }};
  Options options_;
  Store* store_ = nullptr;
};

}  // namespace pgring::testing

#endif  // PGRING_TESTS_UTIL_HELD_WRITE_FIXTURE_H_
