// The record-file subcommands (docs/records.md): write, convert and inspect. Like the
// pipeline subcommands they return their whole stdout text, so that a failure prints
// nothing on stdout.
#ifndef DINPUT_TOOL_RECORD_COMMANDS_H_
#define DINPUT_TOOL_RECORD_COMMANDS_H_

#include <string>

#include "dinput.h"
#include "status.h"

namespace dinput_tool {

// True for "write", "convert" and "inspect".
bool is_record_command(const std::string& command);

// "warning: worker W skipped N corrupt records (B bytes)\n" when the worker's readers
// skipped damaged records (with_options(skip_corrupt_records=True)), else "". For `run` to
// print on stderr once it has succeeded.
std::string skip_warning(const dinput_dist_iterator_t* iterator, int worker);

// Runs one of them and returns its stdout text; argv holds the arguments after the
// subcommand name.
std::string run_record_command(const std::string& command, int argc, char** argv);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_RECORD_COMMANDS_H_
