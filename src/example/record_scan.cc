// The outer layers of Example and SequenceExample: messages, maps and keys.
#include "example/record_scan.h"

#include "example/wire.h"

namespace dinput::example {

namespace {

uint64_t hash_key(std::string_view key) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: keys are short, this is cheap and even
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The key of a map entry (field 1; the last one when given twice, an empty key when absent).
bool entry_key(std::string_view entry, std::string_view& key) {
  WireReader r(entry);
  key = std::string_view();
  uint32_t field, type;
  std::string_view payload;
  while (!r.done()) {
    if (!r.tag(field, type)) return false;
    if (field == 1) {
      if (type != kLengthDelimited || !r.bytes(payload)) return false;
      key = payload;
    } else if (!r.skip(type)) {
      return false;
    }
  }
  return true;
}

// The entries of a map field (number 1) of `message`, kept in `entries` by key.
const char* scan_map(std::string_view message, const KeyTable& keys, Entries entries) {
  WireReader r(message);
  uint32_t field, type;
  std::string_view entry, key;
  while (!r.done()) {
    if (!r.tag(field, type)) return "a field tag of a feature map is cut or invalid";
    if (field != 1) {
      if (!r.skip(type)) return "a field of a feature map is cut or invalid";
      continue;
    }
    if (type != kLengthDelimited || !r.bytes(entry))
      return "an entry of a feature map is cut or invalid";
    if (!entry_key(entry, key)) return "the key of a feature map entry is cut or invalid";
    const int i = keys.find(key);
    if (i >= 0) entries[i] = entry.data() ? entry : std::string_view("", 0);
  }
  return nullptr;
}

}  // namespace

KeyTable::KeyTable(const std::vector<std::string>& keys) : keys_(keys) {
  size_t n = 4;
  while (n < keys_.size() * 2) n *= 2;
  slots_.assign(n, -1);
  mask_ = n - 1;
  for (size_t k = 0; k < keys_.size(); ++k) {
    size_t s = hash_key(keys_[k]) & mask_;
    while (slots_[s] >= 0) s = (s + 1) & mask_;
    slots_[s] = static_cast<int>(k);
  }
}

int KeyTable::find(std::string_view key) const {
  for (size_t s = hash_key(key) & mask_;; s = (s + 1) & mask_) {
    const int k = slots_[s];
    if (k < 0) return -1;
    if (keys_[k] == key) return k;
  }
}

const char* scan_example(std::string_view record, const KeyTable& keys, Entries entries) {
  WireReader r(record);
  uint32_t field, type;
  std::string_view features;
  while (!r.done()) {
    if (!r.tag(field, type)) return "a field tag of the Example is cut or invalid";
    if (field != 1) {
      if (!r.skip(type)) return "a field of the Example is cut or invalid";
      continue;
    }
    if (type != kLengthDelimited || !r.bytes(features))
      return "the Example's features are cut or invalid";
    if (const char* bad = scan_map(features, keys, entries)) return bad;
  }
  return nullptr;
}

const char* scan_sequence_example(std::string_view record, const KeyTable& context_keys,
                                  Entries context, const KeyTable& list_keys, Entries lists) {
  WireReader r(record);
  uint32_t field, type;
  std::string_view part;
  while (!r.done()) {
    if (!r.tag(field, type)) return "a field tag of the SequenceExample is cut or invalid";
    if (field != 1 && field != 2) {
      if (!r.skip(type)) return "a field of the SequenceExample is cut or invalid";
      continue;
    }
    if (type != kLengthDelimited || !r.bytes(part))
      return field == 1 ? "the SequenceExample's context is cut or invalid"
                        : "the SequenceExample's feature lists are cut or invalid";
    const char* bad =
        field == 1 ? scan_map(part, context_keys, context) : scan_map(part, list_keys, lists);
    if (bad) return bad;
  }
  return nullptr;
}

}  // namespace dinput::example
