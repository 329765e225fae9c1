#include "core/compact.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "core/buffer.h"
#include "core/copied_origins.h"
#include "core/origin.h"

namespace dinput {

namespace {

// The bytes of many strings copied from read buffers, and where each was read from.
class CompactedStrings final : public BufferOfCopies {
 public:
  CompactedStrings(size_t size, size_t strings)
      : BufferOfCopies(nullptr, size, strings), bytes_(new char[size]) {
    data_ = bytes_.get();
  }

  // Copies `s` to `at` (its own place: strings are laid out in order) and notes its origin.
  const char* put(size_t at, std::string_view s, const std::shared_ptr<const ByteOrigin>* origin,
                  uint64_t offset) {
    char* dst = bytes_.get() + at;
    if (!s.empty()) std::memcpy(dst, s.data(), s.size());
    note(dst, s.size(), origin, offset);
    return dst;
  }

 private:
  std::unique_ptr<char[]> bytes_;
};

// The bytes of the buffers `storage` keeps alive that count (see compact.h). Owners that are
// parts of one buffer (Buffer::holder) count it once. A storage has a few owners.
size_t pinned_bytes(const BytesStorage& storage) {
  size_t pinned = 0;
  const auto& owners = storage.owners();
  for (size_t i = 0; i < owners.size(); ++i) {
    const Buffer& held = owners[i]->holder();
    if (const_cast<Buffer&>(*owners[i]).bytes() || held.maps_file() ||
        held.kind() != MemoryKind::kHost)
      continue;
    bool counted = false;
    for (size_t j = 0; j < i && !counted; ++j) counted = &owners[j]->holder() == &held;
    if (!counted) pinned += held.size();
  }
  return pinned;
}

// The room a string takes in the copy: an empty string takes a byte, so that no two strings
// begin at the same address (origins are found by address).
size_t room(size_t size) { return size > 0 ? size : 1; }

// The bytes `t`'s copy takes, or 0 when `t` is not worth copying.
size_t copy_room(const Tensor& t, size_t max_ratio) {
  if (t.dtype() != DType::kBytes || !t.defined()) return 0;
  const BytesStorage* storage = t.buffer()->bytes();
  if (!storage) return 0;
  const size_t pinned = pinned_bytes(*storage);
  if (pinned == 0) return 0;
  size_t need = 0;
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) need += room(t.string(i).size());
  if (need == 0 || pinned / need < kCompactMinRatio || pinned / need > max_ratio) return 0;
  return need;
}

}  // namespace

size_t compact_elements(const std::vector<Element*>& elements, size_t max_ratio) {
  std::vector<Tensor*> chosen;
  size_t bytes = 0;
  size_t strings = 0;
  for (Element* e : elements) {
    for (Tensor& t : *e) {
      const size_t need = copy_room(t, max_ratio);
      if (need == 0) continue;
      chosen.push_back(&t);
      bytes += need;
      strings += static_cast<size_t>(t.num_elements());
    }
  }
  if (chosen.empty()) return 0;
  auto copies = std::make_shared<CompactedStrings>(bytes, strings);
  auto storage = std::make_shared<BytesStorage>(strings);
  const std::shared_ptr<const Buffer> owner = copies;
  size_t at = 0;
  size_t next = 0;  // the storage's next string
  size_t copied = 0;
  for (Tensor* t : chosen) {
    const size_t first = next;
    const int64_t n = t->num_elements();
    for (int64_t i = 0; i < n; ++i) {
      const std::string_view s = t->string(i);
      uint64_t offset = 0;
      const auto* origin = origin_of_string(*t, i, &offset);
      const char* dst = copies->put(at, s, origin, offset);
      storage->set_view(next++, dst, s.size(), owner);
      at += room(s.size());
      copied += s.size();
    }
    *t = Tensor(DType::kBytes, t->shape(), storage, first);
  }
  return copied;
}

}  // namespace dinput
