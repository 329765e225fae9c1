// Finding the features a parse wants in one serialized tf.train.Example or SequenceExample:
// a pass over the record's map entries that keeps, per wanted key, the last entry with that
// key (protobuf's rule for a key given twice) and skips everything else.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dinput::example {

// The wanted keys, looked up by an open-addressing hash table: a record has one map entry
// per feature, and each entry's key is looked up once.
class KeyTable {
 public:
  explicit KeyTable(const std::vector<std::string>& keys);
  // The index of `key` in the constructor's list, or -1.
  int find(std::string_view key) const;
  size_t size() const { return keys_.size(); }

 private:
  std::vector<std::string> keys_;
  std::vector<int> slots_;  // index into keys_, or -1; a power of two long
  size_t mask_ = 0;
};

// The map entries found, one per key of the table: the serialized map entry (key = 1,
// value = 2), or an empty view with a null data() for a key the record lacks.
using Entries = std::string_view*;

// Scans a tf.train.Example (features = 1; Features: feature = 1, a map<string, Feature>).
// `entries` has one slot per key, cleared by the caller. nullptr on success, else what is
// malformed.
const char* scan_example(std::string_view record, const KeyTable& keys, Entries entries);

// Scans a tf.train.SequenceExample (context = 1, a Features; feature_lists = 2, a
// FeatureLists: feature_list = 1, a map<string, FeatureList>).
const char* scan_sequence_example(std::string_view record, const KeyTable& context_keys,
                                  Entries context, const KeyTable& list_keys, Entries lists);

// The Feature (or FeatureList) messages of a map entry, in order: a value given in several
// pieces is merged by the reader. `fn(payload)` returns nullptr or what is malformed.
template <typename Fn>
const char* for_each_value(std::string_view entry, Fn&& fn);

}  // namespace dinput::example

#include "example/wire.h"

namespace dinput::example {

template <typename Fn>
const char* for_each_value(std::string_view entry, Fn&& fn) {
  WireReader r(entry);
  uint32_t field, type;
  std::string_view value;
  while (!r.done()) {
    if (!r.tag(field, type)) return "a field tag of a map entry is cut or invalid";
    if (field != 2) {
      if (!r.skip(type)) return "a field of a map entry is cut or invalid";
      continue;
    }
    if (type != kLengthDelimited || !r.bytes(value))
      return "the value of a map entry is cut or invalid";
    if (const char* bad = fn(value)) return bad;
  }
  return nullptr;
}

}  // namespace dinput::example
