// commit_writer.h — the commit thread's writes in the log stream layout
// (CommitPipeline::LogWriter; docs/DESIGN.md, "Who runs what"). Each round
// takes the records the stream has staged and the PGs' ring writes queued
// by then (homes, forced homes, the records of a transaction that bypassed
// the stream), starts them in one submission on a CallerWrites of its own,
// and reaps them together: the commit thread issues and completes them, and
// no device thread wakes for them. The stream's staged state is LogStream's;
// what a ring write holds and how a PG's writes are ordered, the store's.
#ifndef PGRING_STORE_RING_COMMIT_WRITER_H_
#define PGRING_STORE_RING_COMMIT_WRITER_H_

#include <functional>
#include <memory>

#include "device/block_device.h"
#include "store/commit_pipeline.h"
#include "store/ring/log_stream.h"

namespace pgring {

class CommitWriter final : public CommitPipeline::LogWriter {
 public:
  // Starts, through the CallerWrites given, every ring write queued for the
  // commit thread; true if it started any. Their completions run in
  // FinishWrite.
  using StartRingWrites = std::function<bool(CallerWrites*)>;

  CommitWriter(BlockDevice* device, LogStream* stream, StartRingWrites ring_writes);

  // One round: the stream's staged records and the queued ring writes,
  // unless a round is in flight; true if it started anything.
  bool StartWrite(bool durable) override;
  // Waits for the round and runs each write's completion (the stream's
  // WrittenFn, the store's ring write completions) before it returns;
  // false when no round was in flight.
  bool FinishWrite() override;

 private:
  BlockDevice* const device_;
  LogStream* const stream_;
  const StartRingWrites ring_writes_;
  // The commit thread's alone (made at its first round).
  std::unique_ptr<CallerWrites> io_;
  bool in_flight_ = false;
};

}  // namespace pgring

#endif  // PGRING_STORE_RING_COMMIT_WRITER_H_
