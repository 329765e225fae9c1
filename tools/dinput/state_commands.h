// Saved iterator states in the tool (docs/cli.md, "Checkpoints"): run's --save-state and
// --restore-state, and the state subcommand that prints what a state file holds.
#ifndef DINPUT_TOOL_STATE_COMMANDS_H_
#define DINPUT_TOOL_STATE_COMMANDS_H_

#include <cstdint>
#include <string>

#include "dinput.h"
#include "handles.h"

namespace dinput_tool {

// The bytes of a state file: NOT_FOUND naming it when it cannot be opened, UNAVAILABLE when
// it cannot be read.
std::string read_state_file(const std::string& path);

// Writes the state into `path` whole: a temporary file beside it, renamed over it, so that a
// reader never sees half a state (and an interrupted run leaves the old one).
void write_state_file(const std::string& path, const dinput_state_t* state);

// The step a distributed iterator's state was saved at; INVALID_ARGUMENT naming `path` for
// a dataset iterator's state, DATA_LOSS for a damaged one.
int64_t saved_step(const std::string& state, const std::string& path);

// Every worker's iterator, restored from (or saved into) the same state.
DistIteratorPtr restore_iterator(const dinput_dist_dataset_t* dataset, const std::string& state);
StatePtr save_iterator(dinput_dist_iterator_t* iterator);

// `dinput state FILE`: the JSON description of the state in FILE, with a newline.
std::string command_state(int argc, char** argv);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_STATE_COMMANDS_H_
