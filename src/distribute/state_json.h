// A saved iterator state described as JSON (`dinput state FILE`, dinput_state_describe): what
// the container holds, checked as a restore checks it, without a pipeline to restore into.
#pragma once

#include <string>
#include <string_view>

namespace dinput {

// One JSON object (docs/checkpoint.md, "Reading a state"). DATA_LOSS for a damaged or
// truncated state, as for a restore.
std::string describe_state(std::string_view state);

}  // namespace dinput
