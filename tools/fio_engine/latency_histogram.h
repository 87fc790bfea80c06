// latency_histogram.h — a lock-free log-linear histogram of latencies in
// nanoseconds, for the engine's own commit-latency percentiles (fio measures
// its own; this one times exactly Submit → commit callback).
//
// Buckets: values below 2^kSubBits ns are exact; above, each power of two is
// split into 2^kSubBits linear buckets, so a percentile is within 1/2^kSubBits
// (3%) of the true value. Record() is wait-free and may be called from any
// thread.
#ifndef PGRING_TOOLS_FIO_ENGINE_LATENCY_HISTOGRAM_H_
#define PGRING_TOOLS_FIO_ENGINE_LATENCY_HISTOGRAM_H_

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace pgring::fio {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 5;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;

  void Record(uint64_t ns) {
    buckets_[Index(ns)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(ns, std::memory_order_relaxed);
    uint64_t m = max_.load(std::memory_order_relaxed);
    while (ns > m && !max_.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
    }
  }

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  double mean() const {
    uint64_t n = count();
    return n == 0 ? 0.0 : static_cast<double>(sum_.load(std::memory_order_relaxed)) / n;
  }

  // The smallest bucket bound below which at least `q` (0..1) of the values
  // lie; 0 when empty.
  uint64_t Percentile(double q) const {
    const uint64_t n = count();
    if (n == 0) return 0;
    uint64_t want = static_cast<uint64_t>(q * static_cast<double>(n) + 0.5);
    if (want == 0) want = 1;
    uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += buckets_[i].load(std::memory_order_relaxed);
      if (seen >= want) return UpperBound(i);
    }
    return max();
  }

 private:
  static int Index(uint64_t v) {
    if (v < static_cast<uint64_t>(kSub)) return static_cast<int>(v);
    const int msb = 63 - std::countl_zero(v);       // >= kSubBits
    const int shift = msb - kSubBits;
    const int sub = static_cast<int>((v >> shift) & (kSub - 1));
    return (shift + 1) * kSub + sub;
  }
  // The largest value that maps to bucket i.
  static uint64_t UpperBound(int i) {
    if (i < kSub) return static_cast<uint64_t>(i);
    const int shift = i / kSub - 1;
    const uint64_t sub = static_cast<uint64_t>(i % kSub);
    return ((static_cast<uint64_t>(kSub) + sub + 1) << shift) - 1;
  }

  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_{0};
  std::atomic<uint64_t> max_{0};
};

}  // namespace pgring::fio

#endif  // PGRING_TOOLS_FIO_ENGINE_LATENCY_HISTOGRAM_H_
