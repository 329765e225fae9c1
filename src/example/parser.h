// Parsing serialized tf.train.Example or SequenceExample records into the tensors a
// ParseSpec describes, a batch of records at a time: every record is scanned and its values
// counted first, then each output tensor is allocated once and the values are decoded
// straight into it. The scratch space is kept by the caller (one per iterator) and reused,
// so a batch costs no allocation per record.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "example/feature_spec.h"
#include "example/feature_values.h"
#include "example/record_scan.h"

namespace dinput::example {

struct ParseScratch {
  std::vector<std::string_view> entries;    // [record][key], context then feature lists
  std::vector<FeatureValues> values;        // [record][context key]
  std::vector<FeatureValues> steps;         // the steps of every feature list found
  std::vector<uint32_t> step_ranges;        // [record][list key] -> first step, and end
  std::vector<std::string_view> fragments;  // the list payloads values point to
};

class ExampleParser {
 public:
  // `op` names the operation in messages; `sequence`: the records are SequenceExamples.
  ExampleParser(ParseSpec spec, bool sequence, const char* op);

  const ParseSpec& spec() const { return spec_; }
  bool sequence() const { return sequence_; }
  // The components for `batched` input (rank 1, `batch` rows, maybe kUnknownDim) or one record.
  ElementSpec output_spec(bool batched, int64_t batch) const;

  // Parses `serialized` (bytes; rank 1 when batched, else a scalar) and appends the
  // components to `out`. `first` is how many records the caller parsed before, for messages.
  // INVALID_ARGUMENT naming the record and the feature for a malformed record, a feature of
  // the wrong type, a missing feature without a default, or a wrong number of values.
  void parse(const Tensor& serialized, bool batched, int64_t first, ParseScratch& scratch,
             Element& out) const;

 private:
  ParseSpec spec_;
  bool sequence_;
  const char* op_;
  KeyTable context_keys_;
  KeyTable list_keys_;
};

}  // namespace dinput::example
