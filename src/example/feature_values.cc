// Counting and decoding the values of tf.train.Feature (bytes_list = 1, float_list = 2,
// int64_list = 3; each list's values are its field 1, packed or not).
#include "example/feature_values.h"

#include "example/wire.h"

namespace dinput::example {

ListKind list_kind(DType dtype) {
  switch (dtype) {
    case DType::kInt64:
      return kInt64List;
    case DType::kFloat32:
      return kFloatList;
    default:
      return kBytesList;
  }
}

const char* list_name(ListKind kind) {
  switch (kind) {
    case kBytesList:
      return "bytes_list";
    case kFloatList:
      return "float_list";
    case kInt64List:
      return "int64_list";
    default:
      return "no list";
  }
}

namespace {

// The number of values in one list message, checking its framing. -1: malformed.
int64_t count_list(ListKind kind, std::string_view list) {
  WireReader r(list);
  int64_t n = 0;
  uint32_t field, type;
  std::string_view payload;
  while (!r.done()) {
    if (!r.tag(field, type)) return -1;
    if (field != 1) {
      if (!r.skip(type)) return -1;
      continue;
    }
    if (kind == kBytesList) {
      if (type != kLengthDelimited || !r.bytes(payload)) return -1;
      ++n;
    } else if (type == kLengthDelimited) {  // packed
      if (!r.bytes(payload)) return -1;
      if (kind == kFloatList) {
        if (payload.size() % 4 != 0) return -1;
        n += static_cast<int64_t>(payload.size() / 4);
      } else {
        if (!payload.empty() && static_cast<unsigned char>(payload.back()) >= 0x80) return -1;
        n += count_packed_varints(payload);
      }
    } else if (kind == kFloatList ? type == kFixed32 : type == kVarint) {
      if (!r.skip(type)) return -1;
      ++n;
    } else {
      return -1;  // a value of the wrong wire type
    }
  }
  return n;
}

}  // namespace

const char* add_feature(std::string_view feature, std::vector<std::string_view>& fragments,
                        FeatureValues& v) {
  WireReader r(feature);
  uint32_t field, type;
  std::string_view list;
  while (!r.done()) {
    if (!r.tag(field, type)) return "a field tag of a Feature is cut or invalid";
    if (field < 1 || field > 3) {
      if (!r.skip(type)) return "an unknown field of a Feature is cut or invalid";
      continue;
    }
    if (type != kLengthDelimited || !r.bytes(list)) return "a list of a Feature is cut or invalid";
    const ListKind kind = static_cast<ListKind>(field);
    if (kind != v.kind) {  // the oneof switches: the earlier lists are dropped
      fragments.resize(v.first);
      v.kind = kind;
      v.count = 0;
    }
    const int64_t n = count_list(kind, list);
    if (n < 0) return "the values of a Feature's list are cut or invalid";
    fragments.push_back(list);
    v.count += n;
  }
  v.last = static_cast<uint32_t>(fragments.size());
  return nullptr;
}

const char* write_int64(const FeatureValues& v, const std::vector<std::string_view>& fragments,
                        int64_t* out) {
  for (uint32_t i = v.first; i < v.last; ++i) {
    WireReader r(fragments[i]);
    uint32_t field = 0, type = 0;
    uint64_t x = 0;
    std::string_view packed;
    while (!r.done()) {
      r.tag(field, type);  // framing was checked when counting
      if (field != 1) {
        r.skip(type);
      } else if (type == kVarint) {
        r.varint(x);
        *out++ = static_cast<int64_t>(x);
      } else {
        r.bytes(packed);
        WireReader p(packed);
        while (!p.done()) {
          if (!p.varint(x)) return "a packed int64 value is longer than 10 bytes";
          *out++ = static_cast<int64_t>(x);
        }
      }
    }
  }
  return nullptr;
}

const char* write_float(const FeatureValues& v, const std::vector<std::string_view>& fragments,
                        float* out) {
  for (uint32_t i = v.first; i < v.last; ++i) {
    WireReader r(fragments[i]);
    uint32_t field = 0, type = 0;
    uint32_t bits = 0;
    std::string_view packed;
    while (!r.done()) {
      r.tag(field, type);
      if (field != 1) {
        r.skip(type);
      } else if (type == kFixed32) {
        r.fixed32(bits);
        std::memcpy(out++, &bits, 4);
      } else {
        r.bytes(packed);
        std::memcpy(out, packed.data(), packed.size());
        out += packed.size() / 4;
      }
    }
  }
  return nullptr;
}

void write_bytes(const FeatureValues& v, const std::vector<std::string_view>& fragments,
                 Tensor& out, int64_t at, const std::shared_ptr<const Buffer>& owner) {
  for (uint32_t i = v.first; i < v.last; ++i) {
    WireReader r(fragments[i]);
    uint32_t field = 0, type = 0;
    std::string_view s;
    while (!r.done()) {
      r.tag(field, type);
      if (field != 1) {
        r.skip(type);
        continue;
      }
      r.bytes(s);
      out.set_string_view(at++, s.data(), s.size(), owner);
    }
  }
}

}  // namespace dinput::example
