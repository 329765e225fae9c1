// The feature spec handle and the Example parse operations (docs/examples.md).
#include <string>
#include <vector>

#include "capi/firewall.h"
#include "capi/frozen.h"
#include "capi/handles.h"
#include "capi/host_tensors.h"
#include "example/parse.h"

using namespace dinput;
using example::FeatureKind;
using example::FeatureSpec;
using example::ParseOp;
using example::ParseSpec;

// The features added so far, checked as they are added (as a context list: whether a parse
// takes them as feature lists is checked when it does).
struct dinput_feature_spec {
  dinput_feature_spec() = default;
  ParseSpec spec;
  capi::FreezeMark frozen;  // set by the first parse built with it
};

namespace {

dinput_status_t add(const char* fn, dinput_feature_spec_t* spec, const char* key, FeatureKind kind,
                    dinput_dtype_t dtype, const int64_t* shape, int rank, bool allow_missing,
                    const dinput_tensor_t* default_value) {
  return capi::guard(fn, [&] {
    DINPUT_REQUIRE(spec);
    DINPUT_REQUIRE(key);
    spec->frozen.check_mutable("feature spec");
    DINPUT_CHECK_ARG(rank >= 0, fn, ": rank must be >= 0, got ", rank);
    if (rank > 0) DINPUT_REQUIRE(shape);
    FeatureSpec f;
    f.key = key;
    f.kind = kind;
    f.dtype = static_cast<DType>(dtype);
    DINPUT_CHECK_ARG(dtype_valid(f.dtype), fn, ": invalid dtype ", static_cast<int>(dtype));
    f.shape = Shape(shape, rank);
    f.allow_missing = allow_missing;
    if (default_value)
      f.default_value = capi::host_tensor(default_value->t, fn, "argument 'default_value'");
    try {
      spec->spec.add(std::move(f), false);
    } catch (const Error& e) {
      raise(e.code(), fn, ": ", e.what());
    }
  });
}

// The spec of a parse: `context` as Example features (or a SequenceExample's context) and
// `lists` as feature lists. Both are frozen by the caller once the dataset is built.
ParseSpec combine(const dinput_feature_spec_t* context, const dinput_feature_spec_t* lists) {
  ParseSpec out;
  if (context)
    for (const auto& f : context->spec.context()) out.add(f, false);
  if (lists)
    for (const auto& f : lists->spec.context()) out.add(f, true);
  return out;
}

dinput_status_t parse(const char* fn, dinput_dataset_t** out, const dinput_dataset_t* input,
                      ParseOp op, const dinput_feature_spec_t* context,
                      const dinput_feature_spec_t* lists, int64_t component) {
  dinput_status_t code = capi::guard(fn, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(input);
    if (op != ParseOp::kSequenceExample) DINPUT_REQUIRE(context);
    try {
      *out = capi::new_handle<dinput_dataset>(
          example::make_parse(input->ds, op, combine(context, lists), component));
    } catch (const Error& e) {
      raise(e.code(), fn, ": ", e.what());
    }
  });
  if (code == DINPUT_OK) {
    if (context) context->frozen.freeze(fn);
    if (lists) lists->frozen.freeze(fn);
  }
  return code;
}

}  // namespace

extern "C" {

DINPUT_API dinput_status_t dinput_feature_spec_new(dinput_feature_spec_t** out) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_feature_spec>();
  });
}

DINPUT_API void dinput_feature_spec_free(dinput_feature_spec_t* spec) { capi::free_handle(spec); }

DINPUT_API dinput_status_t dinput_feature_spec_add_fixed_len(dinput_feature_spec_t* spec,
                                                             const char* key, dinput_dtype_t dtype,
                                                             const int64_t* shape, int rank,
                                                             const dinput_tensor_t* default_value) {
  return add(__func__, spec, key, FeatureKind::kFixedLen, dtype, shape, rank, false, default_value);
}

DINPUT_API dinput_status_t dinput_feature_spec_add_var_len(dinput_feature_spec_t* spec,
                                                           const char* key, dinput_dtype_t dtype) {
  return add(__func__, spec, key, FeatureKind::kVarLen, dtype, nullptr, 0, false, nullptr);
}

DINPUT_API dinput_status_t dinput_feature_spec_add_fixed_len_sequence(
    dinput_feature_spec_t* spec, const char* key, dinput_dtype_t dtype, const int64_t* shape,
    int rank, int allow_missing, const dinput_tensor_t* default_value) {
  return add(__func__, spec, key, FeatureKind::kFixedLenSequence, dtype, shape, rank,
             allow_missing != 0, default_value);
}

DINPUT_API dinput_status_t dinput_dataset_parse_example(dinput_dataset_t** out,
                                                        const dinput_dataset_t* input,
                                                        const dinput_feature_spec_t* features,
                                                        int64_t component) {
  return parse(__func__, out, input, ParseOp::kExample, features, nullptr, component);
}

DINPUT_API dinput_status_t
dinput_dataset_parse_single_example(dinput_dataset_t** out, const dinput_dataset_t* input,
                                    const dinput_feature_spec_t* features, int64_t component) {
  return parse(__func__, out, input, ParseOp::kSingleExample, features, nullptr, component);
}

DINPUT_API dinput_status_t dinput_dataset_parse_sequence_example(
    dinput_dataset_t** out, const dinput_dataset_t* input,
    const dinput_feature_spec_t* context_features, const dinput_feature_spec_t* sequence_features,
    int64_t component) {
  return parse(__func__, out, input, ParseOp::kSequenceExample, context_features, sequence_features,
               component);
}

}  // extern "C"
