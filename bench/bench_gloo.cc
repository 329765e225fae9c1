// The per-step agreement of the multi-process collective over Gloo (src/collective/gloo.cc):
// an all_gather of 16 bytes, what a distributed iterator exchanges each step, against a bare
// gloo::allreduce of 8 bytes (one int64 summed) on a Gloo context connected the same way,
// in one run, at W = 2 and 4 workers on loopback. Workers are threads of this process, each
// with its own Gloo device (its own sockets and event-loop thread), as processes would have.
// Prints one JSON line per W with both per-step latencies and their ratio; goal <= 1.5.
// The two alternate within each repetition, so that a busy machine slows both alike.
// White-box: it links the static library for GlooCollective and Gloo itself for the
// baseline.
//
// Usage: bench_gloo [--quick]   (--quick: few steps, for the CTest smoke test)
// In a build without Gloo it prints a "skipped" line.
#include <cstdio>

#ifndef DINPUT_HAVE_GLOO

int main() {
  std::printf(
      "{\"bench\":\"gloo_agreement\",\"skipped\":\"the library was built without Gloo\"}\n");
  return 0;
}

#else

#include <gloo/allreduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collective/gloo.h"
#include "collective/gloo_store.h"
#include "core/status.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs body(w) on W threads; returns worker 0's seconds per step over `steps` steps, timed
// from after a first (synchronising) step so that thread start-up is not counted.
double per_step(int W, int steps, const std::function<void(int)>& body) {
  double seconds = 0;
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w)
    threads.emplace_back([&, w] {
      body(w);
      const Clock::time_point start = Clock::now();
      for (int s = 0; s < steps; ++s) body(w);
      if (w == 0) seconds = std::chrono::duration<double>(Clock::now() - start).count();
    });
  for (auto& t : threads) t.join();
  return seconds / steps;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int steps = quick ? 50 : 2000;
  const int repetitions = quick ? 3 : 9;
  try {
    for (int W : {2, 4}) {
      auto store = dinput::make_memory_store();
      dinput::GlooOptions options;
      options.timeout = std::chrono::milliseconds(60000);
      options.address = "127.0.0.1";
      options.job_id = "bench";
      std::vector<std::shared_ptr<dinput::Collective> > collectives(static_cast<size_t>(W));
      std::vector<std::shared_ptr<gloo::rendezvous::Context> > bare(static_cast<size_t>(W));
      std::vector<std::thread> threads;
      for (int w = 0; w < W; ++w)
        threads.emplace_back([&, w] {
          collectives[static_cast<size_t>(w)] = dinput::make_gloo_collective(w, W, store, options);
          gloo::transport::tcp::attr attr;
          attr.hostname = "127.0.0.1";
          auto device = gloo::transport::tcp::CreateDevice(attr);
          auto context = std::make_shared<gloo::rendezvous::Context>(w, W);
          dinput::GlooStoreAdapter adapter(dinput::make_prefix_store(store, "bare"),
                                           std::chrono::milliseconds(60000));
          context->connectFullMesh(adapter, device);
          bare[static_cast<size_t>(w)] = context;
        });
      for (auto& t : threads) t.join();

      auto agreement = [&](int w) {
        collectives[static_cast<size_t>(w)]->all_gather(w, 1, std::string(16, char('a' + w)));
      };
      auto allreduce = [&](int w) {
        int64_t value = w;
        gloo::AllreduceOptions opts(bare[static_cast<size_t>(w)]);
        opts.setOutput(&value, 1);
        opts.setReduceFunction([](void* c, const void* a, const void* b, size_t n) {
          auto* out = static_cast<int64_t*>(c);
          const auto* x = static_cast<const int64_t*>(a);
          const auto* y = static_cast<const int64_t*>(b);
          for (size_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
        });
        gloo::allreduce(opts);
        if (value != int64_t{W} * (W - 1) / 2) throw std::runtime_error("allreduce: wrong sum");
      };
      std::vector<double> ours, theirs;
      for (int r = 0; r < repetitions; ++r) {
        ours.push_back(per_step(W, steps, agreement));
        theirs.push_back(per_step(W, steps, allreduce));
      }
      const double ours_us = median(ours) * 1e6, theirs_us = median(theirs) * 1e6;
      const double ratio = ours_us / theirs_us;
      std::printf(
          "{\"bench\":\"gloo_agreement\",\"workers\":%d,\"steps\":%d,\"agreement_us\":%.2f,"
          "\"allreduce_us\":%.2f,\"ratio\":%.3f,\"goal\":\"all_gather of 16 bytes <= 1.5x a "
          "bare allreduce of 8 bytes\",\"pass\":%s}\n",
          W, steps, ours_us, theirs_us, ratio, ratio <= 1.5 ? "true" : "false");
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gloo: %s\n", e.what());
    return 1;
  }
  return 0;
}

#endif  // DINPUT_HAVE_GLOO
