// The subcommands. Each returns its whole stdout text on success, so that a failure prints
// nothing on stdout (the CLI contract: exit status 1, one stderr line, empty stdout).
#ifndef DINPUT_TOOL_COMMANDS_H_
#define DINPUT_TOOL_COMMANDS_H_

#include <string>

#include "cli_options.h"
#include "status.h"

namespace dinput_tool {

// run, spec or bench, after option parsing.
Status RunCommand(const CliOptions &options, std::string *stdout_text);

std::string VersionText();
std::string UsageText();

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_COMMANDS_H_
