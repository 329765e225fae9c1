#include "core/origin.h"

#include <cstdint>

#include "core/quote.h"
#include "core/status.h"

namespace dinput {

namespace {

// The origin of `p` among `storage`'s owners (and theirs: a batch's storage may keep
// another's). Storage nests a few levels at most.
const std::shared_ptr<const ByteOrigin>* find_origin(const BytesStorage& storage, const char* p,
                                                     int depth, uint64_t* offset) {
  if (depth > 8) return nullptr;
  for (const auto& owner : storage.owners()) {
    if (auto* nested = const_cast<Buffer&>(*owner).bytes()) {
      if (auto* o = find_origin(*nested, p, depth + 1, offset)) return o;
      continue;
    }
    if (auto* o = owner->origin_at(p, offset)) return o;
  }
  return nullptr;
}

}  // namespace

const std::shared_ptr<const ByteOrigin>* origin_of_string(const Tensor& t, int64_t i,
                                                          uint64_t* offset) {
  if (t.dtype() != DType::kBytes || !t.defined() || i < 0 || i >= t.num_elements()) return nullptr;
  BytesStorage* storage = t.buffer()->bytes();
  if (!storage) return nullptr;
  return find_origin(*storage, t.string(i).data(), 0, offset);
}

std::string describe_origin(const Tensor& t, int64_t i) {
  uint64_t data_at = 0;
  const auto* origin = origin_of_string(t, i, &data_at);
  if (!origin) return "";
  const ByteOrigin& o = **origin;
  const uint64_t record_at = data_at >= o.header_bytes ? data_at - o.header_bytes : data_at;
  if (o.stream)
    return str_cat(" from ", quoted(*o.path), " at byte offset ", record_at,
                   " of its decompressed ", o.stream, " stream");
  return str_cat(" from ", quoted(*o.path), " at byte offset ", record_at);
}

}  // namespace dinput
