// export_fuzzer.cc — the export-file importer's parser (DecodeExport in
// src/tool/export_file.{h,cc}; `pgring-tool import` reads a file with it and
// imports nothing unless it accepts the whole file).
//
// Three passes per input:
//  1. the input as a file;
//  2. the input with every CRC made right (the header's, each section's and
//     the END section's file CRC, walking the sections as far as their
//     lengths allow), so the fuzzer reaches the checks behind the CRCs:
//     order, counts, versions, lengths;
//  3. a PG built from the input (FuzzedDataProvider), encoded: it must decode
//     to itself, and a strict prefix of its file must be refused.
// Checked: a refusal is kFailedPrecondition ("not a pgring export file", or a
// version/flags this reader does not know) or kDataLoss naming the offset; an
// accepted file re-encodes (EncodeExport) to the very same bytes, so nothing
// in it is ignored, and holds what FORMAT.md promises (versions strictly
// increasing and above the trim points).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "fuzz_common.h"
#include "tool/export_file.h"

namespace pgring::fuzz {
namespace {

using tool::DecodeExport;
using tool::EncodeExport;
using tool::ExportedPg;

void CheckInvariants(const ExportedPg& pg) {
  for (size_t i = 0; i < pg.entries.size(); ++i) {
    const Version floor = i == 0 ? pg.entries_trimmed_to : pg.entries[i - 1].version;
    FUZZ_CHECK(pg.entries[i].version > floor, absl::StrFormat("entry %u out of order", i));
  }
  for (size_t i = 0; i < pg.dups.size(); ++i) {
    const Version floor = i == 0 ? pg.dups_trimmed_to : pg.dups[i - 1].version;
    FUZZ_CHECK(pg.dups[i].version > floor, absl::StrFormat("dup %u out of order", i));
  }
}

// Returns whether the file was accepted.
bool CheckFile(std::string_view f) {
  absl::StatusOr<ExportedPg> pg = DecodeExport(f);
  if (!pg.ok()) {
    const absl::Status& s = pg.status();
    FUZZ_CHECK(absl::IsDataLoss(s) || absl::IsFailedPrecondition(s), s.ToString());
    FUZZ_CHECK(!s.message().empty(), "empty error message");
    if (absl::IsDataLoss(s)) {
      FUZZ_CHECK(absl::StartsWith(s.message(), "damaged export file"), s.ToString());
    }
    return false;
  }
  CheckInvariants(*pg);
  const std::string again = EncodeExport(*pg);
  FUZZ_CHECK(again == f, absl::StrFormat("accepted file (%u bytes) %s re-encodes as (%u bytes) %s",
                                         f.size(), Hex(f, 160), again.size(), Hex(again, 160)));
  return true;
}

// Recomputes every CRC that the file's structure lets us find.
std::string FixCrcs(std::string_view in) {
  std::string f(in);
  if (f.size() < tool::kExportHeaderSize) return f;
  PutMaskedCrc(&f, 16, 0, 16);
  size_t pos = tool::kExportHeaderSize;
  while (f.size() - pos >= 9) {
    const uint8_t type = static_cast<uint8_t>(f[pos]);
    const uint32_t len = DecodeFixed32(f.data() + pos + 1);
    if (len > f.size() - pos - 9) break;
    if (type == static_cast<uint8_t>(tool::ExportSection::kEnd) && len == 4) {
      PutMaskedCrc(&f, pos + 5, 0, pos);  // the file CRC
    }
    PutMaskedCrc(&f, pos + 5 + len, pos, pos + 5 + len);
    pos += 9 + len;
  }
  return f;
}

Version ConsumeVersionAfter(FuzzedDataProvider& fdp, const Version& v) {
  Version n = v;
  if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0 && n.epoch < UINT32_MAX) {
    ++n.epoch;
    n.version = fdp.ConsumeIntegralInRange<uint64_t>(0, 3);
  } else if (n.version < UINT64_MAX - 1000) {
    n.version += fdp.ConsumeIntegralInRange<uint64_t>(1, 1000);
  } else if (n.epoch < UINT32_MAX) {
    ++n.epoch;
    n.version = 0;
  }
  return n;
}

void CheckGenerated(std::string_view in) {
  FuzzedDataProvider fdp(reinterpret_cast<const uint8_t*>(in.data()), in.size());
  ExportedPg pg;
  pg.pg.pool = fdp.ConsumeIntegral<int64_t>();
  pg.pg.seed = fdp.ConsumeIntegral<uint32_t>();
  pg.pg.shard = fdp.ConsumeIntegral<int8_t>();
  for (auto& b : pg.source_uuid.bytes) b = fdp.ConsumeIntegral<uint8_t>();
  pg.source_backend = fdp.ConsumeBool() ? Backend::kRing : Backend::kRocksDb;
  pg.entries_trimmed_to = Version{fdp.ConsumeIntegralInRange<uint32_t>(0, 3),
                                  fdp.ConsumeIntegralInRange<uint64_t>(0, 100)};
  pg.dups_trimmed_to = Version{fdp.ConsumeIntegralInRange<uint32_t>(0, 3),
                               fdp.ConsumeIntegralInRange<uint64_t>(0, 100)};
  const int n_dups = fdp.ConsumeIntegralInRange<int>(0, 8);
  const int n_entries = fdp.ConsumeIntegralInRange<int>(0, 16);
  Version v = pg.dups_trimmed_to;
  for (int i = 0; i < n_dups; ++i) {
    v = ConsumeVersionAfter(fdp, v);
    if (v <= (pg.dups.empty() ? pg.dups_trimmed_to : pg.dups.back().version)) break;
    pg.dups.push_back(LogEntry{v, fdp.ConsumeRandomLengthString(64)});
  }
  v = pg.entries_trimmed_to;
  for (int i = 0; i < n_entries; ++i) {
    v = ConsumeVersionAfter(fdp, v);
    if (v <= (pg.entries.empty() ? pg.entries_trimmed_to : pg.entries.back().version)) break;
    pg.entries.push_back(LogEntry{v, fdp.ConsumeRandomLengthString(64)});
  }
  if (fdp.ConsumeBool()) pg.info = fdp.ConsumeRandomLengthString(64);
  const std::string f = EncodeExport(pg);
  absl::StatusOr<ExportedPg> back = DecodeExport(f);
  FUZZ_CHECK(back.ok(), absl::StrCat("a file EncodeExport wrote is refused: ",
                                     back.status().ToString()));
  FUZZ_CHECK(*back == pg, "a file EncodeExport wrote decodes differently");
  const size_t cut = fdp.ConsumeIntegralInRange<size_t>(0, f.size() - 1);
  absl::StatusOr<ExportedPg> part = DecodeExport(std::string_view(f).substr(0, cut));
  FUZZ_CHECK(!part.ok(), absl::StrFormat("a %u-byte prefix of a %u-byte file is accepted", cut,
                                         f.size()));
  FUZZ_CHECK(cut < 8 ? absl::IsFailedPrecondition(part.status())
                     : absl::IsDataLoss(part.status()),
             absl::StrFormat("prefix of %u bytes: %s", cut, part.status().ToString()));
}

}  // namespace
}  // namespace pgring::fuzz

extern "C" int PGRING_FUZZ_ENTRY(const uint8_t* data, size_t size) {
  using namespace pgring::fuzz;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  CheckFile(in);
  const std::string fixed = FixCrcs(in);
  if (fixed != in) CheckFile(fixed);
  CheckGenerated(in);
  return 0;
}
