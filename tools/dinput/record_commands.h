// The record-file subcommands (DESIGN.md section 5): write, convert and inspect. Like the
// pipeline subcommands they return their whole stdout text, so that a failure prints
// nothing on stdout.
#ifndef DINPUT_TOOL_RECORD_COMMANDS_H_
#define DINPUT_TOOL_RECORD_COMMANDS_H_

#include <string>

#include "status.h"

namespace dinput_tool {

// True for "write", "convert" and "inspect".
bool IsRecordCommand(const std::string &command);

// Runs one of them; argv holds the arguments after the subcommand name.
Status RunRecordCommand(const std::string &command, int argc, char **argv,
                        std::string *stdout_text);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_RECORD_COMMANDS_H_
