// Where a PG's unhomed bytes lie in the log stream: one run per stream
// record holding some of them, oldest first.
//
// Written once, a PG holds a run for each of its records still in the
// stream (thousands), so the list is what its index costs: it keeps each
// run as varint deltas from the run before it (DeltaDeque), a record's
// length of ring, the distance to the PG's next record in the stream and the
// change in data length: about seven bytes a run.

#ifndef PGRING_LOG_UNHOMED_RUNS_H_
#define PGRING_LOG_UNHOMED_RUNS_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>

#include "util/delta_deque.h"

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

  size_t size() const { return runs_.size(); }
  bool empty() const { return runs_.empty(); }
  // O(64): decodes from the start of the run's block (iterate to read runs
  // in order).
  UnhomedRun operator[](size_t i) const { return Unpack(runs_[i]); }
  UnhomedRun front() const { return Unpack(runs_.front()); }
  UnhomedRun back() const { return Unpack(runs_.back()); }
  // The first run that ends past `lpos` (size() if none).
  size_t FirstEndingPast(uint64_t lpos) const;
  // Reads runs in order from one on, a delta a step; a Mark keeps its place
  // across pushes and pops at the front (what a PG's runs see), so a caller
  // that walks the same runs again and again resumes where it stopped.
  class Walker {
   public:
    UnhomedRun run() const { return Unpack(c_.value()); }
    size_t index() const { return c_.index(); }
    bool done() const { return c_.done(); }
    void Next() { c_.Next(); }

   private:
    friend class UnhomedRuns;
    DeltaDeque<3>::Cursor c_;
  };
  using Mark = DeltaDeque<3>::Mark;
  Walker WalkFrom(size_t i) const {
    Walker w;
    w.c_ = runs_.At(i);
    return w;
  }
  Mark Save(const Walker& w) const { return runs_.Save(w.c_); }
  // False when the mark no longer stands on a run of this list (popped, or
  // the list cleared).
  bool Resume(const Mark& m, Walker* w) const { return runs_.Resume(m, &w->c_); }
  void push_back(const UnhomedRun& run);
  void pop_front();
  void clear();
  // The memory the runs take (StoreStats::stream_index_bytes).
  size_t bytes() const { return runs_.MemoryBytes(); }

  // Random access by position; a run is returned by value. Stepping forward
  // decodes one delta; other moves decode from the run's block start.
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
    UnhomedRun operator*() const {
      if (!cached_ || cursor_.index() != i_) {
        cursor_ = runs_->runs_.At(i_);
        cached_ = true;
      }
      return Unpack(cursor_.value());
    }
    pointer operator->() const { return pointer{**this}; }
    UnhomedRun operator[](difference_type n) const { return *(*this + n); }
    const_iterator& operator++() {
      if (cached_ && cursor_.index() == i_) cursor_.Next();
      ++i_;
      return *this;
    }
    const_iterator operator++(int) { const_iterator t = *this; ++*this; return t; }
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
    // The run at cursor_.index(), decoded; kept while the iterator steps on.
    mutable DeltaDeque<3>::Cursor cursor_;
    mutable bool cached_ = false;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

 private:
  // A run as DeltaDeque keeps it: its data's length from its record's start
  // shifted left once, the low bit `compressed`.
  using Packed = DeltaDeque<3>::Value;
  static Packed Pack(const UnhomedRun& run) {
    return Packed{run.ring_end, run.stream_pos,
                  ((run.data_end - run.stream_pos) << 1) | (run.compressed ? 1 : 0)};
  }
  static UnhomedRun Unpack(const Packed& p) {
    return UnhomedRun{p[0], p[1], p[1] + (p[2] >> 1), (p[2] & 1) != 0};
  }

  DeltaDeque<3> runs_;
};

}  // namespace pgring

#endif  // PGRING_LOG_UNHOMED_RUNS_H_
