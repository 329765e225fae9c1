// A small protobuf writer for the tests of the Example parser: it writes the fields the
// test names, in the encodings the test chooses (packed or not, repeated keys, unknown
// fields, cut messages), which a generated encoder would not let a test do. The tests that
// compare with protobuf's own encoder and decoder are in tests/example/.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace dinput::test {

class Proto {
 public:
  Proto& varint(uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
    return *this;
  }
  Proto& tag(uint32_t field, uint32_t type) { return varint((uint64_t{field} << 3) | type); }
  Proto& bytes(uint32_t field, const std::string& b) {
    tag(field, 2).varint(b.size());
    out_ += b;
    return *this;
  }
  Proto& uint(uint32_t field, uint64_t v) { return tag(field, 0).varint(v); }
  Proto& fixed32(uint32_t field, uint32_t v) {
    tag(field, 5);
    out_.append(reinterpret_cast<const char*>(&v), 4);
    return *this;
  }
  Proto& raw(const std::string& b) {
    out_ += b;
    return *this;
  }
  const std::string& str() const { return out_; }
  operator std::string() const { return out_; }

 private:
  std::string out_;
};

// Feature messages.
inline std::string int64s(const std::vector<int64_t>& v, bool packed = true) {
  Proto list;
  if (packed) {
    Proto p;
    for (int64_t x : v) p.varint(static_cast<uint64_t>(x));
    list.bytes(1, p);
  } else {
    for (int64_t x : v) list.uint(1, static_cast<uint64_t>(x));
  }
  return Proto().bytes(3, list);
}
inline std::string floats(const std::vector<float>& v, bool packed = true) {
  Proto list;
  if (packed) {
    std::string p(v.size() * 4, '\0');
    if (!v.empty()) std::memcpy(&p[0], v.data(), p.size());
    list.bytes(1, p);
  } else {
    for (float x : v) {
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      list.fixed32(1, bits);
    }
  }
  return Proto().bytes(2, list);
}
inline std::string strings(const std::vector<std::string>& v) {
  Proto list;
  for (const auto& s : v) list.bytes(1, s);
  return Proto().bytes(1, list);
}

// A map entry key -> value, and a Features / FeatureLists map of such entries.
inline std::string entry(const std::string& key, const std::string& value) {
  return Proto().bytes(1, key).bytes(2, value);
}
inline std::string feature_map(const std::vector<std::pair<std::string, std::string>>& kv) {
  Proto m;
  for (const auto& [k, v] : kv) m.bytes(1, entry(k, v));
  return m;
}
// An Example with these features (Feature messages by key).
inline std::string example(const std::vector<std::pair<std::string, std::string>>& kv) {
  return Proto().bytes(1, feature_map(kv));
}
// A FeatureList of these Feature messages.
inline std::string feature_list(const std::vector<std::string>& steps) {
  Proto l;
  for (const auto& s : steps) l.bytes(1, s);
  return l;
}
inline std::string sequence_example(const std::vector<std::pair<std::string, std::string>>& context,
                                    const std::vector<std::pair<std::string, std::string>>& lists) {
  return Proto().bytes(1, feature_map(context)).bytes(2, feature_map(lists));
}

}  // namespace dinput::test
