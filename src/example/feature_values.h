// The values of one feature in one record, located but not yet copied: the list messages
// (BytesList, FloatList or Int64List payloads) that hold them, and how many there are. The
// parser counts every record's values first, so that it can size the output tensors, and
// then decodes them straight into those tensors.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace dinput::example {

// The fields of tf.train.Feature's `kind` oneof.
enum ListKind : uint8_t { kNoList = 0, kBytesList = 1, kFloatList = 2, kInt64List = 3 };

// The list kind that holds values of `dtype` (int64, float32 or bytes).
ListKind list_kind(DType dtype);
// "bytes_list", "float_list", "int64_list", or "no list" for a Feature with no kind set.
const char* list_name(ListKind kind);

struct FeatureValues {
  bool present = false;  // the record has the key (with a Feature that may be empty)
  ListKind kind = kNoList;
  uint32_t first = 0;  // the list payloads are fragments [first, last) of the scratch
  uint32_t last = 0;
  int64_t count = 0;
};

// Adds the lists of a serialized tf.train.Feature to `v`, whose fragments are the last ones
// of `fragments`. Protobuf merges a message given in pieces: lists of the same kind add up,
// and a list of another kind replaces the ones before (a oneof holds one field). nullptr on
// success, else what is malformed.
const char* add_feature(std::string_view feature, std::vector<std::string_view>& fragments,
                        FeatureValues& v);

// Decodes the values of `v` (of kind int64 / float / bytes) into `out` from element `at` on.
// Byte strings are views of the record, which `owner` keeps alive. nullptr on success.
const char* write_int64(const FeatureValues& v, const std::vector<std::string_view>& fragments,
                        int64_t* out);
const char* write_float(const FeatureValues& v, const std::vector<std::string_view>& fragments,
                        float* out);
void write_bytes(const FeatureValues& v, const std::vector<std::string_view>& fragments,
                 Tensor& out, int64_t at, const std::shared_ptr<const Buffer>& owner);

}  // namespace dinput::example
