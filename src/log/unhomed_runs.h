// Where a PG's unhomed bytes lie in the log stream: one run per stream
// record holding some of them, oldest first.
//
// Written once, a PG holds a run for each of its records still in the
// stream (thousands), so the list is what its index costs: it keeps each
// run in 12 bytes (offsets from a base the list holds), and in 32 only for
// a PG whose runs span 4 GiB of ring or stream positions (never on a
// partition whose stream is that small).

#ifndef PGRING_LOG_UNHOMED_RUNS_H_
#define PGRING_LOG_UNHOMED_RUNS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <iterator>
#include <memory>

namespace pgring {

// A PG's unhomed bytes up to `ring_end` lie in the stream record at
// `stream_pos`, ending at stream lpos `data_end`: ring byte x < ring_end at
// data_end - (ring_end - x). A run starts where the one before it ended
// (the first at or before homed). In a `compressed` record
// (kRecordStreamLz4) they are found only by decompressing it, and
// `data_end` is where the record ends.
struct UnhomedRun {
  uint64_t ring_end = 0;
  uint64_t stream_pos = 0;
  uint64_t data_end = 0;
  bool compressed = false;
  friend bool operator==(const UnhomedRun&, const UnhomedRun&) = default;
};

class UnhomedRuns {
 public:
  UnhomedRuns() = default;
  UnhomedRuns(std::initializer_list<UnhomedRun> runs);
  UnhomedRuns(const UnhomedRuns& other);
  UnhomedRuns& operator=(const UnhomedRuns& other);
  UnhomedRuns(UnhomedRuns&&) = default;
  UnhomedRuns& operator=(UnhomedRuns&&) = default;

  size_t size() const { return wide_ ? wide_->size() : packed_.size(); }
  bool empty() const { return size() == 0; }
  UnhomedRun operator[](size_t i) const {
    return wide_ ? (*wide_)[i] : Unpack(packed_[i]);
  }
  UnhomedRun front() const { return (*this)[0]; }
  UnhomedRun back() const { return (*this)[size() - 1]; }
  // The first run that ends past `lpos` (size() if none), searched back
  // from the newest in steps that double: the callers look for runs near
  // the newest (the resident bytes) or pay a bisection once per read.
  size_t FirstEndingPast(uint64_t lpos) const;
  // Runs pop_front has taken off, ever: index i now is run dropped() + i
  // counted from the first ever pushed (a place that outlives pops).
  uint64_t dropped() const { return dropped_; }
  void push_back(const UnhomedRun& run);
  void pop_front();
  void clear();
  // The memory the runs take (StoreStats::stream_index_bytes): 12 bytes a
  // run, 32 in a list that spans 4 GiB.
  size_t bytes() const;

  // Random access by position; a run is returned by value.
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = UnhomedRun;
    using difference_type = std::ptrdiff_t;
    using reference = UnhomedRun;
    struct pointer {
      UnhomedRun run;
      const UnhomedRun* operator->() const { return &run; }
    };

    const_iterator() = default;
    const_iterator(const UnhomedRuns* runs, size_t i) : runs_(runs), i_(i) {}
    UnhomedRun operator*() const { return (*runs_)[i_]; }
    pointer operator->() const { return pointer{**this}; }
    UnhomedRun operator[](difference_type n) const { return *(*this + n); }
    const_iterator& operator++() { ++i_; return *this; }
    const_iterator operator++(int) { const_iterator t = *this; ++i_; return t; }
    const_iterator& operator--() { --i_; return *this; }
    const_iterator operator--(int) { const_iterator t = *this; --i_; return t; }
    const_iterator& operator+=(difference_type n) { i_ += n; return *this; }
    const_iterator& operator-=(difference_type n) { i_ -= n; return *this; }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.i_ == b.i_;
    }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
      return a.i_ <=> b.i_;
    }

   private:
    const UnhomedRuns* runs_ = nullptr;
    size_t i_ = 0;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

 private:
  // A run as offsets from the list's bases (ring_end, stream_pos) and its
  // data's end from its record's start, whose top bit is `compressed` (a
  // record is at most 16 MiB).
  struct Packed {
    uint32_t ring_end;
    uint32_t stream_pos;
    uint32_t data_len;
  };
  static_assert(sizeof(Packed) == 12);
  static constexpr uint32_t kCompressedBit = 0x80000000u;

  Packed Pack(const UnhomedRun& run) const {
    return Packed{static_cast<uint32_t>(run.ring_end - ring_base_),
                  static_cast<uint32_t>(run.stream_pos - stream_base_),
                  static_cast<uint32_t>(run.data_end - run.stream_pos) |
                      (run.compressed ? kCompressedBit : 0)};
  }
  UnhomedRun Unpack(const Packed& p) const {
    const uint64_t stream_pos = stream_base_ + p.stream_pos;
    return UnhomedRun{ring_base_ + p.ring_end, stream_pos,
                      stream_pos + (p.data_len & ~kCompressedBit),
                      (p.data_len & kCompressedBit) != 0};
  }
  // Whether `run` packs with the current bases.
  bool Fits(const UnhomedRun& run) const;
  // New bases from every run and `run`; all runs go wide when they do not
  // span under 4 GiB.
  void Rebase(const UnhomedRun& run);

  uint64_t ring_base_ = 0;
  uint64_t stream_base_ = 0;
  uint64_t dropped_ = 0;
  std::deque<Packed> packed_;
  // Instead of packed_, for a list that does not pack (made only then).
  std::unique_ptr<std::deque<UnhomedRun>> wide_;
};

}  // namespace pgring

#endif  // PGRING_LOG_UNHOMED_RUNS_H_
