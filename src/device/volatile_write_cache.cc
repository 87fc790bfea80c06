// volatile_write_cache.cc — the write-cache model behind FaultInjectionDevice.
#include "device/volatile_write_cache.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>

#include "device/aligned_buffer.h"

namespace pgring {

VolatileWriteCache::VolatileWriteCache(uint32_t block_size, uint32_t tear_unit)
    : block_size_(block_size), tear_unit_(tear_unit == 0 ? block_size : tear_unit) {
  if (tear_unit_ < 512 || tear_unit_ > block_size_ || (tear_unit_ & (tear_unit_ - 1)) != 0) {
    // A test-construction bug: there is no caller to return a Status to.
    std::fprintf(stderr, "VolatileWriteCache: tear unit %u is not a power of two in [512, %u]\n",
                 tear_unit_, block_size_);
    std::abort();
  }
}

absl::Status VolatileWriteCache::Issue(uint64_t id, uint64_t offset, const char* data,
                                       uint64_t length, BlockDevice* base) {
  if (length == 0) return absl::OkStatus();
  const uint64_t first = offset / block_size_;
  const uint64_t n = length / block_size_;
  bool any_new = false;
  for (uint64_t b = first; b < first + n && !any_new; ++b) any_new = !blocks_.contains(b);
  if (any_new) {
    // What the medium holds where this write lands, if it never does.
    AlignedBuffer before(length);
    absl::Status s = base->Read(offset, before.span());
    if (!s.ok()) return s;
    for (uint64_t i = 0; i < n; ++i) {
      if (!blocks_.contains(first + i)) {
        blocks_[first + i].durable.assign(before.data() + i * block_size_, block_size_);
      }
    }
  }
  for (uint64_t i = 0; i < n; ++i) {
    blocks_[first + i].versions.push_back(
        Version{std::string(data + i * block_size_, block_size_), id, 0});
  }
  in_flight_[id] = Range{first, n};
  return absl::OkStatus();
}

void VolatileWriteCache::Complete(uint64_t id) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  const Range r = it->second;
  in_flight_.erase(it);
  const uint64_t number = ++completions_;
  for (uint64_t b = r.first_block; b < r.first_block + r.blocks; ++b) {
    std::vector<Version>& v = blocks_[b].versions;
    // Completed versions first: this one goes right after the last of them.
    auto done_end = std::find_if(v.begin(), v.end(), [](const Version& x) { return x.completed == 0; });
    auto mine = std::find_if(done_end, v.end(), [id](const Version& x) { return x.write_id == id; });
    if (mine == v.end()) continue;
    mine->completed = number;
    std::rotate(done_end, mine, mine + 1);
  }
}

void VolatileWriteCache::Abandon(uint64_t id) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  const Range r = it->second;
  in_flight_.erase(it);
  for (uint64_t b = r.first_block; b < r.first_block + r.blocks; ++b) {
    auto bit = blocks_.find(b);
    if (bit == blocks_.end()) continue;
    std::erase_if(bit->second.versions, [id](const Version& x) { return x.write_id == id; });
    if (bit->second.versions.empty()) blocks_.erase(bit);
  }
}

void VolatileWriteCache::FlushDone(uint64_t mark) {
  for (auto it = blocks_.begin(); it != blocks_.end();) {
    std::vector<Version>& v = it->second.versions;
    // The versions completed before the flush began: a prefix of the list.
    auto covered_end = std::find_if(v.begin(), v.end(), [mark](const Version& x) {
      return x.completed == 0 || x.completed > mark;
    });
    if (covered_end != v.begin()) {
      it->second.durable = std::move(std::prev(covered_end)->data);
      v.erase(v.begin(), covered_end);
    }
    it = v.empty() ? blocks_.erase(it) : std::next(it);
  }
}

absl::Status VolatileWriteCache::WriteImage(CrashImageMode mode, uint64_t seed,
                                            BlockDevice* base, uint64_t* torn_inside) {
  if (torn_inside != nullptr) *torn_inside = 0;
  // mt19937_64 is specified exactly by the standard, so a seed names the
  // same image on every platform (absl::BitGen makes no such promise).
  std::mt19937_64 rng(seed);
  std::string image;
  for (const auto& [index, b] : blocks_) {
    switch (mode) {
      case CrashImageMode::kDropUnflushed:
        image = b.durable;
        break;
      case CrashImageMode::kKeepAll: {
        image = b.durable;
        for (const Version& v : b.versions) {
          if (v.completed != 0) image = v.data;
        }
        break;
      }
      case CrashImageMode::kRandomPerBlock:
        image.resize(block_size_);
        for (uint32_t at = 0; at < block_size_; at += tear_unit_) {
          const uint64_t k = rng() % (b.versions.size() + 1);
          const std::string& from = k == 0 ? b.durable : b.versions[k - 1].data;
          image.replace(at, tear_unit_, from, at, tear_unit_);
        }
        if (torn_inside != nullptr && tear_unit_ < block_size_ && image != b.durable &&
            std::none_of(b.versions.begin(), b.versions.end(),
                         [&](const Version& v) { return v.data == image; })) {
          ++*torn_inside;
        }
        break;
    }
    absl::Status s = base->Write(index * block_size_, image);
    if (!s.ok()) return s;
  }
  blocks_.clear();
  in_flight_.clear();
  return absl::OkStatus();
}

std::vector<std::string> VolatileWriteCache::Candidates(uint64_t index) const {
  std::vector<std::string> out;
  auto it = blocks_.find(index);
  if (it == blocks_.end()) return out;
  out.push_back(it->second.durable);
  for (const Version& v : it->second.versions) out.push_back(v.data);
  return out;
}

}  // namespace pgring
