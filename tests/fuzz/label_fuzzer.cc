// label_fuzzer.cc — the label parser (src/format/label.{h,cc}) and its
// siblings, the CRC-sealed values pgring keeps in RocksDB (StoreMeta,
// PgPointer, PgChunkList, StreamPointer in src/format/metadata_keys.{h,cc}):
// every fixed-layout
// structure pgring reads back and trusts.
//
// Each parser sees the input as is, and again with its CRC recomputed (and
// the magic / format byte set), so the fuzzer also reaches the checks behind
// the CRC. Checked:
//  - a refusal is kDataLoss;
//  - Label: an accepted label re-encodes to the same 96 bytes, except the 27
//    reserved bytes (covered by the CRC, not otherwise checked: FORMAT.md)
//    and so the CRC; byte for byte when the reserved bytes are zero. Its
//    geometry holds: block 512/4096; chunk a power of two in [64 KiB,
//    256 MiB], a multiple of the block; data at 4096; 4096 + chunk_count *
//    chunk_size <= partition_size, computed without wrapping; at most 2^32
//    chunks; backend 1 or 2. Decode(Encode(label)) == label.
//  - StoreMeta, PgPointer, PgChunkList, StreamPointer: an accepted value
//    re-encodes to the very same bytes, unless it is in another value format
//    than the one written (an older pointer format), and then its re-encoding
//    reads back the same; a pointer's head is not past its tail, nor its
//    unhomed bytes before its first; a stream pointer's tail_seq is not 0.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/label.h"
#include "fuzz_common.h"
#include "format/metadata_keys.h"

namespace pgring::fuzz {
namespace {

void CheckLabel(std::string_view b) {
  absl::StatusOr<Label> l = Label::Decode(b);
  if (!l.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(l.status()), l.status().ToString());
    return;
  }
  FUZZ_CHECK(b.size() >= kLabelEncodedSize, "accepted a short label");
  const std::string enc = l->Encode();
  FUZZ_CHECK(enc.size() == kLabelEncodedSize, "Encode size");
  FUZZ_CHECK(enc.substr(0, 65) == b.substr(0, 65),
             absl::StrFormat("label %s re-encodes as %s", Hex(b.substr(0, 96), 96),
                             Hex(enc, 96)));
  const bool reserved_zero = b.substr(65, 27).find_first_not_of('\0') == std::string_view::npos;
  if (reserved_zero) {
    FUZZ_CHECK(enc == b.substr(0, kLabelEncodedSize),
               absl::StrFormat("label %s re-encodes as %s", Hex(b.substr(0, 96), 96),
                               Hex(enc, 96)));
  }
  absl::StatusOr<Label> again = Label::Decode(enc);
  FUZZ_CHECK(again.ok() && *again == *l, "Decode(Encode(label)) differs");
  // Geometry.
  FUZZ_CHECK(l->format_version >= kFormatVersion && l->format_version <= kMaxFormatVersion,
             "format version");
  FUZZ_CHECK(l->block_size == 512 || l->block_size == 4096, "block size");
  FUZZ_CHECK(l->chunk_size >= (64u << 10) && l->chunk_size <= (256u << 20) &&
                 (l->chunk_size & (l->chunk_size - 1)) == 0 && l->chunk_size % l->block_size == 0,
             absl::StrFormat("chunk size %u", l->chunk_size));
  FUZZ_CHECK(l->data_offset == kLabelRegionSize, "data offset");
  const unsigned __int128 used =
      static_cast<unsigned __int128>(l->chunk_count) * l->chunk_size + kLabelRegionSize;
  FUZZ_CHECK(used <= l->partition_size,
             absl::StrFormat("%u chunks of %u bytes do not fit in %u bytes", l->chunk_count,
                             l->chunk_size, l->partition_size));
  FUZZ_CHECK(l->chunk_count <= (1ull << 32), "chunk count");
  FUZZ_CHECK(l->backend == Backend::kRing || l->backend == Backend::kRocksDb, "backend");
}

template <typename T>
void CheckValue(std::string_view b, const char* what) {
  absl::StatusOr<T> v = T::Decode(b);
  if (!v.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(v.status()), absl::StrCat(what, ": ", v.status().ToString()));
    return;
  }
  const std::string enc = v->Encode();
  if (enc != b) {
    // Only a value in another (older) format may be written back differently
    // (in the current one), and then it must read back the same.
    FUZZ_CHECK(!enc.empty() && enc[0] != b[0],
               absl::StrFormat("%s %s re-encodes as %s", what, Hex(b, 200), Hex(enc, 200)));
    absl::StatusOr<T> again = T::Decode(enc);
    FUZZ_CHECK(again.ok() && again->Encode() == enc,
               absl::StrFormat("%s: the re-encoding of %s does not read back", what, Hex(b, 200)));
    if constexpr (std::is_same_v<T, PgPointer> || std::is_same_v<T, PgChunkList> ||
                  std::is_same_v<T, StreamPointer>) {
      FUZZ_CHECK(*again == *v, absl::StrFormat("%s %s changes when re-encoded", what, Hex(b, 200)));
    }
  }
  if constexpr (std::is_same_v<T, PgPointer>) {
    FUZZ_CHECK(v->head <= v->tail, "pointer head past tail");
    FUZZ_CHECK(v->unhomed <= v->tail, "pointer unhomed past tail");
    FUZZ_CHECK(v->unhomed != 0 || v->stream_pos == 0, "pointer stream_pos without unhomed");
  }
  if constexpr (std::is_same_v<T, StreamPointer>) {
    FUZZ_CHECK(v->head <= v->tail, "stream pointer head past tail");
    FUZZ_CHECK(v->tail_seq >= 1, "stream pointer tail_seq 0");
  }
}

void CheckValues(std::string_view b) {
  CheckValue<StoreMeta>(b, "StoreMeta");
  CheckValue<PgPointer>(b, "PgPointer");
  CheckValue<PgChunkList>(b, "PgChunkList");
  CheckValue<StreamPointer>(b, "StreamPointer");
}

}  // namespace
}  // namespace pgring::fuzz

extern "C" int PGRING_FUZZ_ENTRY(const uint8_t* data, size_t size) {
  using namespace pgring;
  using namespace pgring::fuzz;
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  CheckLabel(in);
  if (size >= kLabelCrcOffset) {
    // The magic in place and the CRC right: the geometry checks.
    std::string l(in);
    if (l.size() < kLabelEncodedSize) l.resize(kLabelEncodedSize, '\0');
    std::memcpy(l.data(), kLabelMagic, sizeof(kLabelMagic));
    PutMaskedCrc(&l, kLabelCrcOffset, 0, kLabelCrcOffset);
    CheckLabel(l);
  }

  CheckValues(in);
  if (size >= 5) {
    for (char format : {1, 2, 3}) {  // the value formats pgring reads
      std::string v(in);
      v[0] = format;
      PutMaskedCrc(&v, v.size() - 4, 0, v.size() - 4);
      CheckValues(v);
    }
  }
  return 0;
}
