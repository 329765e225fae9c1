// Fuzz target of saved iterator states (src/data/state.h). The first byte picks one of a few
// finite pipelines (the last two with zip, concatenate, sample/choose_from_datasets, cache and
// ignore_errors), the second how many elements to take before saving. It checks:
//   - the elements before the save followed by those of the restored iterator equal the
//     uninterrupted stream;
//   - the saved state, with the rest of the input XORed into its payload (from a point the
//     third byte picks) and the checksum made right again (so that the damage gets past the CRC),
//     restores or fails with a dinput::Error, never anything else, and a restored iterator iterates
//     or fails the same way (the sanitizers and the fuzzer's timeout catch crashes and hangs).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "data/datasets.h"
#include "data/state.h"
#include "io/cache.h"
#include "io/crc32c.h"

namespace {

using namespace dinput;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "iterator_state_fuzz: invariant violated: %s\n", what.c_str());
  std::abort();
}

std::shared_ptr<const MapFn> plus_one() {
  return std::make_shared<const MapFn>([](const Element& in) {
    Tensor t = Tensor::allocate(DType::kInt64, in[0].shape());
    for (int64_t i = 0; i < in[0].num_elements(); ++i)
      t.mutable_data_as<int64_t>()[i] = in[0].data_as<int64_t>()[i] + 1;
    return Element{t};
  });
}

DatasetPtr pipeline(unsigned which) {
  const ElementSpec scalar = {{DType::kInt64, Shape()}};
  switch (which % 10) {
    case 0:
      return make_batch(make_shuffle(make_range(0, 100, 1), 10, 1, true), 7, false);
    case 1:
      return make_take(
          make_enumerate(make_repeat(make_shuffle(make_range(0, 20, 1), 5, 2, true), 3), 0), 50);
    case 2:
      return make_unbatch(
          make_rebatch(make_batch(make_range(0, 30, 1), 4, false), {3, 0, 2}, false));
    case 3:
      return make_batch(make_map(make_prefetch(make_range(0, 40, 1), 3), plus_one(), {}, 3, true),
                        5, false, 2);
    case 5:  // several inputs: zip inside a concatenate, sampled against a shuffle
      return make_sample_from_datasets(
          {make_concatenate(make_range(0, 9, 1),
                            make_map(make_zip({make_range(50, 60, 1), make_range(0, 99, 1)}),
                                     std::make_shared<const MapFn>(
                                         [](const Element& in) { return Element{in[0]}; }),
                                     scalar, 1, {})),
           make_shuffle(make_range(100, 130, 1), 6, 3, true)},
          {2, 1}, 7, false);
    case 6:  // a memory cache read again by a repeat, chosen from, and ignore_errors
      return make_ignore_errors(
          make_choose_from_datasets(
              make_repeat(make_range(0, 3, 1), 8),
              {make_repeat(make_cache(make_shuffle(make_range(0, 7, 1), 3, 4, true), ""), 3),
               make_range(200, 210, 1)},
              false),
          false);
    case 7:
      return make_window(make_shuffle(make_range(0, 30, 1), 4, 3, true), 3, 2, 2, false);
    case 8:
      return make_padded_batch(make_window(make_range(0, 25, 1), 4, 3, 1, false), 3, false, {}, {});
    case 9:
      // Windows of 1 to 4 elements (the last ones shorter), grouped by length.
      return make_bucket_by_sequence_length(make_window(make_range(0, 40, 1), 4, 1, 1, false), 0,
                                            {2, 4}, {3, 2, 4}, {}, {}, false, false);
    default: {
      auto fn = std::make_shared<const InterleaveFn>([](const Element& e) {
        int64_t n = e[0].data_as<int64_t>()[0];
        return make_range(10 * n, 10 * n + n + 1, 1);
      });
      return make_interleave(make_range(0, 6, 1), fn, scalar, 3, 2, 2, true);
    }
  }
}

std::string text(const Element& e) {
  std::string out;
  for (const Tensor& t : e) {
    out += t.shape().to_string() + ":";
    for (int64_t i = 0; i < t.num_elements(); ++i)
      out += std::to_string(t.data_as<int64_t>()[i]) + ",";
  }
  return out;
}

std::vector<std::string> drain(Iterator& it, size_t limit) {
  std::vector<std::string> out;
  Element e;
  while (out.size() < limit && it.next(e)) out.push_back(text(e));
  return out;
}

void put_le(std::string& s, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s[at + static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const DatasetPtr ds = pipeline(data[0]);
  const size_t k = data[1] % 64;

  std::vector<std::string> expected;
  {
    IteratorContext ctx;
    ctx.epochs = std::make_shared<EpochCounters>();
    expected = drain(*ds->make_iterator(ctx), 1000);
  }
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = ds->make_iterator(ctx);
  std::vector<std::string> got;
  Element e;
  bool ended = false;
  while (got.size() < k && !ended) {
    if (it->next(e))
      got.push_back(text(e));
    else
      ended = true;
  }
  const std::string state = save_state(*ds, *ds, ended ? nullptr : it.get(), ended);
  it.reset();
  {
    IteratorContext fresh;
    RestoredIterator restored = restore_state(ds, fresh, state);
    if (restored.iterator)
      for (auto& s : drain(*restored.iterator, 1000)) got.push_back(std::move(s));
    if (got != expected) fail("the restored iterator does not continue the saved one");
  }
  if (size <= 3 || state.size() <= 24) return 0;

  // Damage the payload from the point the third byte picks (the fingerprint comes first,
  // the sections behind it), then fix the checksum so that the parsing behind it is
  // exercised.
  std::string damaged = state;
  const size_t payload = damaged.size() - 24;
  const size_t from = data[2] * payload / 256;
  for (size_t i = 3; i < size; ++i)
    damaged[24 + (from + i - 3) % payload] ^= static_cast<char>(data[i]);
  put_le(damaged, 20, crc32c::mask(crc32c::value(damaged.data() + 24, payload)), 4);
  try {
    IteratorContext fresh;
    RestoredIterator restored = restore_state(ds, fresh, damaged);
    if (restored.iterator) drain(*restored.iterator, 1000);
  } catch (const Error&) {
    // A damaged state may fail, with a status (DATA_LOSS, mostly).
  } catch (const std::exception& ex) {
    fail(std::string("an exception that is not a dinput::Error: ") + ex.what());
  }
  return 0;
}
