// The options of the run, spec and bench subcommands.
#ifndef DINPUT_TOOL_CLI_OPTIONS_H_
#define DINPUT_TOOL_CLI_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dinput.h"
#include "status.h"

namespace dinput_tool {

enum class Command { kRun, kSpec, kBench };

struct CliOptions {
  Command command = Command::kRun;
  std::string pipeline;
  int replicas = 0;                  // --replicas N (total); 0 when not given
  std::vector<std::string> devices;  // --devices, each worker's local devices
  int workers = 1;                   // --workers W
  bool has_policy = false;
  dinput_auto_shard_policy_t policy = DINPUT_AUTO_SHARD_AUTO;
  bool from_function = false;
  bool optional = false;
  bool has_steps = false;
  int64_t steps = 0;
  bool shapes = false;
  bool stats = false;  // run: a last line with each worker's reader statistics
  bool fetch_to_device = true;
  int64_t timeout_ms = 0;  // collective timeout with --workers; 0: the library's default
};

// Parses the arguments that follow the subcommand name. Options may come before or after
// the pipeline; `--` ends the options.
Status ParseCliOptions(Command command, int argc, char **argv, CliOptions *out);

const char *CommandName(Command command);

// Parses the value of an integer option: decimal, within [min, max], else an
// INVALID_ARGUMENT naming the option and the range.
Status ParseInteger(const std::string &option, const std::string &text, int64_t min, int64_t max,
                    int64_t *out);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_CLI_OPTIONS_H_
