#include "store/ring/log_stream.h"

#include <algorithm>
#include <vector>
#include <cassert>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "store/ring/extent_write.h"
#include "util/status_macros.h"

namespace pgring {

LogStream::LogStream(const Geometry& geo, ChunkAllocator* alloc, uint32_t max_chunks,
                     SeekCounter* seeks, WrittenFn written)
    : geo_(geo),
      alloc_(alloc),
      max_chunks_(max_chunks),
      seeks_(seeks),
      on_written_(std::move(written)) {}

void LogStream::Load(const StreamPointer& p, PgChunkList chunks, std::string tail_block_prefix) {
  exists_ = true;
  chunks_ = std::move(chunks);
  ++chunks_version_;
  head_ = p.head;
  tail_ = p.tail;
  tail_seq_ = p.tail_seq;
  durable_head_.store(p.head);
  MutexLock l(&io_mu_);
  written_ = p.tail;
  written_ok_.store(p.tail);
  pending_start_ = geo_.AlignDown(p.tail);
  pending_ = std::move(tail_block_prefix);
  io_chunks_ = chunks_;
  io_chunks_version_ = chunks_version_;
  placed_end_ = tail_;
  placed_seq_ = tail_seq_;
  pad_at_ = kNoPad;
}

uint32_t LogStream::MaxChunksFor(uint32_t option, uint64_t chunk_count) {
  if (option != 0) return option;
  return static_cast<uint32_t>(std::clamp<uint64_t>(chunk_count * 3 / 4, 2, 4096));
}

uint64_t LogStream::capacity() const {
  return static_cast<uint64_t>(max_chunks_) * geo_.chunk_size;
}

bool LogStream::Reserve(uint64_t end, std::vector<uint32_t>* allocated) {
  if (!exists_) {
    // A new stream starts at its tail's chunk boundary, as an empty PG ring.
    exists_ = true;
    chunks_.base = tail_ / geo_.chunk_size * geo_.chunk_size;
    ++chunks_version_;
    MutexLock l(&io_mu_);
    written_ = tail_;
    written_ok_.store(tail_);
    pending_start_ = geo_.AlignDown(tail_);
    pending_.assign(tail_ - pending_start_, '\0');
    placed_end_ = tail_;
    placed_seq_ = tail_seq_;
    pad_at_ = kNoPad;
  }
  if (chunks_.chunks.empty()) {
    const uint64_t base = tail_ / geo_.chunk_size * geo_.chunk_size;
    if (chunks_.base != base) ++chunks_version_;
    chunks_.base = base;
  }
  const uint64_t reusable_before = std::min(durable_head_.load(), head_);
  while (RingEnd(chunks_, geo_) < end) {
    if (ReuseFirst(&chunks_, geo_, reusable_before)) {
      ++chunks_version_;
      continue;
    }
    if (chunks_.chunks.size() >= max_chunks_) return false;
    auto chunk = alloc_->Allocate();
    if (!chunk) return false;
    allocated->push_back(*chunk);
    chunks_.chunks.push_back(*chunk);
    ++chunks_version_;
  }
  return true;
}

LogStream::Slot LogStream::NextSlot() {
  MutexLock l(&io_mu_);
  if (pad_at_ == tail_) return Slot{pad_end_, tail_seq_ + 1};
  return Slot{tail_, tail_seq_};
}

void LogStream::Place(const Slot& slot, uint64_t size) {
  MutexLock l(&io_mu_);
  if (pad_at_ == tail_) {
    if (slot.pos == pad_end_) {
      // Past the pad: every byte before it is in a write already issued,
      // so the next write starts at the pad's end, a block boundary.
      tail_ = pad_end_;
      tail_seq_ += 1;
      pending_start_ = pad_end_;
      pending_.clear();
      written_ = std::max(written_, pad_end_);
    }
    pad_at_ = kNoPad;
  }
  assert(slot.pos == tail_ && slot.seq == tail_seq_);
  tail_ += size;
  tail_seq_ += 1;
  placed_end_ = tail_;
  placed_seq_ = tail_seq_;
  records_.fetch_add(1);
}

void LogStream::Queue(const std::string& record, std::shared_ptr<CommitPipeline::Txn> txn) {
  MutexLock l(&io_mu_);
  pending_.append(record);
  assert(pending_start_ + pending_.size() <= tail_);
  if (io_chunks_version_ != chunks_version_) {
    io_chunks_ = chunks_;
    io_chunks_version_ = chunks_version_;
  }
  waiting_.push_back(Waiting{pending_start_ + pending_.size(), std::move(txn)});
}

void LogStream::GiveBackPassed(std::vector<uint32_t>* freed) {
  // Kick maps the bytes still to be written through the list: they may lie
  // behind a head that moved past them (their PGs homed since).
  uint64_t keep_from = head_;
  {
    MutexLock l(&io_mu_);
    keep_from = std::min(keep_from, pending_start_);
  }
  const size_t before = chunks_.chunks.size();
  GiveBackBefore(&chunks_, geo_, keep_from, 1, freed);
  if (chunks_.chunks.size() != before) ++chunks_version_;
}

bool LogStream::PressesPartition() const {
  return chunks_.chunks.size() > alloc_->free_count();
}

void LogStream::Drop(std::vector<uint32_t>* freed) {
  freed->insert(freed->end(), chunks_.chunks.begin(), chunks_.chunks.end());
  chunks_.chunks.clear();
  ++chunks_version_;
  exists_ = false;
  head_ = tail_;
}

void LogStream::HeadDurable(uint64_t head) {
  uint64_t cur = durable_head_.load();
  while (cur < head && !durable_head_.compare_exchange_weak(cur, head)) {
  }
}

bool LogStream::StartWrite(CallerWrites* io) {
  if (in_flight_) return false;
  std::vector<Extent> extents;
  std::shared_ptr<AlignedBuffer> buffer;
  uint64_t end = 0;
  std::vector<std::shared_ptr<CommitPipeline::Txn>> failed;
  absl::Status failure;
  {
    MutexLock l(&io_mu_);
    end = pending_start_ + pending_.size();
    if (end == written_) return false;
    if (!failure_.ok()) {
      // An earlier stream write failed (the store is failing): what is
      // staged will never be written.
      for (auto& w : waiting_) failed.push_back(std::move(w.txn));
      waiting_.clear();
      written_ = end;
      failure = failure_;
    } else {
      // The write starts at the block holding the written tail: with the
      // records it already holds when a record was placed over the last
      // write's pad (kRewriteTailBlock), on a block boundary otherwise.
      const uint64_t write_end = geo_.AlignUp(end);
      const uint64_t len = write_end - pending_start_;
      buffer = std::make_shared<AlignedBuffer>(len);
      std::memcpy(buffer->data(), pending_.data(), pending_.size());
      pad_at_ = kNoPad;
      if (end == placed_end_ && write_end - end >= kMinPadRecord) {
        std::string pad;
        AppendPadRecord(&pad, kRecordStream, kStreamStamp, LapOf(end, geo_), placed_seq_,
                        write_end - end);
        std::memcpy(buffer->data() + (end - pending_start_), pad.data(), pad.size());
        pad_at_ = end;
        pad_end_ = write_end;
      }
      MapRange(io_chunks_, geo_, pending_start_, len, &extents);
    }
  }
  if (!failed.empty()) {
    on_written_(std::move(failed), failure);
    return true;
  }
  writes_.fetch_add(1);
  bytes_written_.fetch_add(buffer->size());
  in_flight_ = true;
  StartExtents(io, extents, std::move(buffer), seeks_, [this, end](absl::Status s) {
    in_flight_ = false;
    std::vector<std::shared_ptr<CommitPipeline::Txn>> done = WriteDone(end, s);
    if (!s.ok()) {
      s = absl::Status(s.code(), absl::StrCat("log stream write: ", s.message()));
    }
    on_written_(std::move(done), s);
  });
  return true;
}

std::vector<std::shared_ptr<CommitPipeline::Txn>> LogStream::WriteDone(uint64_t end,
                                                                        const absl::Status& s) {
  std::vector<std::shared_ptr<CommitPipeline::Txn>> done;
  MutexLock l(&io_mu_);
  written_ = std::max(written_, end);
  // A record placed past this write's pad moved pending_start_ past it.
  const uint64_t keep_from = geo_.AlignDown(end);
  if (keep_from > pending_start_) {
    pending_.erase(0, keep_from - pending_start_);
    pending_start_ = keep_from;
  }
  while (!waiting_.empty() && waiting_.front().end <= end) {
    done.push_back(std::move(waiting_.front().txn));
    waiting_.pop_front();
  }
  if (!s.ok() && failure_.ok()) failure_ = s;
  if (failure_.ok()) written_ok_.store(written_);
  return done;
}

}  // namespace pgring
