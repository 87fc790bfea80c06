// ceph_reader.h — a bounds-checked little-endian reader for Ceph's encoding
// (src/include/encoding.h and denc.h in Ceph), with its versioned struct
// framing: every struct starts with struct_v (u8), struct_compat (u8) and
// struct_len (u32), and a decoder that knows version V
//   - refuses an encoding whose struct_compat is above V (it cannot read it),
//   - reads the fields of the versions it knows, then skips to the end of the
//     struct_len bytes (fields a newer encoder appended), and
//   - fails when the fields it read run past struct_len.
// Old encodings (DECODE_START_LEGACY_COMPAT_LEN) carried no compat byte
// before one version and no length before another; Begin takes both.
//
// Nothing here throws or reads out of bounds: every read is checked against
// the end of the innermost struct being read (or of the buffer), and an
// error names the field by its path ("pg_log_entry_t.soid.name"), its
// offset in the buffer and what bounded it. Errors are kDataLoss for bytes
// that cannot be a valid encoding (truncated, lengths past the end, trailing
// bytes) and kUnimplemented for an encoding this decoder does not know how
// to read (struct_compat too new, a pre-length legacy version).
#ifndef PGRING_TOOL_CEPH_CEPH_READER_H_
#define PGRING_TOOL_CEPH_CEPH_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pgring::tool::ceph {

class CephReader {
 public:
  // The versioned header of one struct being read (see Begin/End).
  struct Frame {
    uint8_t v = 0;       // struct_v as encoded
    uint8_t compat = 0;  // struct_compat as encoded (0 when not encoded)
    bool has_len = false;
    size_t header_offset = 0;  // where struct_v is
    size_t start = 0;          // first byte after the header
    size_t end = 0;            // start + struct_len (or the enclosing limit)
    size_t outer_limit = 0;    // the limit to restore at End
    uint8_t known_v = 0;       // the newest version this decoder reads
    std::string type;
  };

  explicit CephReader(std::string_view bytes) : bytes_(bytes), limit_(bytes.size()) {
    path_.emplace_back();
  }

  size_t offset() const { return pos_; }
  size_t size() const { return bytes_.size(); }

  // Fixed-size little-endian integers; `field` names what is read in errors.
  absl::StatusOr<uint8_t> U8(absl::string_view field);
  absl::StatusOr<uint16_t> U16(absl::string_view field);
  absl::StatusOr<uint32_t> U32(absl::string_view field);
  absl::StatusOr<uint64_t> U64(absl::string_view field);
  absl::StatusOr<int8_t> I8(absl::string_view field);
  absl::StatusOr<int32_t> I32(absl::string_view field);
  absl::StatusOr<int64_t> I64(absl::string_view field);
  absl::StatusOr<bool> Bool(absl::string_view field);
  // An IEEE double as its 8 bytes (Ceph encodes doubles raw).
  absl::StatusOr<double> F64(absl::string_view field);
  // `n` raw bytes.
  absl::StatusOr<std::string_view> Raw(absl::string_view field, size_t n);
  // A u32 length, then that many bytes (std::string and bufferlist).
  absl::StatusOr<std::string_view> LengthPrefixed(absl::string_view field);
  // A u32 element count of a container whose elements take at least
  // `min_element_size` bytes each: a count the rest of the struct cannot
  // hold is refused before anything is allocated for it.
  absl::StatusOr<uint32_t> Count(absl::string_view field, size_t min_element_size);

  // Reads a struct header for the field `field` of type `type` (the top
  // level passes its type as both), of which this decoder knows versions up
  // to `known_v`. A struct_v below `compat_from_v` has no struct_compat
  // byte, one below `len_from_v` no struct_len (0: always present).
  absl::StatusOr<Frame> Begin(absl::string_view field, absl::string_view type, uint8_t known_v,
                              uint8_t compat_from_v = 0, uint8_t len_from_v = 0);
  // Ends the struct: skips what a newer encoder appended (noting it), and
  // restores the enclosing limit.
  absl::Status End(const Frame& frame);

  // Fails unless every byte of the buffer was read.
  absl::Status ExpectConsumed(absl::string_view type) const;

  // What was skipped (newer fields), one line each.
  const std::vector<std::string>& notes() const { return notes_; }

  // An error about `field` of the innermost struct at the current offset.
  absl::Status Error(absl::string_view field, absl::string_view what) const;

 private:
  absl::StatusOr<std::string_view> Take(absl::string_view field, size_t n);
  std::string Path(absl::string_view field) const;
  std::string LimitText() const;

  std::string_view bytes_;
  size_t pos_ = 0;
  size_t limit_;                   // end of the innermost struct (or of the buffer)
  std::vector<std::string> path_;  // field names of the open structs
  std::vector<Frame> open_;        // the open structs, innermost last
  std::vector<std::string> notes_;
};

}  // namespace pgring::tool::ceph

#endif  // PGRING_TOOL_CEPH_CEPH_READER_H_
