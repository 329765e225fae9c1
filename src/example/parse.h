// parse_example, parse_single_example and parse_sequence_example: built-in map stages that
// turn serialized tf.train.Example / SequenceExample records into tensors (docs/examples.md).
#pragma once

#include "data/dataset.h"
#include "example/feature_spec.h"

namespace dinput::example {

enum class ParseOp {
  kExample,          // parse_example: a bytes vector of Examples (a batch) per element
  kSingleExample,    // parse_single_example: one Example (a bytes scalar) per element
  kSequenceExample,  // parse_sequence_example: one SequenceExample, or a vector of them
};

// The parsed components replace component `component` of the input's elements (which must
// hold the serialized records); the other components pass through unchanged, in place.
// INVALID_ARGUMENT for a component out of range or of the wrong dtype or rank, an empty
// spec, or feature lists given to an Example parse.
DatasetPtr make_parse(DatasetPtr input, ParseOp op, ParseSpec spec, int64_t component);

}  // namespace dinput::example
