#include "log/unhomed_runs.h"

namespace pgring {

UnhomedRuns::UnhomedRuns(std::initializer_list<UnhomedRun> runs) {
  for (const UnhomedRun& r : runs) push_back(r);
}

size_t UnhomedRuns::FirstEndingPast(uint64_t lpos) const {
  return runs_.PartitionPoint([&](size_t, const Packed& p) { return p[0] <= lpos; });
}

void UnhomedRuns::push_back(const UnhomedRun& run) { runs_.push_back(Pack(run)); }

void UnhomedRuns::pop_front() { runs_.pop_front(); }

void UnhomedRuns::clear() { runs_.clear(); }

}  // namespace pgring
