#include "core/origin.h"

#include <cstdint>

#include "core/quote.h"
#include "core/status.h"

namespace dinput {

namespace {

// The buffer among `storage`'s owners (and theirs: a batch's storage may keep another's) whose
// bytes hold `p` and that knows its origin. Storage nests a few levels at most.
const Buffer* holder_of(const BytesStorage& storage, const char* p, int depth) {
  if (depth > 8) return nullptr;
  const auto at = reinterpret_cast<uintptr_t>(p);
  for (const auto& owner : storage.owners()) {
    if (auto* nested = const_cast<Buffer&>(*owner).bytes()) {
      if (const Buffer* b = holder_of(*nested, p, depth + 1)) return b;
      continue;
    }
    const auto begin = reinterpret_cast<uintptr_t>(owner->data());
    if (owner->origin() && at >= begin && at <= begin + owner->size()) return owner.get();
  }
  return nullptr;
}

}  // namespace

std::string describe_origin(const Tensor& t, int64_t i) {
  if (t.dtype() != DType::kBytes || !t.defined() || i < 0 || i >= t.num_elements()) return "";
  BytesStorage* storage = t.buffer()->bytes();
  if (!storage) return "";
  const char* p = t.string(i).data();
  const Buffer* holder = holder_of(*storage, p, 0);
  if (!holder) return "";
  const ByteOrigin& o = *holder->origin();
  const uint64_t data_at =
      o.offset + (reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(o.anchor));
  const uint64_t record_at = data_at >= o.header_bytes ? data_at - o.header_bytes : data_at;
  if (o.stream)
    return str_cat(" from ", quoted(*o.path), " at byte offset ", record_at,
                   " of its decompressed ", o.stream, " stream");
  return str_cat(" from ", quoted(*o.path), " at byte offset ", record_at);
}

}  // namespace dinput
