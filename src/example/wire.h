// The protobuf wire format, as far as tf.train.Example needs it: varints, tags, and the
// four wire types a message may carry (a reader must skip fields it does not know, whatever
// their type). Reads never throw: a malformed input makes them return false, and the caller
// names what it was reading. Inline because every value of every record goes through here.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace dinput::example {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kFixed32 = 5,
};

// A cursor over the bytes of one message.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(p_ + bytes.size()) {}

  bool done() const { return p_ == end_; }

  // An unsigned varint of at most 10 bytes; a longer one, or one cut by the end, is malformed.
  bool varint(uint64_t& out) {
    if (p_ < end_ && *p_ < 0x80) {  // the common case: one byte
      out = *p_++;
      return true;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && p_ < end_; shift += 7) {
      const uint8_t b = *p_++;
      if (shift == 63 && b > 1) return false;  // more than 64 bits
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (b < 0x80) {
        out = v;
        return true;
      }
    }
    return false;
  }

  // A field's tag: its number (>= 1) and wire type.
  bool tag(uint32_t& field, uint32_t& type) {
    uint64_t t;
    if (!varint(t) || t > UINT32_MAX) return false;
    field = static_cast<uint32_t>(t >> 3);
    type = static_cast<uint32_t>(t & 7);
    return field != 0;
  }

  // The payload of a length-delimited field.
  bool bytes(std::string_view& out) {
    uint64_t n;
    if (!varint(n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    out = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }

  bool fixed32(uint32_t& out) {
    if (end_ - p_ < 4) return false;
    std::memcpy(&out, p_, 4);  // the wire is little-endian, as are the hosts dinput builds on
    p_ += 4;
    return true;
  }

  // Skips the payload of a field of wire type `type`. Groups (types 3 and 4) are deprecated
  // and never appear in an Example: they are malformed here.
  bool skip(uint32_t type) {
    uint64_t v;
    std::string_view s;
    switch (type) {
      case kVarint:
        return varint(v);
      case kFixed64:
        if (end_ - p_ < 8) return false;
        p_ += 8;
        return true;
      case kLengthDelimited:
        return bytes(s);
      case kFixed32:
        if (end_ - p_ < 4) return false;
        p_ += 4;
        return true;
      default:
        return false;
    }
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// The number of varints in a packed payload (each ends with a byte below 0x80); whether the
// payload is well formed is checked when the values are read.
inline int64_t count_packed_varints(std::string_view payload) {
  int64_t n = 0;
  for (unsigned char c : payload) n += c < 0x80;
  return n;
}

}  // namespace dinput::example
