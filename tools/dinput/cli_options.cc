#include "cli_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "pipeline_builder.h"

namespace dinput_tool {

namespace {

// Limits that keep a typo (e.g. --replicas 10000000000) from turning into an attempt to
// create billions of devices or threads.
constexpr int64_t kMaxReplicas = 65536;
constexpr int64_t kMaxWorkers = 1024;

std::vector<std::string> SplitDevices(const std::string &text) {
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

Status ParseInteger(const std::string &option, const std::string &text, int64_t min, int64_t max,
                    int64_t *out) {
  const char *s = text.c_str();
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(s, &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min || value > max ||
      std::strchr(" \t\n+", text[0]) != nullptr) {
    return InvalidArgument(option + " expects an integer from " + std::to_string(min) + " to " +
                           std::to_string(max) + ", got '" + text + "'");
  }
  *out = value;
  return OkStatus();
}

const char *CommandName(Command command) {
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

Status ParseCliOptions(Command command, int argc, char **argv, CliOptions *out) {
  CliOptions options;
  options.command = command;
  bool have_pipeline = false;
  bool options_ended = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (options_ended || arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      if (have_pipeline) {
        return InvalidArgument("expected one PIPELINE argument, got a second one: '" + arg +
                               "' (quote the pipeline for the shell)");
      }
      options.pipeline = arg;
      have_pipeline = true;
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    std::string name = arg, value;
    bool has_value = false;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    auto need_value = [&]() -> Status {
      if (has_value) return OkStatus();
      if (i + 1 >= argc) return InvalidArgument(name + " needs a value");
      value = argv[++i];
      has_value = true;
      return OkStatus();
    };
    auto flag_only = [&]() -> Status {
      if (has_value) return InvalidArgument(name + " takes no value");
      return OkStatus();
    };
    auto not_for = [&](bool disallowed) -> Status {
      if (disallowed) {
        return InvalidArgument("option " + name + " is not valid for '" + CommandName(command) +
                               "'");
      }
      return OkStatus();
    };
    int64_t number = 0;
    if (name == "--replicas") {
      DINPUT_TOOL_RETURN_IF_ERROR(need_value());
      DINPUT_TOOL_RETURN_IF_ERROR(ParseInteger(name, value, 1, kMaxReplicas, &number));
      options.replicas = static_cast<int>(number);
    } else if (name == "--devices") {
      DINPUT_TOOL_RETURN_IF_ERROR(need_value());
      options.devices = SplitDevices(value);
      for (const std::string &d : options.devices) {
        if (d.empty()) {
          return InvalidArgument(
              "--devices expects a comma-separated list such as "
              "CPU:0,GPU:0, got '" +
              value + "'");
        }
      }
    } else if (name == "--workers") {
      DINPUT_TOOL_RETURN_IF_ERROR(need_value());
      DINPUT_TOOL_RETURN_IF_ERROR(ParseInteger(name, value, 1, kMaxWorkers, &number));
      options.workers = static_cast<int>(number);
    } else if (name == "--policy") {
      DINPUT_TOOL_RETURN_IF_ERROR(need_value());
      if (!ParseAutoShardPolicy(value, &options.policy)) {
        return InvalidArgument("--policy expects OFF, AUTO, FILE, DATA or HINT, got '" + value +
                               "'");
      }
      options.has_policy = true;
    } else if (name == "--from-function") {
      DINPUT_TOOL_RETURN_IF_ERROR(flag_only());
      options.from_function = true;
    } else if (name == "--optional") {
      DINPUT_TOOL_RETURN_IF_ERROR(flag_only());
      DINPUT_TOOL_RETURN_IF_ERROR(not_for(command == Command::kSpec));
      options.optional = true;
    } else if (name == "--steps") {
      DINPUT_TOOL_RETURN_IF_ERROR(need_value());
      DINPUT_TOOL_RETURN_IF_ERROR(not_for(command == Command::kSpec));
      DINPUT_TOOL_RETURN_IF_ERROR(
          ParseInteger(name, value, 0, std::numeric_limits<int64_t>::max(), &number));
      options.steps = number;
      options.has_steps = true;
    } else if (name == "--shapes") {
      DINPUT_TOOL_RETURN_IF_ERROR(flag_only());
      DINPUT_TOOL_RETURN_IF_ERROR(not_for(command != Command::kRun));
      options.shapes = true;
    } else if (name == "--stats") {
      DINPUT_TOOL_RETURN_IF_ERROR(flag_only());
      DINPUT_TOOL_RETURN_IF_ERROR(not_for(command != Command::kRun));
      options.stats = true;
    } else if (name == "--no-fetch-to-device") {
      DINPUT_TOOL_RETURN_IF_ERROR(flag_only());
      options.fetch_to_device = false;
    } else if (name == "--timeout-ms") {
      DINPUT_TOOL_RETURN_IF_ERROR(need_value());
      DINPUT_TOOL_RETURN_IF_ERROR(
          ParseInteger(name, value, 1, std::numeric_limits<int64_t>::max(), &number));
      options.timeout_ms = number;
    } else {
      return InvalidArgument("unknown option " + name + " for '" + CommandName(command) +
                             "' (see dinput help)");
    }
  }
  if (!have_pipeline) {
    return InvalidArgument(std::string("missing PIPELINE; usage: dinput ") + CommandName(command) +
                           " [options] PIPELINE");
  }
  if (options.replicas != 0 && !options.devices.empty()) {
    return InvalidArgument("--replicas and --devices cannot be used together");
  }
  *out = std::move(options);
  return OkStatus();
}

}  // namespace dinput_tool
