// group_batch.h — one RocksDB write for a commit group.
//
// Each transaction fills one rocksdb::WriteBatch: the embedder's keys first,
// then the store's own. Some of the store's keys hold a whole value that the
// next transaction on the same PG writes again: the ring backend's PG
// pointer and chunk list, the RocksDB backend's PG info and state. A commit
// group is written as one atomic batch, so nothing ever reads such a key
// between two of its writes in a group, and only the last one matters.
// Writing that one alone is what a commit group saves on these keys
// (docs/decisions/2026-11-22-first-rounds.md has the measured share).
//
// StoreKeyWriter writes such keys into a transaction's batch and notes where
// each record lies; MergeGroupBatches concatenates a group's batches in
// order and leaves out every noted record whose key a later noted record in
// the group writes again. Dropping an earlier Put or Delete of a key that a
// later Put or Delete of the same key follows leaves the batch's result
// unchanged whatever lies between them (a range deletion included), which is
// why only the store's point writes are noted, never the embedder's keys
// (they may use Merge or SingleDelete, where order and count matter).
#ifndef PGRING_STORE_GROUP_BATCH_H_
#define PGRING_STORE_GROUP_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"

namespace rocksdb {
class ColumnFamilyHandle;
class WriteBatch;
}  // namespace rocksdb

namespace pgring {

// One store write of a whole-value key: the key and the byte range of its
// record in its batch's Data().
struct StoreKeyWrite {
  std::string key;
  size_t begin = 0;
  size_t end = 0;
};

// Writes the store's whole-value keys into `batch` and notes each record in
// `notes`. Every key noted must be written whole (Put or Delete) every time
// it is written, by the store alone.
class StoreKeyWriter {
 public:
  StoreKeyWriter(rocksdb::WriteBatch* batch, rocksdb::ColumnFamilyHandle* cf,
                 std::vector<StoreKeyWrite>* notes)
      : batch_(batch), cf_(cf), notes_(notes) {}

  void Put(std::string key, std::string_view value);
  void Delete(std::string key);

 private:
  rocksdb::WriteBatch* const batch_;
  rocksdb::ColumnFamilyHandle* const cf_;
  std::vector<StoreKeyWrite>* const notes_;
};

// A group member: its batch and the store-key records noted in it.
struct GroupMember {
  rocksdb::WriteBatch* batch = nullptr;
  const std::vector<StoreKeyWrite>* store_keys = nullptr;
};

// Merges batches of one commit group into one write.
class GroupBatchMerger {
 public:
  // The members' batches, in commit order, as one batch; each noted record
  // whose key a later noted record writes again is left out. Adds the number
  // of records left out to *dropped.
  std::unique_ptr<rocksdb::WriteBatch> Merge(absl::Span<const GroupMember> members,
                                             uint64_t* dropped);

 private:
  // The last write of each key in the group: (member, record). Kept between
  // groups so its storage is reused; it points into the members' notes and
  // is cleared before Merge returns.
  absl::flat_hash_map<std::string_view, std::pair<size_t, size_t>> last_write_;
};

}  // namespace pgring

#endif  // PGRING_STORE_GROUP_BATCH_H_
