// The process tests' main: `process_test --worker NAME ARGS...` runs the worker NAME (see
// process_harness.h) instead of the tests.
#include <signal.h>

#include <gtest/gtest.h>

#include <iostream>

#include "process_harness.h"

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--worker") {
    // Writing to a peer that died raises SIGPIPE; the collective reports the lost peer.
    signal(SIGPIPE, SIG_IGN);
    const auto& registry = dinput::testing::worker_registry();
    const auto found = registry.find(argv[2]);
    if (found == registry.end()) {
      std::cerr << "no worker named " << argv[2] << "\n";
      return 2;
    }
    return found->second(std::vector<std::string>(argv + 3, argv + argc));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
