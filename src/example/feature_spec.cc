// Checking feature specifications, and the element spec they give.
#include "example/feature_spec.h"

#include <algorithm>
#include <cstdio>

#include "core/quote.h"
#include "core/status.h"

namespace dinput::example {

namespace {

const char* kind_name(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::kFixedLen:
      return "FixedLenFeature";
    case FeatureKind::kVarLen:
      return "VarLenFeature";
    case FeatureKind::kFixedLenSequence:
      return "FixedLenSequenceFeature";
  }
  return "?";
}

// The default as a tensor of `dtype` and `shape`: the user's tensor when it has that many
// values, or its single value repeated.
Tensor broadcast_default(const FeatureSpec& f, const Tensor& given) {
  const int64_t n = f.shape.num_elements();
  const int64_t got = given.num_elements();
  DINPUT_CHECK_ARG(given.defined() && given.dtype() == f.dtype, "feature ", quoted(f.key),
                   ": the default must be a ", dtype_name(f.dtype), " tensor, got ",
                   given.defined() ? given.describe() : std::string("none"));
  given.require_host(str_cat("the default of feature ", quoted(f.key)));
  DINPUT_CHECK_ARG(got == n || got == 1, "feature ", quoted(f.key), ": the default has ", got,
                   " values; the shape ", f.shape.to_string(), " needs ", n, " (or 1 to repeat)");
  Tensor out = Tensor::allocate(f.dtype, f.shape);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = got == 1 ? 0 : i;
    switch (f.dtype) {
      case DType::kInt64:
        out.mutable_data_as<int64_t>()[i] = given.data_as<int64_t>()[j];
        break;
      case DType::kFloat32:
        out.mutable_data_as<float>()[i] = given.data_as<float>()[j];
        break;
      default:
        out.set_string(i, given.string(j));
    }
  }
  return out;
}

std::string value_text(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt64:
      return std::to_string(t.data_as<int64_t>()[i]);
    case DType::kFloat32: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(t.data_as<float>()[i]));
      return buf;
    }
    default:
      return quoted(t.string(i));
  }
}

void append_list(std::string& out, const std::vector<FeatureSpec>& list) {
  for (size_t i = 0; i < list.size(); ++i) {
    const FeatureSpec& f = list[i];
    if (i) out += ", ";
    out += quoted(f.key) + ": " + kind_name(f.kind) + "(";
    if (f.kind != FeatureKind::kVarLen) out += f.shape.to_string() + ", ";
    out += dtype_name(f.dtype);
    if (f.kind == FeatureKind::kFixedLenSequence)
      out += f.allow_missing ? ", allow_missing=true" : ", allow_missing=false";
    if (f.default_value) {
      out += ", default=[";
      for (int64_t v = 0; v < f.default_value->num_elements(); ++v)
        out += (v ? "," : "") + value_text(*f.default_value, v);
      out += "]";
    }
    out += ")";
  }
}

}  // namespace

void ParseSpec::add(FeatureSpec f, bool feature_list) {
  DINPUT_CHECK_ARG(
      f.dtype == DType::kInt64 || f.dtype == DType::kFloat32 || f.dtype == DType::kBytes,
      "feature ", quoted(f.key), ": dtype must be int64, float32 or bytes, got ",
      dtype_name(f.dtype));
  DINPUT_CHECK_ARG(!feature_list || f.kind != FeatureKind::kFixedLen, "feature list ",
                   quoted(f.key),
                   ": a feature list takes VarLenFeature or FixedLenSequenceFeature, not "
                   "FixedLenFeature");
  if (f.kind == FeatureKind::kVarLen) {
    DINPUT_CHECK_ARG(!f.default_value, "feature ", quoted(f.key),
                     ": a VarLenFeature has no default");
    f.shape = Shape();
  }
  for (int i = 0; i < f.shape.rank(); ++i)
    DINPUT_CHECK_ARG(f.shape[i] >= 0, "feature ", quoted(f.key), ": dimension ", i, " is ",
                     f.shape[i], "; the shape of a feature must be fully known");
  DINPUT_CHECK_ARG(f.shape.checked_num_elements() >= 0, "feature ", quoted(f.key), ": the shape ",
                   f.shape.to_string(), " has too many elements");
  if (f.default_value) {
    if (f.kind == FeatureKind::kFixedLen) {
      f.default_value = broadcast_default(f, *f.default_value);
    } else {
      FeatureSpec scalar = f;
      scalar.shape = Shape();
      DINPUT_CHECK_ARG(f.default_value->num_elements() == 1, "feature ", quoted(f.key),
                       ": the padding value of a FixedLenSequenceFeature is one value, got ",
                       f.default_value->describe());
      f.default_value = broadcast_default(scalar, *f.default_value);
    }
  }
  std::vector<FeatureSpec>& list = feature_list ? sequence_ : context_;
  auto at = std::lower_bound(list.begin(), list.end(), f.key,
                             [](const FeatureSpec& a, const std::string& k) { return a.key < k; });
  DINPUT_CHECK_ARG(at == list.end() || at->key != f.key, "feature ", quoted(f.key),
                   " is given twice", feature_list ? " among the feature lists" : "");
  list.insert(at, std::move(f));
}

std::string ParseSpec::to_string() const {
  std::string out;
  append_list(out, context_);
  if (!sequence_.empty()) {
    out += " | ";
    append_list(out, sequence_);
  }
  return out;
}

std::vector<bool> row_splits_flags(const std::vector<FeatureSpec>& features, bool feature_list,
                                   bool batched) {
  std::vector<bool> out;
  for (const FeatureSpec& f : features) {
    out.push_back(false);
    if (f.kind != FeatureKind::kVarLen) continue;
    if (batched) out.push_back(true);
    if (feature_list) out.push_back(true);
  }
  return out;
}

ElementSpec output_spec(const std::vector<FeatureSpec>& features, bool feature_list, bool batched,
                        int64_t batch) {
  ElementSpec out;
  const int64_t splits = batch == kUnknownDim ? kUnknownDim : batch + 1;
  for (const FeatureSpec& f : features) {
    if (f.kind == FeatureKind::kVarLen) {
      out.push_back({f.dtype, Shape{kUnknownDim}});
      if (batched) out.push_back({DType::kInt64, Shape{splits}});
      if (feature_list) out.push_back({DType::kInt64, Shape{kUnknownDim}});
      continue;
    }
    Shape s;
    if (batched) s.push_back(batch);
    if (feature_list || f.kind == FeatureKind::kFixedLenSequence) s.push_back(kUnknownDim);
    for (int i = 0; i < f.shape.rank(); ++i) s.push_back(f.shape[i]);
    out.push_back({f.dtype, s});
  }
  return out;
}

}  // namespace dinput::example
