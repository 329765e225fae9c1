// Built into a shared library exactly as libdinput.so is (its objects, link options and
// libraries), so that Gloo's exceptions cross the same boundary as in the product: libgloo.so
// throws them with the system's C++ runtime, and the library catches them with the one it
// links in statically. The exported name starts with dinput_ to pass dinput.map.
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "collective/gloo.h"
#include "core/status.h"

// Worker 1 of two is destroyed while worker 0 waits for it (Gloo throws "connection closed"
// inside the wait), then a collective asks for an interface that does not exist (Gloo throws
// while creating its device). Writes what worker 0 reported; 0 when both were caught.
extern "C" __attribute__((visibility("default"))) int dinput_test_gloo_probe(char* out,
                                                                             size_t size) {
  using namespace dinput;
  std::string report;
  try {
    auto store = make_memory_store();
    GlooOptions options;
    options.address = "127.0.0.1";
    options.timeout = std::chrono::milliseconds(20000);
    std::shared_ptr<Collective> c[2];
    std::thread peer([&] { c[1] = make_gloo_collective(1, 2, store, options); });
    c[0] = make_gloo_collective(0, 2, store, options);
    peer.join();
    std::thread leave([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      c[1].reset();
    });
    try {
      c[0]->all_gather(0, 1, "a");
      report = "completed without worker 1";
    } catch (const Error& e) {
      report = str_cat(code_name(e.code()), ": ", e.what());
    }
    leave.join();
    GlooOptions bad;
    bad.iface = "no-such-interface0";
    try {
      make_gloo_collective(0, 1, store, bad);
      report += " | no error for a bad interface";
    } catch (const Error& e) {
      report += str_cat(" | ", code_name(e.code()));
    }
  } catch (const std::exception& e) {
    report = str_cat("unexpected: ", e.what());
  }
  std::strncpy(out, report.c_str(), size - 1);
  out[size - 1] = '\0';
  return 0;
}
