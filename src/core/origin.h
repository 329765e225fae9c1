// The file and byte offset a record came from, found when an error needs them: the strings of
// a bytes tensor view the buffers a file reader filled (through batches too, whose storage
// keeps the readers' buffers), and those buffers carry their ByteOrigin (core/buffer.h).
// Nothing is stored per element; the search runs only for a message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/tensor.h"

namespace dinput {

// " from 'data-00003.tfrecord' at byte offset 123456" (offsets in a decompressed stream say
// so) for string `i` of the bytes tensor `t`, or "" when no reader said where it came from.
std::string describe_origin(const Tensor& t, int64_t i);

// The origin naming the file string `i` of the bytes tensor `t` was read from, with
// `*offset` set to the string's first byte's offset there (Buffer::origin_at); nullptr when
// no reader said.
const std::shared_ptr<const ByteOrigin>* origin_of_string(const Tensor& t, int64_t i,
                                                          uint64_t* offset);

}  // namespace dinput
