// The options of the run, spec and bench subcommands.
#ifndef DINPUT_TOOL_CLI_OPTIONS_H_
#define DINPUT_TOOL_CLI_OPTIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dinput.h"
#include "status.h"

namespace dinput_tool {

enum class Command { kRun, kSpec, kBench };

// How this process joins a multi-process job, as given on the command line.
struct JobOptions {
  std::string cluster;  // --cluster SOURCE; "" when not given
  bool has_rank = false;
  int rank = 0;        // --rank R
  int world_size = 0;  // --world-size W; 0 when not given
  std::string rdzv;    // --rdzv URL; "" when not given
  std::string job_id;  // --job-id ID; "" when not given
  // Whether any of the above was given.
  bool given() const { return !cluster.empty() || has_rank || world_size != 0 || !rdzv.empty(); }
};

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
  // run: a last line with each worker's reader and per-stage statistics; bench: a table of
  // the stages after the result line
  bool stats = false;
  std::string trace_file;  // bench --trace FILE; "" when not given
  bool fetch_to_device = true;
  std::string save_state;     // run --save-state FILE; "" when not given
  std::string restore_state;  // run --restore-state FILE; "" when not given
  int64_t timeout_ms = 0;     // collective timeout with --workers; 0: the library's default
  // One worker process of a multi-process job (docs/cli.md, "Several processes"):
  // --cluster SOURCE, or --rank/--world-size/--rdzv, or DINPUT_RANK and DINPUT_WORLD_SIZE
  // in the environment (what `dinput launch` sets).
  JobOptions job;
};

// One option a command accepts: its name with the leading "--", and whether it takes a
// value.
struct OptionDef {
  const char* name;
  bool takes_value;
};

// What parse_args found: the options in the order given (a later one wins in find()), and the
// operands.
struct ParsedArgs {
  std::vector<std::pair<std::string, std::string>> options;  // name (as in OptionDef), value
  std::vector<std::string> positionals;

  const std::string* find(const char* name) const;
};

// The one argument parser of every command: `--name value` or `--name=value`, an
// unambiguous prefix of a name (--rep for --replicas), options before or after the operands,
// `--` ends the options, and `-` alone is an operand (stdin). An unknown option is
// INVALID_ARGUMENT naming it and `command`, with the closest known name when one is close.
ParsedArgs parse_args(const std::string& command, int argc, char** argv,
                      const std::vector<OptionDef>& known);

// Parses the arguments that follow the subcommand name of run, spec or bench (parse_args,
// then the checks of each value).
CliOptions parse_cli_options(Command command, int argc, char** argv);

const char* command_name(Command command);

// Parses the value of an integer option: decimal, within [min, max], else an
// INVALID_ARGUMENT naming the option and the range.
int64_t parse_integer(const std::string& option, const std::string& text, int64_t min, int64_t max);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_CLI_OPTIONS_H_
