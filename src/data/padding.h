// Padding elements of different shapes to one shape and stacking them into a batch: what
// padded_batch and bucket_by_sequence_length do with the rows of each batch.
#pragma once

#include <string>
#include <vector>

#include "core/element.h"

namespace dinput {

// How the rows of one batch are padded. Per component: the shape every row is padded to
// (kUnknownDim: the longest row of the batch in that dimension) and the scalar that fills
// the padding (of the component's dtype).
struct Padding {
  std::vector<Shape> shapes;
  std::vector<Tensor> values;
};

// The padding of a padded batch over elements of `spec`: `shapes` empty means every unknown
// dimension pads to the batch's longest; `values` empty means 0 (empty bytes). Checks that
// each padded shape has its component's rank and is no smaller than a known dimension, and
// that each value is a scalar of its component's dtype (INVALID_ARGUMENT naming `op`, the
// argument and the component).
Padding make_padding(const char* op, const ElementSpec& spec, std::vector<Shape> shapes,
                     std::vector<Tensor> values);

// The spec of a batch of rows padded by `padding` (first dimension `batch`, maybe unknown).
ElementSpec padded_spec(const ElementSpec& spec, const Padding& padding, int64_t batch);

// Pads `rows` to one shape per component and stacks them along a new first dimension. A
// row larger than its padded shape is INVALID_ARGUMENT naming `op`, the component and the
// row's input element (index[r], the position of row r in the input). `names`, when given,
// are the component numbers messages use for the rows' components (rows that hold some
// components of the input's elements).
Element pad_rows(const char* op, const std::vector<Element>& rows, const Padding& padding,
                 const std::vector<int64_t>& index, const std::vector<size_t>& names = {});

// Concatenates batches along their first dimension, first padding each to the largest size
// of every later dimension with `value` (a scalar of their dtype): how rows of padded batches
// of different widths are regrouped (the distributed split).
Tensor concat_padded(const std::vector<Tensor>& parts, const Tensor& value);

// "padded_shapes=[[None],[]], padding_values=[0,\"\"]" for fingerprints.
std::string describe_padding(const Padding& padding);

}  // namespace dinput
