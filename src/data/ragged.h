// Ragged values in TensorFlow's RaggedTensor encoding: a component of flat values followed by
// one or more int64 row splits components, outermost first, where row i of a splits component
// is rows [splits[i], splits[i + 1]) of the next splits component, or of the values for the
// innermost (splits[0] is 0, the last entry that length). The parse nodes give their VarLenFeatures
// this way; padded_batch batches such values as ragged values, since padding row splits would break
// them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace dinput {

// The row splits components of `input`'s elements (Dataset::row_splits_components), looked
// for through the nodes that hand their input's elements on unchanged (prefetch, shuffle,
// filter, take, ...). Empty when there are none.
std::vector<bool> find_row_splits(const Dataset& input);

// Batches the ragged value of components [first, first + 1 + splits) of `rows` and appends
// it to `out`: the values concatenated, a new outermost row splits over the rows, then each
// splits component merged (each row's entries offset by what the rows before it hold). With
// no splits (a row's values alone), the rows are the values' lengths. A splits
// component that is not int64 [n + 1], starting at 0, non-decreasing and ending at the length
// of the component below it is INVALID_ARGUMENT naming `op`, the component and the input
// element (index[r]), as are values whose inner dimensions differ.
void batch_ragged(const char* op, const std::vector<Element>& rows, size_t first, size_t splits,
                  const std::vector<int64_t>& index, Element& out);

}  // namespace dinput
