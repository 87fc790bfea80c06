#include "log/unhomed_runs.h"

#include <algorithm>
#include <limits>

namespace pgring {

namespace {
constexpr uint64_t kMaxOffset = std::numeric_limits<uint32_t>::max();
// Packed::data_len's top bit is the run's `compressed`.
constexpr uint64_t kMaxDataLen = (uint64_t{1} << 31) - 1;
}  // namespace

UnhomedRuns::UnhomedRuns(std::initializer_list<UnhomedRun> runs) {
  for (const UnhomedRun& r : runs) push_back(r);
}

UnhomedRuns::UnhomedRuns(const UnhomedRuns& other)
    : ring_base_(other.ring_base_),
      stream_base_(other.stream_base_),
      dropped_(other.dropped_),
      packed_(other.packed_),
      wide_(other.wide_ ? std::make_unique<std::deque<UnhomedRun>>(*other.wide_) : nullptr) {}

UnhomedRuns& UnhomedRuns::operator=(const UnhomedRuns& other) {
  if (this != &other) *this = UnhomedRuns(other);
  return *this;
}

bool UnhomedRuns::Fits(const UnhomedRun& run) const {
  return run.ring_end >= ring_base_ && run.ring_end - ring_base_ <= kMaxOffset &&
         run.stream_pos >= stream_base_ && run.stream_pos - stream_base_ <= kMaxOffset &&
         run.data_end >= run.stream_pos && run.data_end - run.stream_pos <= kMaxDataLen;
}

void UnhomedRuns::push_back(const UnhomedRun& run) {
  if (wide_) {
    wide_->push_back(run);
    return;
  }
  if (packed_.empty()) {
    ring_base_ = run.ring_end;
    stream_base_ = run.stream_pos;
  }
  if (!Fits(run)) {
    Rebase(run);
    if (wide_) {
      wide_->push_back(run);
      return;
    }
  }
  packed_.push_back(Pack(run));
}

void UnhomedRuns::Rebase(const UnhomedRun& run) {
  uint64_t ring_lo = run.ring_end, ring_hi = run.ring_end;
  uint64_t stream_lo = run.stream_pos, stream_hi = run.stream_pos;
  bool packs = run.data_end >= run.stream_pos && run.data_end - run.stream_pos <= kMaxDataLen;
  for (const Packed& p : packed_) {
    const UnhomedRun r = Unpack(p);
    ring_lo = std::min(ring_lo, r.ring_end);
    ring_hi = std::max(ring_hi, r.ring_end);
    stream_lo = std::min(stream_lo, r.stream_pos);
    stream_hi = std::max(stream_hi, r.stream_pos);
  }
  packs = packs && ring_hi - ring_lo <= kMaxOffset && stream_hi - stream_lo <= kMaxOffset;
  std::deque<UnhomedRun> all;
  for (const Packed& p : packed_) all.push_back(Unpack(p));
  packed_.clear();
  if (!packs) {
    wide_ = std::make_unique<std::deque<UnhomedRun>>(std::move(all));
    return;
  }
  ring_base_ = ring_lo;
  stream_base_ = stream_lo;
  for (const UnhomedRun& r : all) packed_.push_back(Pack(r));
}

size_t UnhomedRuns::FirstEndingPast(uint64_t lpos) const {
  size_t lo = 0, hi = size();
  for (size_t step = 1; hi > 0; step *= 2) {
    const size_t probe = hi > step ? hi - step : 0;
    if ((*this)[probe].ring_end <= lpos) {
      lo = probe + 1;
      break;
    }
    hi = probe;
  }
  return std::upper_bound(begin() + lo, begin() + hi, lpos,
                          [](uint64_t at, const UnhomedRun& r) { return at < r.ring_end; }) -
         begin();
}

void UnhomedRuns::pop_front() {
  ++dropped_;
  if (wide_) {
    wide_->pop_front();
    if (wide_->empty()) wide_.reset();  // the next run packs again
    return;
  }
  packed_.pop_front();
}

void UnhomedRuns::clear() {
  packed_.clear();
  wide_.reset();
}

size_t UnhomedRuns::bytes() const {
  return wide_ ? wide_->size() * sizeof(UnhomedRun) : packed_.size() * sizeof(Packed);
}

}  // namespace pgring
