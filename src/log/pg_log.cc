#include "log/pg_log.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "device/block_device.h"
#include "log/ring_reader.h"
#include "util/status_macros.h"

namespace pgring {

PgLog::PgLog(const PgId& id_in, uint32_t stamp_in, uint32_t block_size)
    : id(id_in),
      name(id_in.ToString()),
      stamp(stamp_in),
      tail_block(std::make_unique<AlignedBuffer>(block_size)) {
  ptr.stamp = stamp_in;
}

uint64_t PgLog::ComputeHead(uint64_t tail) const {
  uint64_t head = tail;
  const uint64_t anchor = ptr.head;
  if (!entries.empty()) head = std::min(head, MappingTable::Pos(entries.front(), anchor));
  if (!dups.empty()) head = std::min(head, MappingTable::Pos(dups.front(), anchor));
  if (has_info) head = std::min(head, info_pos);
  if (has_rewind_pin) head = std::min(head, rewind_pin_pos);
  return head;
}

PgUndo::PgUndo(PgLog* pg)
    : pg_(pg),
      chunks_(pg->chunks),
      ptr_(pg->ptr),
      last_version_(pg->last_version),
      last_dup_version_(pg->last_dup_version),
      has_info_(pg->has_info),
      info_(pg->info),
      info_pos_(pg->info_pos),
      has_rewind_pin_(pg->has_rewind_pin),
      rewind_pin_pos_(pg->rewind_pin_pos) {}

void PgUndo::Restore() {
  for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
    switch (it->first) {
      case kEntryAppended: pg_->entries.PopBack(); break;
      case kDupAppended: pg_->dups.PopBack(); break;
      case kEntryPoppedFront: pg_->entries.PushFront(it->second); break;
      case kEntryPoppedBack: pg_->entries.PushBack(it->second); break;
      case kDupPoppedFront: pg_->dups.PushFront(it->second); break;
      case kDupPoppedBack: pg_->dups.PushBack(it->second); break;
    }
  }
  journal_.clear();
  pg_->chunks = chunks_;
  pg_->ptr = ptr_;
  pg_->last_version = last_version_;
  pg_->last_dup_version = last_dup_version_;
  pg_->has_info = has_info_;
  pg_->info = info_;
  pg_->info_pos = info_pos_;
  pg_->has_rewind_pin = has_rewind_pin_;
  pg_->rewind_pin_pos = rewind_pin_pos_;
}

namespace {

absl::Status CheckPayload(const PgLog& pg, const Limits& limits, size_t size,
                          const char* what) {
  if (size > limits.max_payload_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PG %s: %s of %u bytes is larger than the %u-byte limit", pg.name, what,
        size, limits.max_payload_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyOp(const Transaction::Op& op, const Limits& limits,
                     uint64_t record_pos, uint64_t* live_items, PgLog* pg,
                     PgUndo* undo, RecordBodyBuilder* body) {
  using T = Transaction::OpType;
  switch (op.type) {
    case T::kAppendEntry: {
      if (auto s = CheckPayload(*pg, limits, op.payload.size(), "entry"); !s.ok()) return s;
      if (op.version <= pg->last_version) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "PG %s: entry version %s is not after the last version %s", pg->name,
            op.version.ToString(), pg->last_version.ToString()));
      }
      if (pg->entries.size() >= limits.max_entries_per_pg) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "PG %s: %u entries, the per-PG limit; trim the log", pg->name, pg->entries.size()));
      }
      if (*live_items >= limits.max_total_entries) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "store holds %u entries and dups, the store-wide limit; trim logs", *live_items));
      }
      pg->entries.Append(op.version, record_pos);
      undo->EntryAppended();
      pg->last_version = op.version;
      pg->has_rewind_pin = false;
      ++*live_items;
      body->AddEntry(op.version, op.payload);
      return absl::OkStatus();
    }
    case T::kAppendDup: {
      if (auto s = CheckPayload(*pg, limits, op.payload.size(), "dup"); !s.ok()) return s;
      if (op.version <= pg->last_dup_version) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "PG %s: dup version %s is not after the last dup version %s", pg->name,
            op.version.ToString(), pg->last_dup_version.ToString()));
      }
      if (pg->dups.size() >= limits.max_dups_per_pg) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "PG %s: %u dups, the per-PG limit; trim the dups", pg->name, pg->dups.size()));
      }
      if (*live_items >= limits.max_total_entries) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "store holds %u entries and dups, the store-wide limit; trim logs", *live_items));
      }
      pg->dups.Append(op.version, record_pos);
      undo->DupAppended();
      pg->last_dup_version = op.version;
      ++*live_items;
      body->AddDup(op.version, op.payload);
      return absl::OkStatus();
    }
    case T::kSetInfo: {
      if (auto s = CheckPayload(*pg, limits, op.payload.size(), "info"); !s.ok()) return s;
      pg->has_info = true;
      pg->info = op.payload;
      pg->info_pos = record_pos;
      body->AddInfo(op.payload);
      return absl::OkStatus();
    }
    case T::kTrim: {
      if (op.version > pg->last_version) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: trim to %s is past the newest entry %s", pg->name,
            op.version.ToString(), pg->last_version.ToString()));
      }
      if (op.version <= pg->ptr.entries_trimmed_to) return absl::OkStatus();
      while (!pg->entries.empty() && pg->entries.front().v() <= op.version) {
        undo->EntryPopped(true, pg->entries.PopFront());
        --*live_items;
      }
      pg->ptr.entries_trimmed_to = op.version;
      return absl::OkStatus();
    }
    case T::kTrimDups: {
      if (op.version > pg->last_dup_version) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: trim of dups to %s is past the newest dup %s", pg->name,
            op.version.ToString(), pg->last_dup_version.ToString()));
      }
      if (op.version <= pg->ptr.dups_trimmed_to) return absl::OkStatus();
      while (!pg->dups.empty() && pg->dups.front().v() <= op.version) {
        undo->DupPopped(true, pg->dups.PopFront());
        --*live_items;
      }
      pg->ptr.dups_trimmed_to = op.version;
      return absl::OkStatus();
    }
    case T::kRewind: {
      if (op.version < pg->ptr.entries_trimmed_to) {
        return absl::OutOfRangeError(absl::StrFormat(
            "PG %s: rewind to %s is before the log's tail (trimmed to %s)", pg->name,
            op.version.ToString(), pg->ptr.entries_trimmed_to.ToString()));
      }
      if (op.version >= pg->last_version) return absl::OkStatus();
      while (!pg->entries.empty() && pg->entries.back().v() > op.version) {
        undo->EntryPopped(false, pg->entries.PopBack());
        --*live_items;
      }
      pg->last_version = op.version;
      if (pg->entries.empty()) {
        pg->has_rewind_pin = true;
        pg->rewind_pin_pos = record_pos;
      }
      body->AddRewind(op.version);
      return absl::OkStatus();
    }
    case T::kResetLog: {
      while (!pg->entries.empty()) {
        undo->EntryPopped(false, pg->entries.PopBack());
        --*live_items;
      }
      while (!pg->dups.empty()) {
        undo->DupPopped(false, pg->dups.PopBack());
        --*live_items;
      }
      pg->last_version = Version::Min();
      pg->last_dup_version = Version::Min();
      pg->ptr.entries_trimmed_to = Version::Min();
      pg->ptr.dups_trimmed_to = Version::Min();
      pg->has_rewind_pin = false;
      body->AddReset();
      return absl::OkStatus();
    }
    case T::kCreatePg:
    case T::kRemovePg:
      break;
  }
  return absl::InternalError("ApplyOp: PG creation and removal belong to the store");
}

absl::Status ReplayRecord(std::string_view body, uint64_t lpos, PgLog* pg) {
  return ForEachItem(body, [&](const Item& item) -> absl::Status {
    switch (item.kind) {
      case ItemKind::kEntry:
        if (item.version <= pg->last_version) {
          return absl::DataLossError(absl::StrFormat(
              "entry version %s is not after %s (body offset %u)", item.version.ToString(),
              pg->last_version.ToString(), item.offset));
        }
        pg->entries.Append(item.version, lpos);
        pg->last_version = item.version;
        pg->has_rewind_pin = false;
        break;
      case ItemKind::kDup:
        if (item.version <= pg->last_dup_version) {
          return absl::DataLossError(absl::StrFormat(
              "dup version %s is not after %s (body offset %u)", item.version.ToString(),
              pg->last_dup_version.ToString(), item.offset));
        }
        pg->dups.Append(item.version, lpos);
        pg->last_dup_version = item.version;
        break;
      case ItemKind::kInfo:
        pg->has_info = true;
        pg->info.assign(item.payload.data(), item.payload.size());
        pg->info_pos = lpos;
        break;
      case ItemKind::kRewind:
        while (!pg->entries.empty() && pg->entries.back().v() > item.version) {
          pg->entries.PopBack();
        }
        // A marker is written only when it lowers the last version, so it
        // sets it even when the entries it dropped lie behind the head.
        pg->last_version = item.version;
        if (pg->entries.empty()) {
          pg->has_rewind_pin = true;
          pg->rewind_pin_pos = lpos;
        }
        break;
      case ItemKind::kReset:
        pg->entries.Clear();
        pg->dups.Clear();
        pg->last_version = Version::Min();
        pg->last_dup_version = Version::Min();
        pg->has_rewind_pin = false;
        break;
      case ItemKind::kPad:
        break;
    }
    return absl::OkStatus();
  });
}

void FinishReplay(PgLog* pg) {
  while (!pg->entries.empty() && pg->entries.front().v() <= pg->ptr.entries_trimmed_to) {
    pg->entries.PopFront();
  }
  while (!pg->dups.empty() && pg->dups.front().v() <= pg->ptr.dups_trimmed_to) {
    pg->dups.PopFront();
  }
  pg->last_version = std::max(pg->last_version, pg->ptr.entries_trimmed_to);
  pg->last_dup_version = std::max(pg->last_dup_version, pg->ptr.dups_trimmed_to);
}

absl::Status RecoverPgLog(BlockDevice* device, const Geometry& geo, PgLog* pg) {
  const PgPointer& p = pg->ptr;
  if (p.head < pg->chunks.base || p.tail > RingEnd(pg->chunks, geo)) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: pointer [%u, %u) lies outside its chunks [%u, %u)", pg->name, p.head, p.tail,
        pg->chunks.base, RingEnd(pg->chunks, geo)));
  }
  if (pg->chunks.base % geo.chunk_size != 0) {
    return absl::DataLossError(absl::StrFormat("PG %s: chunk list base %u is not chunk-aligned",
                                               pg->name, pg->chunks.base));
  }
  RingReader reader(device, geo, pg->chunks, pg->name, pg->stamp, p.head, p.tail);
  RingRecord rec;
  uint64_t records = 0;
  while (true) {
    absl::Status s = reader.Next(&rec);
    if (absl::IsOutOfRange(s)) break;
    if (!s.ok()) return s;
    ++records;
    if ((rec.header.type & ~kSkippableBit) != kRecordTxn) continue;  // skippable, unknown
    s = ReplayRecord(rec.body, rec.lpos, pg);
    if (!s.ok()) return reader.Damage(rec.lpos, std::string(s.message()));
  }
  if (records > 0 && reader.next_seq() != p.tail_seq) {
    return absl::DataLossError(absl::StrFormat(
        "PG %s: the last record before the tail has sequence %u, the pointer expects %u",
        pg->name, reader.next_seq() - 1, p.tail_seq - 1));
  }
  FinishReplay(pg);
  if (p.tail % geo.block_size != 0) {
    std::vector<Extent> ex;
    MapRange(pg->chunks, geo, geo.AlignDown(p.tail), geo.block_size, &ex);
    RETURN_IF_ERROR(device->Read(ex[0].device_offset, pg->tail_block->span()));
  }
  return absl::OkStatus();
}

}  // namespace pgring
