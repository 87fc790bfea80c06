// coding.h — little-endian fixed-width and varint encoding. Every integer
// pgring writes to the partition or to RocksDB values is little-endian;
// RocksDB keys use big-endian so that keys sort by number.
#ifndef PGRING_UTIL_CODING_H_
#define PGRING_UTIL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace pgring {

inline void EncodeFixed16(char* dst, uint16_t v) {
  dst[0] = static_cast<char>(v);
  dst[1] = static_cast<char>(v >> 8);
}
inline void EncodeFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline void EncodeFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline uint16_t DecodeFixed16(const char* p) {
  auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}
inline uint32_t DecodeFixed32(const char* p) {
  auto* u = reinterpret_cast<const unsigned char*>(p);
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | u[i];
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  auto* u = reinterpret_cast<const unsigned char*>(p);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | u[i];
  return v;
}

inline void PutFixed32(std::string* dst, uint32_t v) {
  char b[4];
  EncodeFixed32(b, v);
  dst->append(b, 4);
}
inline void PutFixed64(std::string* dst, uint64_t v) {
  char b[8];
  EncodeFixed64(b, v);
  dst->append(b, 8);
}
inline void PutBigEndian64(std::string* dst, uint64_t v) {
  for (int i = 7; i >= 0; --i) dst->push_back(static_cast<char>(v >> (8 * i)));
}
inline void PutBigEndian32(std::string* dst, uint32_t v) {
  for (int i = 3; i >= 0; --i) dst->push_back(static_cast<char>(v >> (8 * i)));
}
inline uint64_t DecodeBigEndian64(const char* p) {
  auto* u = reinterpret_cast<const unsigned char*>(p);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | u[i];
  return v;
}
inline uint32_t DecodeBigEndian32(const char* p) {
  auto* u = reinterpret_cast<const unsigned char*>(p);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | u[i];
  return v;
}

// LEB128 varint, as LevelDB and protobuf.
inline void PutVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}
inline size_t VarintLength(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
// Parses a varint from the front of *in, advancing it. False if truncated
// or longer than 10 bytes.
inline bool GetVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}
// Strict varint parsing, for values that must have exactly one encoding
// (the PG pointer). ParseVarint64 reads a varint from the front of *in and
// says what, if anything, is wrong with it; *in advances and *v is set only
// on kOk. Unlike GetVarint64 (which keeps the lenient reading the record
// format documents), a tenth byte carrying bits beyond 64 is kOverflow and a
// non-shortest encoding is kNotShortest.
enum class VarintResult : uint8_t {
  kOk,
  kTruncated,    // input ends while bit 7 says more bytes follow
  kTooLong,      // ten bytes with bit 7 set: longer than 10 bytes
  kOverflow,     // a tenth byte above 1: the value does not fit 64 bits
  kNotShortest,  // a final 0x00 byte after the first: not the shortest form
};
inline VarintResult ParseVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (size_t i = 0; i < 10; ++i) {
    if (i >= in->size()) return VarintResult::kTruncated;
    auto byte = static_cast<unsigned char>((*in)[i]);
    if (i == 9 && byte > 1) return byte & 0x80 ? VarintResult::kTooLong : VarintResult::kOverflow;
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      if (byte == 0 && i > 0) return VarintResult::kNotShortest;
      in->remove_prefix(i + 1);
      *v = result;
      return VarintResult::kOk;
    }
  }
  return VarintResult::kTooLong;  // unreachable: byte 9 either ends or fails
}
inline const char* VarintResultName(VarintResult r) {
  switch (r) {
    case VarintResult::kOk: return "ok";
    case VarintResult::kTruncated: return "truncated varint";
    case VarintResult::kTooLong: return "varint longer than 10 bytes";
    case VarintResult::kOverflow: return "varint does not fit in 64 bits";
    case VarintResult::kNotShortest: return "varint not in shortest form";
  }
  return "bad varint";
}
// ParseVarint64 == kOk: false if truncated, longer than 10 bytes, beyond 64
// bits or not in shortest form; *in is then unchanged.
inline bool GetVarint64Strict(std::string_view* in, uint64_t* v) {
  return ParseVarint64(in, v) == VarintResult::kOk;
}
inline bool GetFixed32(std::string_view* in, uint32_t* v) {
  if (in->size() < 4) return false;
  *v = DecodeFixed32(in->data());
  in->remove_prefix(4);
  return true;
}
inline bool GetFixed64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = DecodeFixed64(in->data());
  in->remove_prefix(8);
  return true;
}

}  // namespace pgring

#endif  // PGRING_UTIL_CODING_H_
