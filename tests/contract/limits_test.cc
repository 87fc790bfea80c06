// The limits of the public API (Options::limits, the PG id, the version), at
// each one's edge, in every store mode (the RocksDB backend, per-PG rings,
// rings behind the log stream) on a real partition (a file opened with
// O_DIRECT) and a real RocksDB: what is at the limit is accepted, read back
// byte for byte and still there after a reopen; one more is refused with its
// exact code and a message naming the limit, changes nothing, and the store
// goes on working (a valid transaction after it commits, reads back and
// survives a reopen). The codes are the same in every mode: the rules live
// once (src/log/pg_log_state.cc for payloads and counts, src/store/pg_map.h
// for PG ids and max_pgs, RingStore::ReserveRing for max_chunks_per_pg, which
// the RocksDB backend has no use for).
#include <gmock/gmock.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "format/record.h"
#include "util/store_fixture.h"
#include "util/sync.h"

namespace pgring::testing {
namespace {

using ::testing::HasSubstr;

// `n` bytes of every value 0..255 (zeros included), different for each seed.
std::string Bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t r = rng();
    for (size_t j = 0; j < 8 && i + j < n; ++j) s[i + j] = static_cast<char>(r >> (8 * j));
  }
  return s;
}

// Byte-exact equality without printing a megabyte when it fails.
::testing::AssertionResult SameBytes(const std::string& got, const std::string& want) {
  if (got == want) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return ::testing::AssertionFailure() << "got " << got.size() << " bytes, want " << want.size()
                                       << "; first difference at byte " << i;
}

class LimitsTest : public StoreFixture, public ::testing::WithParamInterface<StoreMode> {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    UseFileDevice();
    SetLayout(GetParam(), &options_);
    MkfsOptions m = DefaultMkfs();
    m.backend = BackendOf(GetParam());
    Mkfs(m);
  }
  bool IsRing() const { return BackendOf(GetParam()) == Backend::kRing; }

  // The PG's entries, dups and info are exactly these.
  void ExpectLog(const PgId& pg, const std::vector<LogEntry>& entries,
                 const std::vector<LogEntry>& dups, const std::string* info) {
    auto e = store_->ReadEntries(pg);
    ASSERT_OK(e);
    ASSERT_EQ(e->size(), entries.size()) << pg.ToString();
    for (size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ((*e)[i].version, entries[i].version) << pg.ToString() << " entry " << i;
      EXPECT_TRUE(SameBytes((*e)[i].payload, entries[i].payload))
          << pg.ToString() << " entry " << i;
    }
    auto d = store_->ReadDups(pg);
    ASSERT_OK(d);
    ASSERT_EQ(d->size(), dups.size()) << pg.ToString();
    for (size_t i = 0; i < dups.size(); ++i) {
      EXPECT_EQ((*d)[i].version, dups[i].version) << pg.ToString() << " dup " << i;
      EXPECT_TRUE(SameBytes((*d)[i].payload, dups[i].payload)) << pg.ToString() << " dup " << i;
    }
    auto in = store_->ReadInfo(pg);
    if (info == nullptr) {
      EXPECT_CODE(in, kNotFound);
    } else {
      ASSERT_OK(in);
      EXPECT_TRUE(SameBytes(*in, *info)) << pg.ToString() << " info";
    }
  }

  // The store still works after a refusal: a valid transaction on `pg`
  // (entry `v`, a new info) commits, reads back, and is there after a
  // reopen; `more` checks whatever else must have survived, after the
  // reopen too.
  void ExpectStillWorks(const PgId& pg, const Version& v,
                        const std::function<void()>& more = [] {}) {
    const std::string payload = Bytes(300, v.version);
    ASSERT_OK(Do([&](Transaction* t) {
      t->AppendEntry(pg, v, payload);
      t->SetInfo(pg, "info after " + v.ToString());
    }));
    auto check = [&] {
      auto r = store_->ReadEntries(pg, v, v);
      ASSERT_OK(r);
      ASSERT_EQ(r->size(), 1u);
      EXPECT_TRUE(SameBytes(r->front().payload, payload));
      EXPECT_EQ(*store_->ReadInfo(pg), "info after " + v.ToString());
      more();
    };
    check();
    Reopen();
    ASSERT_NE(store_, nullptr);
    check();
  }
};

// A refusal's exact code, and a message naming the limit.
#define EXPECT_REFUSED(expr, expected, what)                                   \
  do {                                                                         \
    ::absl::Status _r = ::pgring::testing::ToStatus(expr);                     \
    EXPECT_EQ(_r.code(), ::absl::StatusCode::expected) << #expr << ": " << _r; \
    EXPECT_THAT(std::string(_r.message()), HasSubstr(what)) << #expr;          \
  } while (0)

// max_payload_bytes (the default, 1 MiB) for an entry, a dup and an info:
// the ring's chunks are 64 KiB here, so a record at the limit spans 17 of
// them, and it is larger than the whole log stream (16 chunks here), which
// takes it straight to the ring.
TEST_P(LimitsTest, PayloadAtTheLimitAndOneByteOver) {
  options_.stream.max_chunks = 16;
  ASSERT_OK(Open(options_));
  const uint32_t max = options_.limits.max_payload_bytes;
  ASSERT_EQ(max, 1u << 20);
  const PgId pg = Pg(1);
  ASSERT_OK(Create(pg));
  const std::string entry = Bytes(max, 1), dup = Bytes(max, 2), info = Bytes(max, 3);
  const std::string over = Bytes(max + 1, 4);
  const std::string size_text = std::to_string(max + 1) + " bytes";

  // One byte over, for each kind, after a valid op in the same transaction:
  // refused, and the valid op is undone with it.
  EXPECT_REFUSED(Do([&](Transaction* t) {
                   t->AppendEntry(pg, V(1, 1), "fine");
                   t->AppendEntry(pg, V(1, 2), over);
                 }),
                 kInvalidArgument, "limits.max_payload_bytes");
  EXPECT_REFUSED(Do([&](Transaction* t) {
                   t->AppendEntry(pg, V(1, 1), "fine");
                   t->AppendDup(pg, V(1, 1), over);
                 }),
                 kInvalidArgument, "dup of " + size_text);
  EXPECT_REFUSED(Do([&](Transaction* t) {
                   t->AppendEntry(pg, V(1, 1), "fine");
                   t->SetInfo(pg, over);
                 }),
                 kInvalidArgument, "info of " + size_text);
  EXPECT_REFUSED(Do([&](Transaction* t) { t->AppendEntry(pg, V(1, 1), over); }),
                 kInvalidArgument, "entry of " + size_text);
  ExpectLog(pg, {}, {}, nullptr);

  // At the limit: a 1 MiB entry alone, then a 1 MiB dup and info together.
  ASSERT_OK(Do([&](Transaction* t) { t->AppendEntry(pg, V(1, 1), entry); }));
  ASSERT_OK(Do([&](Transaction* t) {
    t->AppendDup(pg, V(1, 1), dup);
    t->SetInfo(pg, info);
  }));
  const std::vector<LogEntry> entries = {{V(1, 1), entry}};
  const std::vector<LogEntry> dups = {{V(1, 1), dup}};
  ExpectLog(pg, entries, dups, &info);
  auto st = store_->GetPgStats(pg);
  ASSERT_OK(st);
  EXPECT_EQ(st->entry_bytes, max);
  EXPECT_EQ(st->dup_bytes, max);
  EXPECT_EQ(st->info_bytes, max);
  Reopen();
  ExpectLog(pg, entries, dups, &info);

  // After the reopen one byte more is still refused, and the store works on.
  EXPECT_REFUSED(Do([&](Transaction* t) { t->AppendEntry(pg, V(1, 2), over); }),
                 kInvalidArgument, "limits.max_payload_bytes");
  ExpectStillWorks(pg, V(1, 2), [&] {
    auto e = store_->ReadEntries(pg, V(1, 1), V(1, 1));
    ASSERT_OK(e);
    ASSERT_EQ(e->size(), 1u);
    EXPECT_TRUE(SameBytes(e->front().payload, entry));
    auto d = store_->ReadDups(pg);
    ASSERT_OK(d);
    ASSERT_EQ(d->size(), 1u);
    EXPECT_TRUE(SameBytes(d->front().payload, dup));
  });
}

// max_pgs: the max_pgs-th PG is created, the next is refused, before and
// after a reopen (the count comes back from disk), and a removal makes room.
TEST_P(LimitsTest, MaxPgs) {
  options_.limits.max_pgs = 4;
  ASSERT_OK(Open(options_));
  for (uint32_t i = 0; i < 4; ++i) ASSERT_OK(Create(Pg(i)));
  EXPECT_REFUSED(Create(Pg(4)), kResourceExhausted, "limits.max_pgs");
  // Refused with an append before it: the append is undone.
  EXPECT_REFUSED(Do([](Transaction* t) {
                   t->AppendEntry(Pg(0), V(1, 1), "x");
                   t->CreatePg(Pg(4));
                 }),
                 kResourceExhausted, "store holds 4 PGs");
  EXPECT_TRUE(store_->ReadEntries(Pg(0))->empty());
  // Ops apply in order: create-then-remove exceeds the limit, the reverse
  // does not.
  EXPECT_REFUSED(Do([](Transaction* t) {
                   t->CreatePg(Pg(4));
                   t->RemovePg(Pg(3));
                 }),
                 kResourceExhausted, "limits.max_pgs");
  EXPECT_EQ(*store_->ListPgs(), (std::vector<PgId>{Pg(0), Pg(1), Pg(2), Pg(3)}));
  ASSERT_OK(Do([](Transaction* t) {
    t->RemovePg(Pg(3));
    t->CreatePg(Pg(4));
  }));
  ExpectStillWorks(Pg(4), V(1, 1), [&] {
    EXPECT_EQ(*store_->ListPgs(), (std::vector<PgId>{Pg(0), Pg(1), Pg(2), Pg(4)}));
  });
  // Reopened full: still refused.
  EXPECT_REFUSED(Create(Pg(3)), kResourceExhausted, "limits.max_pgs");
  EXPECT_EQ(store_->GetStoreStats().pgs, 4u);
  ASSERT_OK(Do([](Transaction* t) { t->RemovePg(Pg(0)); }));
  ASSERT_OK(Create(Pg(5)));
  ExpectStillWorks(Pg(5), V(1, 1), [&] {
    EXPECT_EQ(*store_->ListPgs(), (std::vector<PgId>{Pg(1), Pg(2), Pg(4), Pg(5)}));
  });
}

// max_chunks_per_pg: a PG's ring grows to the limit, filled to its last
// byte by the largest entry that fits; one byte more is refused (ring
// backend). A trim lets the ring reuse its chunks; other PGs never noticed.
// The RocksDB backend has no chunks: the same appends all go in. In the
// stream layout the limit bounds the PG's log span all the same, but records
// written once to the stream hold none of the ring's chunks, so the ring
// holds at most the limit.
TEST_P(LimitsTest, MaxChunksPerPg) {
  constexpr uint32_t kMaxChunks = 4;
  constexpr size_t kEntry = 20000;
  options_.limits.max_chunks_per_pg = kMaxChunks;
  ASSERT_OK(Open(options_));
  const PgId pg = Pg(1), other = Pg(2);
  ASSERT_OK(Create(pg));
  ASSERT_OK(Create(other));
  std::vector<LogEntry> entries;
  uint64_t next = 1;
  auto append = [&](size_t size) {
    const Version v = V(1, next);
    std::string p = Bytes(size, v.version);
    absl::Status s = Do([&](Transaction* t) { t->AppendEntry(pg, v, p); });
    if (s.ok()) {
      entries.push_back({v, std::move(p)});
      ++next;
    }
    return s;
  };
  const uint64_t ring_bytes = uint64_t{kMaxChunks} * kChunkSize;
  // The ring full: all its chunks in per-PG rings; behind the stream, the
  // chunks its homed bytes need and no more than the limit.
  auto expect_full_ring = [&](uint64_t chunks) {
    if (GetParam() != StoreMode::kRingStream) {
      EXPECT_EQ(chunks, kMaxChunks);
      return;
    }
    const PgStats now = *store_->GetPgStats(pg);
    const uint64_t homed_bytes = now.ring_bytes_used - now.unhomed_bytes;
    EXPECT_GE(chunks * kChunkSize, homed_bytes);
    EXPECT_LE(chunks, (homed_bytes + kChunkSize - 1) / kChunkSize + 1);
    EXPECT_LE(chunks, kMaxChunks);
  };
  if (!IsRing()) {
    // Twice what the ring would take.
    while (entries.size() * kEntry < 2 * ring_bytes) ASSERT_OK(append(kEntry));
    EXPECT_EQ(store_->GetPgStats(pg)->chunks, 0u);
    ExpectStillWorks(other, V(1, 1), [&] { ExpectLog(pg, entries, {}, nullptr); });
    return;
  }
  absl::Status refused;
  while ((refused = append(kEntry)).ok()) ASSERT_LT(entries.size(), 100u);
  EXPECT_REFUSED(refused, kResourceExhausted, "limits.max_chunks_per_pg");
  EXPECT_THAT(std::string(refused.message()), HasSubstr("PG " + pg.ToString()));
  auto st = store_->GetPgStats(pg);
  ASSERT_OK(st);
  expect_full_ring(st->chunks);
  // Head at 0 (nothing trimmed): the bytes used are the ring's lpos. The
  // largest entry whose record fits in what is left, and one byte more.
  ASSERT_LT(st->ring_bytes_used, ring_bytes);
  const uint64_t left = ring_bytes - st->ring_bytes_used;
  ASSERT_LT(left, kEntry);
  auto record_size = [](size_t payload) {
    return kRecordHeaderSize + RecordBodyBuilder::ItemSize(kItemVersionSize + payload);
  };
  size_t fit = 0;
  while (fit < left && record_size(fit + 1) <= left) ++fit;
  ASSERT_GT(fit, 0u) << left << " bytes left";
  EXPECT_REFUSED(append(fit + 1), kResourceExhausted, "limits.max_chunks_per_pg");
  ASSERT_OK(append(fit));
  st = store_->GetPgStats(pg);
  ASSERT_OK(st);
  expect_full_ring(st->chunks);
  EXPECT_EQ(st->ring_bytes_used, ring_bytes);  // full to the last byte
  EXPECT_REFUSED(append(0), kResourceExhausted, "limits.max_chunks_per_pg");
  // The other PG has its own bound; this one's entries are all there.
  ExpectStillWorks(other, V(1, 1), [&] {
    ExpectLog(pg, entries, {}, nullptr);
    expect_full_ring(store_->GetPgStats(pg)->chunks);
  });
  // Reopened full: still refused.
  EXPECT_REFUSED(append(kEntry), kResourceExhausted, "limits.max_chunks_per_pg");
  // A trim past the first chunk lets the ring reuse it.
  const Version trim_to = entries[entries.size() / 2].version;
  ASSERT_OK(Do([&](Transaction* t) { t->Trim(pg, trim_to); }));
  entries.erase(entries.begin(), entries.begin() + entries.size() / 2 + 1);
  ASSERT_OK(append(kEntry));
  ASSERT_OK(append(kEntry));
  EXPECT_LE(store_->GetPgStats(pg)->chunks, kMaxChunks);
  ExpectStillWorks(other, V(1, 2), [&] {
    ExpectLog(pg, entries, {}, nullptr);
    EXPECT_LE(store_->GetPgStats(pg)->chunks, kMaxChunks);
  });
}

// max_chunks_per_pg x chunk size may reach 4 GiB (a ring's lpos span) and
// not pass it: the ring backend refuses to open past it; the RocksDB
// backend has no rings.
TEST_P(LimitsTest, MaxChunksPerPgSpan) {
  const uint32_t at = static_cast<uint32_t>((1ull << 32) / kChunkSize);
  options_.limits.max_chunks_per_pg = at + 1;
  if (IsRing()) {
    EXPECT_REFUSED(Open(options_), kInvalidArgument, "limits.max_chunks_per_pg");
    EXPECT_EQ(store_, nullptr);
  } else {
    ASSERT_OK(Open(options_));
  }
  options_.limits.max_chunks_per_pg = at;
  ASSERT_OK(Open(options_));
  ASSERT_OK(Create(Pg(1)));
  ExpectStillWorks(Pg(1), V(1, 1));
}

// Not a Limits field, a format bound: a ring record's body is at most
// kMaxRecordBody (16 MiB - 1, a u24 length), so the ring refuses a
// transaction that writes more than that to one PG (kInvalidArgument, a bad
// argument, as an oversized payload is); the RocksDB backend has no such
// bound (docs/ROCKSDB_BACKEND.md). Here 15 entries at max_payload_bytes and
// a 16th that fills the body to its last byte, or one byte more.
TEST_P(LimitsTest, RingRecordBodyPerTransaction) {
  ASSERT_OK(Open(options_));
  const uint32_t max = options_.limits.max_payload_bytes;
  const size_t item = RecordBodyBuilder::ItemSize(kItemVersionSize + max);
  const size_t last = kMaxRecordBody - 15 * item - (item - max);
  ASSERT_EQ(RecordBodyBuilder::ItemSize(kItemVersionSize + last), item - max + last);
  ASSERT_LT(last, max);
  const std::string big = Bytes(max, 5), tail = Bytes(last + 1, 6);
  auto txn = [&](const PgId& pg, size_t last_size) {
    return Do([&](Transaction* t) {
      for (uint64_t v = 1; v <= 15; ++v) t->AppendEntry(pg, V(1, v), big);
      t->AppendEntry(pg, V(1, 16), std::string_view(tail).substr(0, last_size));
    });
  };
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  if (IsRing()) {
    EXPECT_REFUSED(txn(Pg(1), last + 1), kInvalidArgument, "a transaction may write at most");
    ExpectLog(Pg(1), {}, {}, nullptr);
  } else {
    ASSERT_OK(txn(Pg(2), last + 1));
  }
  ASSERT_OK(txn(Pg(1), last));
  std::vector<LogEntry> entries;
  for (uint64_t v = 1; v <= 15; ++v) entries.push_back({V(1, v), big});
  entries.push_back({V(1, 16), tail.substr(0, last)});
  ExpectLog(Pg(1), entries, {}, nullptr);
  ExpectStillWorks(Pg(1), V(1, 17), [&] {
    auto r = store_->ReadEntries(Pg(1), V(1, 1), V(1, 16));
    ASSERT_OK(r);
    ASSERT_EQ(r->size(), entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ((*r)[i].version, entries[i].version);
      EXPECT_TRUE(SameBytes((*r)[i].payload, entries[i].payload)) << "entry " << i;
    }
  });
}

// The per-PG entry and dup counts and the store-wide count, each at its
// edge: the last one in, the next refused, before and after a reopen.
TEST_P(LimitsTest, CountLimits) {
  options_.limits.max_entries_per_pg = 3;
  options_.limits.max_dups_per_pg = 2;
  options_.limits.max_total_entries = 7;
  ASSERT_OK(Open(options_));
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  ASSERT_OK(Do([](Transaction* t) {
    for (int i = 1; i <= 3; ++i) t->AppendEntry(Pg(1), V(1, i), "e");
    for (int i = 1; i <= 2; ++i) t->AppendDup(Pg(1), V(1, i), "d");
  }));
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 4), "e"); }),
                 kResourceExhausted, "limits.max_entries_per_pg");
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendDup(Pg(1), V(1, 3), "d"); }),
                 kResourceExhausted, "limits.max_dups_per_pg");
  ASSERT_OK(Do([](Transaction* t) {
    t->AppendEntry(Pg(2), V(1, 1), "e");
    t->AppendDup(Pg(2), V(1, 1), "d");
  }));  // 7 in the store
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendEntry(Pg(2), V(1, 2), "e"); }),
                 kResourceExhausted, "limits.max_total_entries");
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendDup(Pg(2), V(1, 2), "d"); }),
                 kResourceExhausted, "limits.max_total_entries");
  Reopen();
  EXPECT_EQ(store_->GetStoreStats().live_entries + store_->GetStoreStats().live_dups, 7u);
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 4), "e"); }),
                 kResourceExhausted, "limits.max_entries_per_pg");
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendEntry(Pg(2), V(1, 2), "e"); }),
                 kResourceExhausted, "limits.max_total_entries");
  // Trimming makes room for exactly what was trimmed.
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 1)); }));
  ExpectStillWorks(Pg(1), V(1, 4), [&] {
    EXPECT_EQ(store_->GetPgStats(Pg(1))->entries, 3u);
  });
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendEntry(Pg(2), V(1, 2), "e"); }),
                 kResourceExhausted, "limits.max_total_entries");
}

// The stream records a PG's records lie in (the list of where they are,
// one entry a record): one more than the limit is refused naming it, and
// a trim, which moves the PG's oldest live record on, shortens the list.
TEST_P(LimitsTest, MaxStreamRecordsPerPg) {
  if (GetParam() != StoreMode::kRingStream) GTEST_SKIP() << "only the log stream keeps the list";
  options_.limits.max_stream_records_per_pg = 4;
  options_.stream.home_bytes = 0;  // records stay in the stream until trimmed
  ASSERT_OK(Open(options_));
  ASSERT_OK(Create(Pg(1)));
  ASSERT_OK(Create(Pg(2)));
  std::vector<LogEntry> entries;
  for (uint64_t v = 1; v <= 4; ++v) {
    entries.push_back(LogEntry{V(1, v), Bytes(100, v)});
    ASSERT_OK(Do([&](Transaction* t) { t->AppendEntry(Pg(1), V(1, v), entries.back().payload); }));
  }
  EXPECT_EQ(store_->GetPgStats(Pg(1))->stream_records, 4u);
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 5), "e"); }),
                 kResourceExhausted, "limits.max_stream_records_per_pg");
  EXPECT_REFUSED(Do([](Transaction* t) { t->SetInfo(Pg(1), "i"); }), kResourceExhausted,
                 "limits.max_stream_records_per_pg");
  // Nothing of the refused transactions, and another PG is not held back.
  ExpectLog(Pg(1), entries, {}, nullptr);
  ASSERT_OK(Do([](Transaction* t) { t->AppendEntry(Pg(2), V(1, 1), "e"); }));
  Reopen();
  ExpectLog(Pg(1), entries, {}, nullptr);
  EXPECT_REFUSED(Do([](Transaction* t) { t->AppendEntry(Pg(1), V(1, 5), "e"); }),
                 kResourceExhausted, "limits.max_stream_records_per_pg");
  // Trimming to the newest entry leaves one record live: room again.
  ASSERT_OK(Do([](Transaction* t) { t->Trim(Pg(1), V(1, 3)); }));
  ExpectStillWorks(Pg(1), V(1, 5), [&] { EXPECT_EQ(store_->GetPgStats(Pg(1))->entries, 2u); });
}

// Transactions in flight (submitted, their callback not yet fired): one
// more than the limit is refused, naming it, and its callback never fires;
// once they have committed, Submit takes more. Every queue the store keeps
// of transactions is bounded by this one count (pgring/options.h).
TEST_P(LimitsTest, MaxTransactionsInFlight) {
  options_.limits.max_transactions_in_flight = 3;
  ASSERT_OK(Open(options_));
  ASSERT_OK(Create(Pg(1)));
  auto gate = std::make_shared<CommitGate>();
  // Opened however the test ends: the store's close waits for them.
  absl::Cleanup open_gate = [gate] { gate->Open(absl::OkStatus()); };
  std::atomic<int> committed{0};
  for (uint64_t v = 1; v <= 3; ++v) {
    Transaction t;
    t.AppendEntry(Pg(1), V(1, v), "e");
    t.WaitFor(gate);
    ASSERT_OK(store_->Submit(std::move(t), [&committed](absl::Status s) {
      EXPECT_OK(s);
      committed.fetch_add(1);
    }));
  }
  EXPECT_REFUSED(
      [&] {
        Transaction t;
        t.AppendEntry(Pg(1), V(1, 4), "e");
        return store_->Submit(std::move(t), [](absl::Status) {
          ADD_FAILURE() << "a refused transaction's callback fired";
        });
      }(),
      kResourceExhausted, "limits.max_transactions_in_flight");
  EXPECT_EQ(committed.load(), 0);
  gate->Open(absl::OkStatus());
  ASSERT_OK(store_->Sync());
  EXPECT_EQ(committed.load(), 3);
  ExpectStillWorks(Pg(1), V(1, 4), [&] { EXPECT_EQ(store_->GetPgStats(Pg(1))->entries, 4u); });
  // At the limit again, each submitted from the callback of the one before
  // (a transaction leaves the count before its callback fires): none is
  // refused.
  auto gate2 = std::make_shared<CommitGate>();
  absl::Cleanup open_gate2 = [gate2] { gate2->Open(absl::OkStatus()); };
  for (uint64_t v = 5; v <= 6; ++v) {
    Transaction t;
    t.AppendEntry(Pg(1), V(1, v), "e");
    t.WaitFor(gate2);
    ASSERT_OK(store_->Submit(std::move(t), [](absl::Status s) { EXPECT_OK(s); }));
  }
  Notification chained;
  absl::Status chained_status;
  {
    Transaction t;
    t.AppendEntry(Pg(1), V(1, 7), "e");
    ASSERT_OK(store_->Submit(std::move(t), [&](absl::Status s) {
      EXPECT_OK(s);
      Transaction next;
      next.AppendEntry(Pg(1), V(1, 8), "e");
      chained_status = store_->Submit(std::move(next), [&](absl::Status s2) {
        EXPECT_OK(s2);
        chained.Notify();
      });
      if (!chained_status.ok()) chained.Notify();
    }));
  }
  gate2->Open(absl::OkStatus());
  chained.WaitForNotification();
  // A transaction submitted from a callback at the limit.
  EXPECT_OK(chained_status);
  ASSERT_OK(store_->Sync());
  EXPECT_EQ(store_->GetPgStats(Pg(1))->entries, 8u);
}

// A PG id at every field's extreme: pool (int64), seed (uint32) and shard
// (-1 for none, 0..127) at their lowest and highest, and 0. Each is created,
// listed in PgId order, read back, and the same after a reopen; ToString and
// Parse agree on it. A shard below -1 is refused.
TEST_P(LimitsTest, PgIdExtremes) {
  ASSERT_OK(Open(options_));
  std::vector<PgId> ids;
  for (int64_t pool : {std::numeric_limits<int64_t>::min(), int64_t{-1}, int64_t{0},
                       std::numeric_limits<int64_t>::max()}) {
    for (uint32_t seed : {uint32_t{0}, std::numeric_limits<uint32_t>::max()}) {
      for (int8_t shard : {int8_t{-1}, int8_t{0}, int8_t{127}}) ids.push_back({pool, seed, shard});
    }
  }
  auto payload = [](const PgId& id) { return "entry of " + id.ToString(); };
  ASSERT_OK(Do([&](Transaction* t) {
    for (const PgId& id : ids) {
      t->CreatePg(id);
      t->AppendEntry(id, V(1, 1), payload(id));
      t->SetInfo(id, "info of " + id.ToString());
    }
  }));
  std::sort(ids.begin(), ids.end());
  auto check = [&] {
    EXPECT_EQ(*store_->ListPgs(), ids);
    for (const PgId& id : ids) {
      const std::string info = "info of " + id.ToString();
      ExpectLog(id, {{V(1, 1), payload(id)}}, {}, &info);
      auto st = store_->GetPgStats(id);
      ASSERT_OK(st);
      EXPECT_EQ(st->pg, id);
      PgId parsed;
      ASSERT_TRUE(PgId::Parse(id.ToString(), &parsed)) << id.ToString();
      EXPECT_EQ(parsed, id) << id.ToString();
    }
  };
  check();
  Reopen();
  check();

  // Shards below -1 print as the unsharded PG and cannot be parsed: not PG
  // ids. Refused, with a valid creation before them undone.
  for (int8_t shard : {int8_t{-2}, std::numeric_limits<int8_t>::min()}) {
    for (const PgId& bad : {PgId{0, 0, shard}, PgId{std::numeric_limits<int64_t>::max(),
                                                   std::numeric_limits<uint32_t>::max(), shard}}) {
      EXPECT_REFUSED(Create(bad), kInvalidArgument,
                     "shard " + std::to_string(static_cast<int>(shard)));
      EXPECT_REFUSED(Do([&](Transaction* t) {
                       t->CreatePg(Pg(7));
                       t->CreatePg(bad);
                     }),
                     kInvalidArgument, "a shard is -1 (none) or 0..127");
      EXPECT_CODE(Do([&](Transaction* t) { t->AppendEntry(bad, V(1, 1), "x"); }), kNotFound);
      EXPECT_CODE(store_->ReadEntries(bad), kNotFound);
    }
  }
  EXPECT_EQ(*store_->ListPgs(), ids);
  // Removing the extremes and going on.
  ASSERT_OK(Do([&](Transaction* t) {
    t->RemovePg(ids.front());
    t->RemovePg(ids.back());
  }));
  ids.erase(ids.begin());
  ids.pop_back();
  ExpectStillWorks(ids.front(), V(1, 2), [&] { EXPECT_EQ(*store_->ListPgs(), ids); });
}

// Versions at their extremes: 0'0 is below every log (refused: an entry
// must come after the last version, 0'0 in an empty PG), 0'1 the first that
// goes in, and Version::Max() the last: nothing goes in after it, before or
// after a reopen, and a trim to it keeps that floor.
TEST_P(LimitsTest, VersionExtremes) {
  ASSERT_OK(Open(options_));
  const PgId pg = Pg(1);
  const Version max = Version::Max();
  ASSERT_OK(Create(pg));
  EXPECT_REFUSED(Do([&](Transaction* t) { t->AppendEntry(pg, Version::Min(), "x"); }),
                 kInvalidArgument, "not after the last version 0'0");
  EXPECT_REFUSED(Do([&](Transaction* t) { t->AppendDup(pg, Version::Min(), "x"); }),
                 kInvalidArgument, "not after the last dup version 0'0");
  ASSERT_OK(Do([&](Transaction* t) {
    t->AppendEntry(pg, V(0, 1), "first");
    t->AppendEntry(pg, max, "last");
    t->AppendDup(pg, max, "last dup");
  }));
  const std::vector<LogEntry> entries = {{V(0, 1), "first"}, {max, "last"}};
  const std::vector<LogEntry> dups = {{max, "last dup"}};
  auto check = [&] {
    ExpectLog(pg, entries, dups, nullptr);
    auto r = store_->ReadEntries(pg, max, max);
    ASSERT_OK(r);
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ(r->front().payload, "last");
    EXPECT_EQ(store_->GetPgStats(pg)->last_version, max);
    EXPECT_REFUSED(Do([&](Transaction* t) { t->AppendEntry(pg, max, "again"); }),
                   kInvalidArgument, "is not after the last version");
    EXPECT_REFUSED(Do([&](Transaction* t) { t->AppendDup(pg, max, "again"); }),
                   kInvalidArgument, "is not after the last dup version");
  };
  check();
  Reopen();
  check();
  ASSERT_OK(Do([&](Transaction* t) {
    t->Trim(pg, max);
    t->TrimDups(pg, max);
  }));
  auto trimmed = [&] {
    ExpectLog(pg, {}, {}, nullptr);
    EXPECT_REFUSED(Do([&](Transaction* t) { t->AppendEntry(pg, V(1, 1), "x"); }),
                   kInvalidArgument, "is not after the last version");
  };
  trimmed();
  Reopen();
  trimmed();
  // The PG goes on after a reset.
  ASSERT_OK(Do([&](Transaction* t) { t->ResetLog(pg); }));
  ExpectStillWorks(pg, V(1, 1));
}

INSTANTIATE_TEST_SUITE_P(Modes, LimitsTest, kAllStoreModes, StoreModeParamName);

}  // namespace
}  // namespace pgring::testing
