#include "tool/export_file.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pgring::tool {
namespace {

constexpr size_t kPgSectionSize = 8 + 4 + 1 + 16 + 1 + 12 + 12 + 8 + 8 + 1;

void PutVersion(std::string* d, const Version& v) {
  PutFixed32(d, v.epoch);
  PutFixed64(d, v.version);
}

Version GetVersion(const char* p) { return Version{DecodeFixed32(p), DecodeFixed64(p + 4)}; }

void AddSection(std::string* out, ExportSection type, std::string_view data) {
  const size_t start = out->size();
  out->push_back(static_cast<char>(type));
  PutFixed32(out, static_cast<uint32_t>(data.size()));
  out->append(data.data(), data.size());
  PutFixed32(out, crc32c::Mask(crc32c::Value(out->data() + start, out->size() - start)));
}

const char* SectionName(uint8_t t) {
  switch (static_cast<ExportSection>(t)) {
    case ExportSection::kPg:
      return "PG";
    case ExportSection::kDup:
      return "DUP";
    case ExportSection::kEntry:
      return "ENTRY";
    case ExportSection::kInfo:
      return "INFO";
    case ExportSection::kEnd:
      return "END";
  }
  return "unknown";
}

// Both kinds of file start with a 20-byte header whose last 4 bytes are
// the CRC of the first 16: present and intact, or kDataLoss.
absl::Status CheckHeader(std::string_view f) {
  if (f.size() < kExportHeaderSize) {
    return absl::DataLossError(
        absl::StrFormat("damaged export file: truncated in its header (%u bytes)", f.size()));
  }
  if (crc32c::Unmask(DecodeFixed32(f.data() + 16)) != crc32c::Value(f.data(), 16)) {
    return absl::DataLossError("damaged export file: header CRC mismatch");
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeExport(const ExportedPg& pg) {
  std::string out(kExportMagic, sizeof(kExportMagic));
  PutFixed32(&out, kExportFormatVersion);
  PutFixed32(&out, 0);  // flags
  PutFixed32(&out, crc32c::Mask(crc32c::Value(out.data(), out.size())));
  std::string d;
  PutFixed64(&d, static_cast<uint64_t>(pg.pg.pool));
  PutFixed32(&d, pg.pg.seed);
  d.push_back(static_cast<char>(pg.pg.shard));
  d.append(reinterpret_cast<const char*>(pg.source_uuid.bytes.data()), 16);
  d.push_back(static_cast<char>(pg.source_backend));
  PutVersion(&d, pg.entries_trimmed_to);
  PutVersion(&d, pg.dups_trimmed_to);
  PutFixed64(&d, pg.entries.size());
  PutFixed64(&d, pg.dups.size());
  d.push_back(pg.info ? 1 : 0);
  AddSection(&out, ExportSection::kPg, d);
  auto item = [&](ExportSection t, const LogEntry& e) {
    d.clear();
    PutVersion(&d, e.version);
    d += e.payload;
    AddSection(&out, t, d);
  };
  for (const auto& e : pg.dups) item(ExportSection::kDup, e);
  for (const auto& e : pg.entries) item(ExportSection::kEntry, e);
  if (pg.info) AddSection(&out, ExportSection::kInfo, *pg.info);
  d.clear();
  PutFixed32(&d, crc32c::Mask(crc32c::Value(out.data(), out.size())));
  AddSection(&out, ExportSection::kEnd, d);
  return out;
}

absl::StatusOr<ExportedPg> DecodeExport(std::string_view f) {
  if (f.size() < sizeof(kExportMagic) ||
      std::memcmp(f.data(), kExportMagic, sizeof(kExportMagic)) != 0) {
    return absl::FailedPreconditionError(
        "not a pgring export file (no \"PGRINGEX\" magic at offset 0)");
  }
  if (absl::Status h = CheckHeader(f); !h.ok()) return h;
  const uint32_t version = DecodeFixed32(f.data() + 8);
  if (version != kExportFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrFormat("export file format version %u; this pgring-tool reads version %u", version,
                        kExportFormatVersion));
  }
  if (DecodeFixed32(f.data() + 12) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("export file has flags 0x%08x this pgring-tool does not know",
                        DecodeFixed32(f.data() + 12)));
  }
  ExportedPg out;
  uint64_t want_entries = 0, want_dups = 0;
  bool want_info = false, have_pg = false, ended = false;
  size_t pos = kExportHeaderSize;
  int stage = 0;  // 0 PG, 1 DUPs, 2 ENTRYs, 3 INFO seen
  auto damage = [&](size_t at, const std::string& what) {
    return absl::DataLossError(absl::StrFormat("damaged export file at offset %u: %s", at, what));
  };
  while (pos < f.size()) {
    if (ended) return damage(pos, "bytes after the end section");
    if (f.size() - pos < 5) return damage(pos, "truncated section header");
    const uint8_t type = static_cast<uint8_t>(f[pos]);
    const uint32_t len = DecodeFixed32(f.data() + pos + 1);
    if (len > kExportMaxSection) {
      return damage(pos, absl::StrFormat("section length %u is larger than %u (damaged length)",
                                         len, kExportMaxSection));
    }
    if (f.size() - pos - 5 < static_cast<uint64_t>(len) + 4) {
      return damage(
          pos,
          absl::StrFormat("truncated %s section (it needs %u bytes after its header, the file "
                          "has %u)",
                          SectionName(type), static_cast<uint64_t>(len) + 4, f.size() - pos - 5));
    }
    const char* data = f.data() + pos + 5;
    const uint32_t stored = crc32c::Unmask(DecodeFixed32(data + len));
    if (stored != crc32c::Value(f.data() + pos, 5 + len)) {
      return damage(pos, absl::StrFormat("%s section CRC mismatch", SectionName(type)));
    }
    const std::string_view d(data, len);
    switch (static_cast<ExportSection>(type)) {
      case ExportSection::kPg: {
        if (have_pg) return damage(pos, "a second PG section");
        if (len != kPgSectionSize) return damage(pos, "PG section has the wrong length");
        const char* p = data;
        out.pg.pool = static_cast<int64_t>(DecodeFixed64(p));
        out.pg.seed = DecodeFixed32(p + 8);
        out.pg.shard = static_cast<int8_t>(p[12]);
        std::memcpy(out.source_uuid.bytes.data(), p + 13, 16);
        out.source_backend = static_cast<Backend>(static_cast<uint8_t>(p[29]));
        out.entries_trimmed_to = GetVersion(p + 30);
        out.dups_trimmed_to = GetVersion(p + 42);
        want_entries = DecodeFixed64(p + 54);
        want_dups = DecodeFixed64(p + 62);
        // has_info is 0 or 1: any other byte would be read as "yes" and
        // written back as 1, so a file would be accepted with a byte ignored.
        if (static_cast<uint8_t>(p[70]) > 1) {
          return damage(pos, absl::StrFormat("PG section has_info is %u, not 0 or 1",
                                             static_cast<unsigned>(static_cast<uint8_t>(p[70]))));
        }
        want_info = p[70] != 0;
        have_pg = true;
        stage = 1;
        break;
      }
      case ExportSection::kDup:
      case ExportSection::kEntry: {
        const bool dup = type == static_cast<uint8_t>(ExportSection::kDup);
        if (!have_pg) return damage(pos, "an item before the PG section");
        if (dup ? stage > 1 : stage > 2) return damage(pos, "sections out of order");
        stage = dup ? 1 : 2;
        if (len < 12) return damage(pos, "item shorter than its version");
        LogEntry e{GetVersion(data), std::string(d.substr(12))};
        auto& list = dup ? out.dups : out.entries;
        const Version floor = dup ? out.dups_trimmed_to : out.entries_trimmed_to;
        if (!list.empty() ? e.version <= list.back().version : e.version <= floor) {
          return damage(pos,
                        absl::StrFormat("%s version %s is not after %s", dup ? "dup" : "entry",
                                        e.version.ToString(),
                                        (list.empty() ? floor : list.back().version).ToString()));
        }
        if ((dup ? out.dups.size() >= want_dups : out.entries.size() >= want_entries)) {
          return damage(pos, absl::StrFormat("more %s than the PG section announces",
                                             dup ? "dups" : "entries"));
        }
        list.push_back(std::move(e));
        break;
      }
      case ExportSection::kInfo:
        if (!have_pg) return damage(pos, "an info before the PG section");
        if (stage > 2 || out.info) return damage(pos, "sections out of order");
        if (!want_info) return damage(pos, "an info the PG section does not announce");
        out.info = std::string(d);
        stage = 3;
        break;
      case ExportSection::kEnd: {
        if (!have_pg) return damage(pos, "end before the PG section");
        if (len != 4) return damage(pos, "END section has the wrong length");
        if (crc32c::Unmask(DecodeFixed32(data)) != crc32c::Value(f.data(), pos)) {
          return damage(pos, "file CRC mismatch (sections missing, repeated or reordered)");
        }
        ended = true;
        break;
      }
      default:
        return damage(pos, absl::StrFormat("unknown section type %u", type));
    }
    pos += 5 + len + 4;
  }
  if (!ended) return damage(pos, "truncated: no end section");
  if (out.entries.size() != want_entries || out.dups.size() != want_dups ||
      out.info.has_value() != want_info) {
    return damage(
        pos, absl::StrFormat("the PG section announces %u entries, %u dups and %s info; the file "
                             "holds %u, %u and %s",
                             want_entries, want_dups, want_info ? "an" : "no", out.entries.size(),
                             out.dups.size(), out.info ? "an" : "no"));
  }
  return out;
}

absl::Status ExportAllWriter::Write(std::string_view bytes) {
  status_ = sink_(bytes);
  if (status_.ok()) bytes_ += bytes.size();
  return status_;
}

absl::Status ExportAllWriter::Begin(uint32_t count) {
  if (!status_.ok()) return status_;
  if (begun_) {
    status_ = absl::InternalError("ExportAllWriter::Begin called twice");
    return status_;
  }
  begun_ = true;
  count_ = count;
  std::string h(kExportAllMagic, sizeof(kExportAllMagic));
  PutFixed32(&h, kExportAllFormatVersion);
  PutFixed32(&h, count);
  PutFixed32(&h, crc32c::Mask(crc32c::Value(h.data(), h.size())));
  return Write(h);
}

absl::Status ExportAllWriter::Add(std::string_view member) {
  if (!status_.ok()) return status_;
  if (!begun_ || finished_ || added_ == count_) {
    status_ = absl::InternalError(absl::StrFormat(
        "ExportAllWriter::Add outside Begin..Finish or past the %u PGs the header announces",
        count_));
    return status_;
  }
  ++added_;
  std::string len;
  PutFixed64(&len, member.size());
  if (absl::Status s = Write(len); !s.ok()) return s;
  return Write(member);
}

absl::Status ExportAllWriter::Finish() {
  if (!status_.ok()) return status_;
  if (!begun_ || added_ != count_) {
    status_ = absl::InternalError(absl::StrFormat(
        "ExportAllWriter::Finish: the header announces %u PGs and %u were added", count_, added_));
    return status_;
  }
  finished_ = true;
  return absl::OkStatus();
}

std::string EncodeExportAll(const std::vector<std::string>& members) {
  std::string out;
  ExportAllWriter w([&out](std::string_view b) {
    out.append(b);
    return absl::OkStatus();
  });
  // A string takes every write and the count matches: nothing can fail.
  w.Begin(static_cast<uint32_t>(members.size())).IgnoreError();
  for (const std::string& m : members) w.Add(m).IgnoreError();
  w.Finish().IgnoreError();
  return out;
}

absl::StatusOr<std::vector<ExportedPg>> DecodeExportAny(std::string_view f) {
  std::vector<ExportedPg> out;
  if (f.size() < sizeof(kExportAllMagic) ||
      std::memcmp(f.data(), kExportAllMagic, sizeof(kExportAllMagic)) != 0) {
    auto one = DecodeExport(f);
    if (!one.ok() && absl::IsFailedPrecondition(one.status()) &&
        one.status().message().find("magic") != std::string_view::npos) {
      return absl::FailedPreconditionError(
          "not a pgring export file (no \"PGRINGEX\" or \"PGRINGEA\" magic at offset 0)");
    }
    if (!one.ok()) return one.status();
    out.push_back(*std::move(one));
    return out;
  }
  if (absl::Status h = CheckHeader(f); !h.ok()) return h;
  const uint32_t version = DecodeFixed32(f.data() + 8);
  if (version != kExportAllFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrFormat("export file (of several PGs) format version %u; this pgring-tool reads "
                        "version %u",
                        version, kExportAllFormatVersion));
  }
  const uint32_t count = DecodeFixed32(f.data() + 12);
  size_t pos = kExportHeaderSize;
  for (uint32_t i = 0; i < count; ++i) {
    if (f.size() - pos < 8) {
      return absl::DataLossError(absl::StrFormat(
          "damaged export file at offset %u: truncated: it announces %u PGs and holds %u", pos,
          count, i));
    }
    const uint64_t len = DecodeFixed64(f.data() + pos);
    if (len > f.size() - pos - 8) {
      return absl::DataLossError(absl::StrFormat(
          "damaged export file at offset %u: PG %u of %u is %u bytes long, the file has %u more",
          pos, i + 1, count, len, f.size() - pos - 8));
    }
    auto one = DecodeExport(f.substr(pos + 8, len));
    if (!one.ok()) {
      return absl::Status(one.status().code(),
                          absl::StrFormat("PG %u of %u (at offset %u): %s", i + 1, count, pos + 8,
                                          one.status().message()));
    }
    out.push_back(*std::move(one));
    pos += 8 + len;
  }
  if (pos != f.size()) {
    return absl::DataLossError(absl::StrFormat(
        "damaged export file at offset %u: bytes after its %u PGs", pos, count));
  }
  return out;
}

}  // namespace pgring::tool
