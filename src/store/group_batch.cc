#include "store/group_batch.h"

#include <rocksdb/write_batch.h>

#include <utility>

#include "util/coding.h"

namespace pgring {
namespace {

// A RocksDB write batch is "sequence:u64 count:u32 record*" (the format
// LevelDB defined and RocksDB keeps, write_batch.cc). Concatenating records
// and adding counts merges batches into one atomic write without re-parsing
// them; the public API has no Append. Leaving a record out is cutting its
// byte range and counting one less.
constexpr size_t kBatchHeader = 12;

}  // namespace

void StoreKeyWriter::Put(std::string key, std::string_view value) {
  const size_t begin = batch_->GetDataSize();
  batch_->Put(cf_, key, rocksdb::Slice(value.data(), value.size()));
  notes_->push_back(StoreKeyWrite{std::move(key), begin, batch_->GetDataSize()});
}

void StoreKeyWriter::Delete(std::string key) {
  const size_t begin = batch_->GetDataSize();
  batch_->Delete(cf_, key);
  notes_->push_back(StoreKeyWrite{std::move(key), begin, batch_->GetDataSize()});
}

std::unique_ptr<rocksdb::WriteBatch> GroupBatchMerger::Merge(
    absl::Span<const GroupMember> members, uint64_t* dropped) {
  last_write_.clear();
  size_t total = kBatchHeader;
  for (size_t m = 0; m < members.size(); ++m) {
    total += members[m].batch->GetDataSize() - kBatchHeader;
    if (members[m].store_keys == nullptr) continue;
    const auto& notes = *members[m].store_keys;
    for (size_t r = 0; r < notes.size(); ++r) last_write_[notes[r].key] = {m, r};
  }
  std::string rep(kBatchHeader, '\0');
  rep.reserve(total);
  uint32_t count = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    const std::string& data = members[m].batch->Data();
    count += members[m].batch->Count();
    size_t pos = kBatchHeader;
    if (members[m].store_keys != nullptr) {
      const auto& notes = *members[m].store_keys;
      for (size_t r = 0; r < notes.size(); ++r) {
        if (last_write_.find(notes[r].key)->second == std::make_pair(m, r)) continue;
        // Written again later in the group: cut this record out. Notes are
        // in write order, so their ranges ascend and do not overlap.
        rep.append(data, pos, notes[r].begin - pos);
        pos = notes[r].end;
        --count;
        ++*dropped;
      }
    }
    rep.append(data, pos, std::string::npos);
  }
  EncodeFixed32(rep.data() + 8, count);
  last_write_.clear();
  return std::make_unique<rocksdb::WriteBatch>(std::move(rep));
}

}  // namespace pgring
