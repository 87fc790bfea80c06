// histogram.h — a lock-free log-linear histogram (latencies in nanoseconds,
// group sizes), read as pgring/metrics.h's HistogramData.
//
// Buckets: values below 2^kSubBits are exact; above, each power of two is
// split into 2^kSubBits linear buckets, so a percentile is within 1/2^kSubBits
// (3%) of the true value. Record() is wait-free and may be called from any
// thread; Snapshot() may run beside it (a snapshot taken while values are
// recorded may count a value in `count` and not yet in its bucket).
#ifndef PGRING_UTIL_HISTOGRAM_H_
#define PGRING_UTIL_HISTOGRAM_H_

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

#include "pgring/metrics.h"

namespace pgring {

class Histogram {
 public:
  static constexpr int kSubBits = 5;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;

  void Record(uint64_t v) {
    buckets_[Index(v)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
    uint64_t m = max_.load(std::memory_order_relaxed);
    while (v > m && !max_.compare_exchange_weak(m, v, std::memory_order_relaxed)) {
    }
  }

  HistogramData Snapshot() const {
    HistogramData d;
    d.count = count_.load(std::memory_order_relaxed);
    d.sum = sum_.load(std::memory_order_relaxed);
    d.max = max_.load(std::memory_order_relaxed);
    for (int i = 0; i < kBuckets; ++i) {
      const uint64_t n = buckets_[i].load(std::memory_order_relaxed);
      if (n != 0) d.buckets.push_back({UpperBound(i), n});
    }
    return d;
  }

  // The largest value that maps to bucket i.
  static uint64_t UpperBound(int i) {
    if (i < kSub) return static_cast<uint64_t>(i);
    const int shift = i / kSub - 1;
    const uint64_t sub = static_cast<uint64_t>(i % kSub);
    return ((static_cast<uint64_t>(kSub) + sub + 1) << shift) - 1;
  }
  static int Index(uint64_t v) {
    if (v < static_cast<uint64_t>(kSub)) return static_cast<int>(v);
    const int msb = 63 - std::countl_zero(v);  // >= kSubBits
    const int shift = msb - kSubBits;
    const int sub = static_cast<int>((v >> shift) & (kSub - 1));
    return (shift + 1) * kSub + sub;
  }

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_{0};
  std::atomic<uint64_t> max_{0};
};

}  // namespace pgring

#endif  // PGRING_UTIL_HISTOGRAM_H_
