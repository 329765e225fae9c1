// Data errors: the failures that belong to one element (a malformed value, damaged bytes),
// as opposed to the pipeline's own (a cancel, a missing file, memory running out). A
// sequential stage that failed on one element makes the next one when called again, so that
// ignore_errors() can drop the failure and go on; the stages that read ahead (prefetch, the
// parallel map, batch and interleave) keep such an error in line, as one item between the
// elements around it, and read on. Any other error ends their reading.
#pragma once

#include <cstdint>
#include <exception>

#include "core/status.h"
#include "data/iterator.h"

namespace dinput {

// INVALID_ARGUMENT (what map functions, parsers and decoders report) and DATA_LOSS (what
// readers report).
inline bool is_data_error(Code code) {
  return code == Code::kInvalidArgument || code == Code::kDataLoss;
}
bool is_data_error(const std::exception_ptr& error);

// Reads past `count` items of `input`, a data error counting as one item, as the stages
// that read ahead count them in their saved states. Returns the items passed: fewer than
// `count` only when the input ended first. Other errors are raised.
int64_t skip_items(Iterator& input, int64_t count);

}  // namespace dinput
