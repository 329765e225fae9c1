// Copying records out of the read buffers they view, for stages that hold elements long.
//
// A record read from a file is a view of the reader's chunk (megabytes: thousands of
// records), so it keeps the whole chunk alive. A shuffle buffer holds each record for a
// while, and the last of a chunk's records to leave it does so long after the others: the
// chunks alive then hold several times the buffered bytes, and each one the reader fills
// meanwhile is fresh memory to fault in. The shuffle copies the records it has held longest
// (docs/records.md, "Memory behind a shuffle").
#pragma once

#include <cstddef>
#include <vector>

#include "core/element.h"

namespace dinput {

// A string is copied only when the buffers it keeps alive hold at least this many times its
// own bytes: below that, the copy costs more than the memory it frees.
constexpr size_t kCompactMinRatio = 16;

// Copies the strings of the bytes components of `elements` that view host buffers holding
// between kCompactMinRatio and `max_ratio` times the component's own bytes, all into one new
// buffer (so that a call costs a few allocations, not a few per string), and points the
// components at the copies. Where each string was read from is kept (core/origin.h). File
// mappings (Buffer::maps_file) and the storage of other bytes tensors are not counted:
// keeping them costs no fresh memory. A buffer that is part of a larger one (Buffer::holder:
// a stored zstd block inside a read chunk) counts as the larger one, once however many of
// its parts the strings view. Returns the bytes copied.
size_t compact_elements(const std::vector<Element*>& elements, size_t max_ratio);

}  // namespace dinput
