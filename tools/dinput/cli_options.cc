#include "cli_options.h"

#include <getopt.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "pipeline_builder.h"
#include "suggest.h"

namespace dinput_tool {

namespace {

// Limits that keep a typo (e.g. --replicas 10000000000) from turning into an attempt to
// create billions of devices or threads.
constexpr int64_t kMaxReplicas = 65536;
constexpr int64_t kMaxWorkers = 1024;
// The most worker processes of one job (the collective's own limit).
constexpr int64_t kMaxJobWorkers = 65536;

// The combinations of --workers, --cluster, --rank, --world-size and --rdzv that mean
// something; the library checks the values themselves (a rank not below the world size, a
// malformed URL, an unknown source) when the job is joined.
void check_job_options(const CliOptions& options) {
  const JobOptions& job = options.job;
  if (!job.given()) return;
  if (options.workers != 1) {
    throw invalid_argument(
        "--workers simulates workers as threads of one process and cannot be combined with "
        "--cluster, --rank, --world-size or --rdzv, which make this process one worker of a "
        "job; use 'dinput launch -n W -- dinput run ...' to start W worker processes");
  }
  if (!job.cluster.empty() && (job.has_rank || job.world_size != 0)) {
    throw invalid_argument(
        "--cluster reads the rank and world size from the launcher's variables; "
        "give either --cluster or --rank and --world-size");
  }
  if (job.cluster.empty() && job.has_rank != (job.world_size != 0)) {
    throw invalid_argument(job.has_rank ? "--rank needs --world-size"
                                        : "--world-size needs --rank");
  }
  if (job.cluster.empty() && !job.has_rank) {
    throw invalid_argument("--rdzv needs --rank and --world-size, or --cluster");
  }
}

std::vector<std::string> split_devices(const std::string& text) {
  std::vector<std::string> devices;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t b = item.find_first_not_of(" \t");
    size_t e = item.find_last_not_of(" \t");
    devices.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
    if (comma == std::string::npos) return devices;
    start = comma + 1;
  }
}

}  // namespace

int64_t parse_integer(const std::string& option, const std::string& text, int64_t min,
                      int64_t max) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(s, &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min || value > max ||
      std::strchr(" \t\n+", text[0]) != nullptr) {
    throw invalid_argument(option + " expects an integer from " + std::to_string(min) + " to " +
                           std::to_string(max) + ", got '" + text + "'");
  }
  return value;
}

const char* command_name(Command command) {
  switch (command) {
    case Command::kRun:
      return "run";
    case Command::kSpec:
      return "spec";
    case Command::kBench:
      return "bench";
  }
  return "?";
}

// getopt_long rather than CLI11: it is part of the C library (no dependency, and the
// tool's build stays as it is), it has exactly the conventions the tool documents (--name
// value, --name=value, options among the operands, --), and the tool keeps writing its own
// messages, which the tests and docs/cli.md pin, where CLI11 formats errors and help in
// its own words.
ParsedArgs parse_args(const std::string& command, int argc, char** argv,
                      const std::vector<OptionDef>& known) {
  ParsedArgs parsed;
  constexpr int kFirstOption = 256;  // getopt_long's codes for the known options
  std::vector<option> longopts;
  for (size_t i = 0; i < known.size(); ++i) {
    longopts.push_back(option{known[i].name + 2,
                              known[i].takes_value ? required_argument : no_argument, nullptr,
                              kFirstOption + static_cast<int>(i)});
  }
  longopts.push_back(option{nullptr, 0, nullptr, 0});
  // getopt_long reads argv[1] on and may reorder the array: it gets a copy with a program
  // name in front.
  std::vector<char*> args{const_cast<char*>("dinput")};
  args.insert(args.end(), argv, argv + argc);
  args.push_back(nullptr);
  const int n = argc + 1;
  auto name_of = [](const std::string& arg) { return arg.substr(0, arg.find('=')); };
  std::vector<std::string> names;
  for (const OptionDef& d : known) names.emplace_back(d.name);
  // "-": operands come back in order as code 1 (and POSIXLY_CORRECT cannot stop the options
  // after them being read); ":": a missing value is ':' and nothing is printed.
  optind = 0;  // a fresh scan
  opterr = 0;
  for (;;) {
    const int c = getopt_long(n, args.data(), "-:", longopts.data(), nullptr);
    if (c == -1) break;
    if (c == 1) {
      parsed.positionals.emplace_back(optarg);
      continue;
    }
    if (c >= kFirstOption) {
      parsed.options.emplace_back(known[static_cast<size_t>(c - kFirstOption)].name,
                                  optarg ? optarg : "");
      continue;
    }
    const std::string arg = args[optind - 1] ? args[optind - 1] : "";
    if (c == ':') {
      throw invalid_argument(std::string(known[static_cast<size_t>(optopt - kFirstOption)].name) +
                             " needs a value");
    }
    if (optopt >= kFirstOption) {  // a value given to an option that takes none
      throw invalid_argument(std::string(known[static_cast<size_t>(optopt - kFirstOption)].name) +
                             " takes no value");
    }
    if (arg.compare(0, 2, "--") != 0) {
      throw invalid_argument(
          "unknown option -" + std::string(1, static_cast<char>(optopt)) + " for '" + command +
          "' (options start with --; put an operand that starts with - after --)");
    }
    const std::string name = name_of(arg);
    std::string matches;
    for (const OptionDef& d : known) {
      if (std::strncmp(d.name, name.c_str(), name.size()) == 0)
        matches += std::string(matches.empty() ? "" : ", ") + d.name;
    }
    if (matches.find(',') != std::string::npos) {
      throw invalid_argument("ambiguous option " + name + " for '" + command + "': " + matches);
    }
    throw invalid_argument("unknown option " + name + " for '" + command + "'" +
                           did_you_mean(name, names) + "; see dinput " + command + " --help");
  }
  for (int i = optind; i < n; ++i) parsed.positionals.emplace_back(args[static_cast<size_t>(i)]);
  return parsed;
}

const std::string* ParsedArgs::find(const char* name) const {
  const std::string* found = nullptr;
  for (const auto& option : options) {
    if (option.first == name) found = &option.second;
  }
  return found;
}

CliOptions parse_cli_options(Command command, int argc, char** argv) {
  // Which of run (1), spec (2) and bench (4) take each option.
  struct Def {
    OptionDef option;
    unsigned commands;
  };
  static const Def kOptions[] = {
      {{"--replicas", true}, 7},       {{"--devices", true}, 7},
      {{"--workers", true}, 7},        {{"--policy", true}, 7},
      {{"--from-function", false}, 7}, {{"--optional", false}, 5},
      {{"--steps", true}, 5},          {{"--shapes", false}, 1},
      {{"--stats", false}, 5},         {{"--no-fetch-to-device", false}, 7},
      {{"--timeout-ms", true}, 7},     {{"--cluster", true}, 7},
      {{"--rank", true}, 7},           {{"--world-size", true}, 7},
      {{"--rdzv", true}, 7},           {{"--job-id", true}, 7},
      {{"--save-state", true}, 1},     {{"--restore-state", true}, 1},
      {{"--trace", true}, 4},
  };
  std::vector<OptionDef> known;
  for (const Def& d : kOptions) known.push_back(d.option);
  const ParsedArgs args = parse_args(command_name(command), argc, argv, known);
  const unsigned bit = 1u << static_cast<unsigned>(command);
  CliOptions options;
  options.command = command;
  for (const auto& [name, value] : args.options) {
    for (const Def& d : kOptions) {
      if (name == d.option.name && (d.commands & bit) == 0) {
        throw invalid_argument("option " + name + " is not valid for '" + command_name(command) +
                               "'");
      }
    }
    if (name == "--replicas") {
      options.replicas = static_cast<int>(parse_integer(name, value, 1, kMaxReplicas));
    } else if (name == "--devices") {
      options.devices = split_devices(value);
      for (const std::string& d : options.devices) {
        if (d.empty()) {
          throw invalid_argument(
              "--devices expects a comma-separated list such as "
              "CPU:0,GPU:0, got '" +
              value + "'");
        }
      }
    } else if (name == "--workers") {
      options.workers = static_cast<int>(parse_integer(name, value, 1, kMaxWorkers));
    } else if (name == "--policy") {
      if (!parse_auto_shard_policy(value, &options.policy)) {
        throw invalid_argument("--policy expects OFF, AUTO, FILE, DATA or HINT, got '" + value +
                               "'");
      }
      options.has_policy = true;
    } else if (name == "--from-function") {
      options.from_function = true;
    } else if (name == "--optional") {
      options.optional = true;
    } else if (name == "--steps") {
      options.steps = parse_integer(name, value, 0, std::numeric_limits<int64_t>::max());
      options.has_steps = true;
    } else if (name == "--shapes") {
      options.shapes = true;
    } else if (name == "--stats") {
      options.stats = true;
    } else if (name == "--trace") {
      if (value.empty()) throw invalid_argument("--trace expects a file name");
      options.trace_file = value;
    } else if (name == "--save-state") {
      options.save_state = value;
    } else if (name == "--restore-state") {
      options.restore_state = value;
    } else if (name == "--no-fetch-to-device") {
      options.fetch_to_device = false;
    } else if (name == "--timeout-ms") {
      options.timeout_ms = parse_integer(name, value, 1, std::numeric_limits<int64_t>::max());
    } else if (name == "--cluster") {
      options.job.cluster = value;
    } else if (name == "--rank") {
      options.job.rank = static_cast<int>(parse_integer(name, value, 0, kMaxJobWorkers - 1));
      options.job.has_rank = true;
    } else if (name == "--world-size") {
      options.job.world_size = static_cast<int>(parse_integer(name, value, 1, kMaxJobWorkers));
    } else if (name == "--rdzv") {
      options.job.rdzv = value;
    } else if (name == "--job-id") {
      options.job.job_id = value;
    }
  }
  check_job_options(options);
  if (args.positionals.size() > 1) {
    throw invalid_argument("expected one PIPELINE argument, got a second one: '" +
                           args.positionals[1] + "' (quote the pipeline for the shell)");
  }
  const bool have_pipeline = !args.positionals.empty();
  if (have_pipeline) options.pipeline = args.positionals[0];
  if (!have_pipeline) {
    throw invalid_argument(std::string("missing PIPELINE; usage: dinput ") + command_name(command) +
                           " [options] PIPELINE");
  }
  if (options.replicas != 0 && !options.devices.empty()) {
    throw invalid_argument("--replicas and --devices cannot be used together");
  }
  return options;
}

}  // namespace dinput_tool
