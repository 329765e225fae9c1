// What parse_example and its relatives extract from each record: one entry per feature key,
// as tf.io's FixedLenFeature, VarLenFeature and FixedLenSequenceFeature describe them, and
// the components each entry becomes (docs/examples.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/element.h"

namespace dinput::example {

enum class FeatureKind { kFixedLen, kVarLen, kFixedLenSequence };

struct FeatureSpec {
  std::string key;
  FeatureKind kind = FeatureKind::kFixedLen;
  DType dtype = DType::kInvalid;  // int64, float32 or bytes
  Shape shape;                    // of one record's value (FixedLen) or one step's (sequence)
  // FixedLen: the value of a record that lacks the feature, with `shape` (a single value given
  // by the user is broadcast). FixedLenSequence: the scalar that pads short sequences.
  // Unset: a missing FixedLen feature is an error, and padding is zero or "".
  std::optional<Tensor> default_value;
  bool allow_missing = false;  // FixedLenSequence: a missing feature is an empty sequence
};

// The features of one parse: `context` are the features of an Example (or the context of a
// SequenceExample); `sequence` the feature lists of a SequenceExample. Each list is kept
// sorted by key, which is the order of the output components.
class ParseSpec {
 public:
  // Adds a feature; INVALID_ARGUMENT naming the key for a dtype other than int64, float32
  // or bytes, an unknown or negative dimension, a default of the wrong dtype or size, a key
  // given twice in the same list, or a kind the list does not take (a feature list holds
  // VarLen and FixedLenSequence features only).
  void add(FeatureSpec feature, bool feature_list);

  const std::vector<FeatureSpec>& context() const { return context_; }
  const std::vector<FeatureSpec>& sequence() const { return sequence_; }
  bool empty() const { return context_.empty() && sequence_.empty(); }

  // "id: FixedLen(int64[], default=0), tags: VarLen(bytes)", the lists separated by " | ":
  // the operation's arguments in a saved state's fingerprint and in `dinput spec`.
  std::string to_string() const;

 private:
  std::vector<FeatureSpec> context_;
  std::vector<FeatureSpec> sequence_;
};

// The components `features` become, in order, for records batched `batch` rows at a time
// (kUnknownDim: a batch of unknown size) or for one record (batched = false). `feature_list`:
// the features are a SequenceExample's feature lists.
// Which of those components are row splits (core of a ragged value: the values, then its
// splits, outermost first), in the same order.
std::vector<bool> row_splits_flags(const std::vector<FeatureSpec>& features, bool feature_list,
                                   bool batched);
ElementSpec output_spec(const std::vector<FeatureSpec>& features, bool feature_list, bool batched,
                        int64_t batch);

}  // namespace dinput::example
