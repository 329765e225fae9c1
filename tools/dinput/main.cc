// dinput: the command-line front end of the library (see docs/cli.md and
// `dinput help`). It uses the library only through the C API in dinput.h.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli_options.h"
#include "commands.h"
#include "launch.h"
#include "record_commands.h"
#include "state_commands.h"
#include "status.h"
#include "suggest.h"

namespace {

using dinput_tool::Failure;

// The one place a command's failure is reported: one stderr line and exit status 1.
int fail(const Failure& failure) {
  std::fprintf(stderr, "%s\n", failure.line().c_str());
  return 1;
}

// A reader that closed the pipe early (`dinput ... | head -1`) got what it wanted: that is
// a quiet exit with status 0, not an error (SIGPIPE is ignored, so writes report EPIPE).
int print(const std::string& text) {
  errno = 0;
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    if (errno == EPIPE) return 0;
    return fail(Failure(DINPUT_UNAVAILABLE, std::string("could not write the output to stdout: ") +
                                                std::strerror(errno)));
  }
  return 0;
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

int run_main(int argc, char** argv) {
  if (argc < 2) {
    throw dinput_tool::invalid_argument("missing command; run 'dinput help' for usage");
  }
  const std::string command = argv[1];
  if (command == "--version" || command == "version") {
    return print(dinput_tool::version_text());
  }
  // launch's help options come before its command: what follows belongs to the workers.
  const bool wants_help = command == "launch"
                              ? dinput_tool::launch_asks_for_help(argc - 2, argv + 2)
                              : asks_for_help(argc, argv);
  if (command == "--help" || command == "-h" || command == "help" || wants_help) {
    // `dinput help write` and `dinput write --help` both show write's help.
    std::string help;
    const std::string topic = command == "help" && argc > 2 ? argv[2] : command;
    if (dinput_tool::command_help(topic, &help)) return print(help);
    return print(dinput_tool::usage_text());
  }
  dinput_tool::Command parsed;
  if (command == "run") {
    parsed = dinput_tool::Command::kRun;
  } else if (command == "spec") {
    parsed = dinput_tool::Command::kSpec;
  } else if (command == "bench") {
    parsed = dinput_tool::Command::kBench;
  } else if (command == "launch") {
    return dinput_tool::run_launch(argc - 2, argv + 2);
  } else if (command == "state") {
    return print(dinput_tool::command_state(argc - 2, argv + 2));
  } else if (dinput_tool::is_record_command(command)) {
    return print(dinput_tool::run_record_command(command, argc - 2, argv + 2));
  } else {
    static const std::vector<std::string> kCommands = {
        "run", "spec", "bench", "write", "convert", "inspect", "launch", "state", "help"};
    throw dinput_tool::invalid_argument("unknown command '" + command + "'" +
                                        dinput_tool::did_you_mean(command, kCommands) +
                                        "; run 'dinput help' for usage");
  }
  const dinput_tool::CliOptions options =
      dinput_tool::parse_cli_options(parsed, argc - 2, argv + 2);
  return print(dinput_tool::run_command(options));
}

}  // namespace

int main(int argc, char** argv) {
  // Writes to a closed pipe fail with EPIPE, which the tool handles, instead of killing it.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run_main(argc, argv);
  } catch (...) {
    return fail(dinput_tool::current_failure());
  }
}
