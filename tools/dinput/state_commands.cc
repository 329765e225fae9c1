#include "state_commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_options.h"
#include "status.h"

namespace dinput_tool {

namespace {

// The description the library gives of a state (dinput_state_describe), as text.
std::string describe(const std::string& state) {
  dinput_state_t* json = nullptr;
  check(dinput_state_describe(&json, state.data(), state.size()), "dinput_state_describe");
  const StatePtr owned(json);
  return std::string(static_cast<const char*>(dinput_state_data(json)), dinput_state_size(json));
}

}  // namespace

std::string read_state_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    throw Failure(DINPUT_NOT_FOUND,
                  "cannot open the state file '" + path + "': " + std::strerror(errno));
  }
  std::string bytes;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) bytes.append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Failure(DINPUT_UNAVAILABLE, "cannot read the state file '" + path + "'");
  return bytes;
}

void write_state_file(const std::string& path, const dinput_state_t* state) {
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(temporary.c_str(), "wb");
  if (!f) {
    throw Failure(DINPUT_UNAVAILABLE,
                  "cannot create '" + temporary + "' for the state: " + std::strerror(errno));
  }
  const size_t size = dinput_state_size(state);
  const bool written = std::fwrite(dinput_state_data(state), 1, size, f) == size;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    throw Failure(DINPUT_UNAVAILABLE, "cannot write the state file '" + path + "': " + why);
  }
}

int64_t saved_step(const std::string& state, const std::string& path) {
  const nlohmann::json described = nlohmann::json::parse(describe(state));
  if (described.value("kind", "") != "distributed_iterator") {
    throw invalid_argument("the state in '" + path +
                           "' is a dataset iterator's, not one that run saved (--save-state)");
  }
  return described.at("step").get<int64_t>();
}

DistIteratorPtr restore_iterator(const dinput_dist_dataset_t* dataset, const std::string& state) {
  dinput_dist_iterator_t* made = nullptr;
  check(dinput_dist_dataset_iterator_from_state(&made, dataset, state.data(), state.size()),
        "dinput_dist_dataset_iterator_from_state");
  return DistIteratorPtr(made);
}

StatePtr save_iterator(dinput_dist_iterator_t* iterator) {
  dinput_state_t* state = nullptr;
  check(dinput_dist_iterator_save(&state, iterator), "dinput_dist_iterator_save");
  return StatePtr(state);
}

std::string command_state(int argc, char** argv) {
  const ParsedArgs args = parse_args("state", argc, argv, {});
  if (args.positionals.size() != 1) {
    throw invalid_argument("state expects one FILE (a state saved by run --save-state), got " +
                           std::to_string(args.positionals.size()) + " operands");
  }
  return describe(read_state_file(args.positionals[0])) + "\n";
}

}  // namespace dinput_tool
