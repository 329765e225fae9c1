// Names of the record-file compressions, shared by the chain syntax (records(compression=))
// and the record subcommands (write, convert, inspect).
#ifndef DINPUT_TOOL_COMPRESSION_H_
#define DINPUT_TOOL_COMPRESSION_H_

#include <string>

#include "dinput.h"

namespace dinput_tool {

// NONE, ZSTD or GZIP in any case; "" is NONE, as in tf.data's compression_type.
bool parse_compression(const std::string& name, dinput_compression_t* out);

// "NONE", "ZSTD" or "GZIP".
const char* compression_name(dinput_compression_t compression);

// What parse_compression accepts, for messages.
constexpr const char* kCompressionChoices = "\"NONE\", \"ZSTD\", \"GZIP\" (any case), \"\" or None";

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_COMPRESSION_H_
