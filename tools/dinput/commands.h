// The subcommands. spec and bench return their whole stdout text on success, so that a
// failure prints nothing on stdout (exit status 1, one stderr line). run streams its lines
// to stdout as the steps complete and returns ""; a failure after some steps leaves those
// lines printed, without the end lines (docs/cli.md).
#ifndef DINPUT_TOOL_COMMANDS_H_
#define DINPUT_TOOL_COMMANDS_H_

#include <string>

#include "cli_options.h"
#include "status.h"

namespace dinput_tool {

// run, spec or bench, after option parsing; returns the text for stdout.
std::string run_command(const CliOptions& options);

std::string version_text();
std::string usage_text();
// The help of one command (`dinput COMMAND --help`): its synopsis, options and output, the
// parts of usage_text that concern it. False for a name that is no command.
bool command_help(const std::string& command, std::string* text);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_COMMANDS_H_
