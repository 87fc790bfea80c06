#include "store/ring/commit_writer.h"

#include <utility>

namespace pgring {

CommitWriter::CommitWriter(BlockDevice* device, LogStream* stream, StartRingWrites ring_writes)
    : device_(device), stream_(stream), ring_writes_(std::move(ring_writes)) {}

bool CommitWriter::StartWrite(bool durable) {
  if (in_flight_) return false;
  // At the first round: a store in kPerPgRings never has one. (`durable` is
  // the pipeline's, the same on every call.)
  if (io_ == nullptr) io_ = device_->NewCallerWrites(durable);
  bool started = stream_->StartWrite(io_.get());
  started |= ring_writes_(io_.get());
  io_->Submit();
  in_flight_ = started;
  return started;
}

bool CommitWriter::FinishWrite() {
  if (!in_flight_) return false;
  // Each write's own completion reports its error (to its transactions,
  // and through them to the pipeline): the first one again adds nothing.
  io_->Wait().IgnoreError();
  in_flight_ = false;
  return true;
}

}  // namespace pgring
