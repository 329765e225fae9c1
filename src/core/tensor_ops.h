// Building batches out of rows and rows out of batches: the copies the pipeline makes.
#pragma once

#include <vector>

#include "core/element.h"

namespace dinput {

// Stacks equally shaped tensors along a new first dimension. INVALID_ARGUMENT names the
// component and both shapes when they differ (component is used only for the message).
Tensor stack(const std::vector<Tensor>& rows, size_t component);
// The same for component `component` of each of `rows`, read where it is: no column of
// tensors moved out of the rows first (that vector, and the moves into and out of it, were a
// quarter of what a batch of records cost to build). Every row has that component.
Tensor stack_component(const std::vector<Element>& rows, size_t component);

// Concatenates tensors of equal dtype and equal shapes after the first dimension.
Tensor concat(const std::vector<Tensor>& parts);

// Partial batches of the same components joined row-wise, component by component (concat of
// each column); the parts are consumed. One part is returned as it is; no parts give an empty
// element.
Element concat_elements(std::vector<Element>& parts);

// A tensor with zero rows: shape `like` with the first dimension 0 (a scalar spec gives a
// scalar zero). Unknown inner dimensions become 0.
Tensor empty_rows(DType dtype, const Shape& like);

}  // namespace dinput
