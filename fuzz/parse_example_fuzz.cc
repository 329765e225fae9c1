// Fuzz target of the tf.train.Example decoder (src/example/). The first byte chooses Example
// or SequenceExample records; the rest is cut into up to four records at each 0xFA byte.
// Every spec kind and dtype is asked for under short keys ("a" ... "e") that the fuzzer can
// find. Besides "no crash, no hang, no leak" (the sanitizers), it checks:
//   - the only failure is INVALID_ARGUMENT naming the operation;
//   - a successful parse matches the element spec, and its row splits start at 0, never
//     decrease, and end at the number of values;
//   - the batch parse and the record-by-record parse agree: each record parses alone exactly
//     when the batch parses, and to the same values.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/status.h"
#include "example/parser.h"

namespace {

using namespace dinput;
using namespace dinput::example;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "parse_example_fuzz: invariant violated: %s\n", what.c_str());
  std::abort();
}

FeatureSpec feature(const char* key, FeatureKind kind, DType dtype, Shape shape,
                    bool allow_missing = true) {
  FeatureSpec f;
  f.key = key;
  f.kind = kind;
  f.dtype = dtype;
  f.shape = shape;
  f.allow_missing = allow_missing;
  return f;
}

ParseSpec make_spec(bool sequence) {
  ParseSpec spec;
  Tensor def = Tensor::zeros(DType::kInt64, Shape());
  FeatureSpec a = feature("a", FeatureKind::kFixedLen, DType::kInt64, Shape{2});
  a.default_value = def;
  spec.add(a, false);
  spec.add(feature("b", FeatureKind::kVarLen, DType::kFloat32, Shape()), false);
  spec.add(feature("c", FeatureKind::kVarLen, DType::kBytes, Shape()), false);
  spec.add(feature("d", FeatureKind::kFixedLenSequence, DType::kFloat32, Shape{1}), false);
  if (sequence) {
    spec.add(feature("e", FeatureKind::kVarLen, DType::kInt64, Shape()), true);
    spec.add(feature("d", FeatureKind::kFixedLenSequence, DType::kBytes, Shape()), true);
  }
  return spec;
}

Tensor records_tensor(const std::vector<std::string>& records, bool scalar) {
  Tensor t = Tensor::allocate(DType::kBytes,
                              scalar ? Shape() : Shape{static_cast<int64_t>(records.size())});
  for (size_t i = 0; i < records.size(); ++i) t.set_string(static_cast<int64_t>(i), records[i]);
  return t;
}

// Parses; returns false on a (checked) INVALID_ARGUMENT.
bool parse(const ExampleParser& p, const Tensor& records, bool batched, Element& out) {
  ParseScratch scratch;
  try {
    p.parse(records, batched, 0, scratch, out);
  } catch (const Error& e) {
    if (e.code() != Code::kInvalidArgument) fail(std::string("not INVALID_ARGUMENT: ") + e.what());
    if (std::strstr(e.what(), "parse_example") == nullptr)
      fail(std::string("unnamed: ") + e.what());
    return false;
  }
  if (!matches(p.output_spec(batched, batched ? records.dim(0) : 0), out))
    fail("the result " + describe(out) + " does not match the spec");
  return true;
}

void check_splits(const Tensor& values, const Tensor& splits) {
  const int64_t* s = splits.data_as<int64_t>();
  const int64_t n = splits.num_elements();
  if (n < 1 || s[0] != 0) fail("row splits do not start at 0");
  for (int64_t i = 1; i < n; ++i)
    if (s[i] < s[i - 1]) fail("row splits decrease");
  if (s[n - 1] != values.num_elements()) fail("row splits do not end at the values' number");
}

std::string bytes_of(const Tensor& t, int64_t first, int64_t count) {
  if (t.dtype() == DType::kBytes) {
    std::string out;
    for (int64_t i = first; i < first + count; ++i) {
      out += std::to_string(t.string(i).size()) + ":";
      out += t.string(i);
    }
    return out;
  }
  const size_t size = dtype_size(t.dtype());
  return std::string(static_cast<const char*>(t.data()) + first * size, count * size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool sequence = data[0] & 1;
  std::vector<std::string> records(1);
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0xFA && records.size() < 4) {
      records.emplace_back();
    } else {
      records.back() += static_cast<char>(data[i]);
    }
  }
  const ExampleParser parser(make_spec(sequence), sequence, "parse_example");
  const int64_t n = static_cast<int64_t>(records.size());
  Element batch;
  const bool batch_ok = parse(parser, records_tensor(records, false), true, batch);
  std::vector<Element> singles(records.size());
  bool all_ok = true;
  for (size_t r = 0; r < records.size(); ++r)
    all_ok = parse(parser, records_tensor({records[r]}, true), false, singles[r]) && all_ok;
  if (all_ok != batch_ok) fail("the batch and the records one by one disagree on success");
  if (!batch_ok) return 0;

  // A ragged feature: row r of (values, splits) is the single record's values.
  auto same_ragged = [&](size_t values, size_t splits, size_t single, int64_t r) {
    check_splits(batch[values], batch[splits]);
    const int64_t* s = batch[splits].data_as<int64_t>();
    if (bytes_of(batch[values], s[r], s[r + 1] - s[r]) !=
        bytes_of(singles[r][single], 0, singles[r][single].num_elements()))
      fail("a ragged row differs from its record's parse");
  };
  // A padded sequence [n, T, ...]: the first values of row r are the single record's.
  auto same_padded = [&](size_t c, size_t single, int64_t r) {
    const Tensor& one = singles[r][single];
    const int64_t row = batch[c].num_elements() / n;
    if (one.num_elements() > row) fail("a record's sequence is longer than the batch's");
    if (bytes_of(batch[c], r * row, one.num_elements()) != bytes_of(one, 0, one.num_elements()))
      fail("a padded row differs from its record's parse");
  };
  for (int64_t r = 0; r < n; ++r) {
    if (bytes_of(batch[0], r * 2, 2) != bytes_of(singles[r][0], 0, 2))
      fail("a fixed-length row differs from its record's parse");
    same_ragged(1, 2, 1, r);
    same_ragged(3, 4, 2, r);
    same_padded(5, 3, r);
    if (!sequence) continue;
    same_padded(6, 4, r);
    // e: values, steps per record (outer), values per step (inner).
    const int64_t* outer = batch[8].data_as<int64_t>();
    const int64_t* inner = batch[9].data_as<int64_t>();
    if (outer[0] != 0 || outer[n] + 1 != batch[9].num_elements())
      fail("the outer splits do not cover the steps");
    for (int64_t i = 1; i <= n; ++i)
      if (outer[i] < outer[i - 1]) fail("the outer splits decrease");
    check_splits(batch[7], batch[9]);
    const Tensor& steps = singles[r][6];
    const int64_t k = outer[r + 1] - outer[r];
    if (steps.num_elements() != k + 1) fail("a record's steps differ from the batch's");
    for (int64_t t = 0; t <= k; ++t)
      if (inner[outer[r] + t] - inner[outer[r]] != steps.data_as<int64_t>()[t])
        fail("a record's step splits differ from the batch's");
    if (bytes_of(batch[7], inner[outer[r]], inner[outer[r + 1]] - inner[outer[r]]) !=
        bytes_of(singles[r][5], 0, singles[r][5].num_elements()))
      fail("a record's feature list values differ from the batch's");
  }
  return 0;
}
