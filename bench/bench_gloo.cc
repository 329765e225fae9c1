// Multi-process workers over the Gloo collective (src/collective/gloo.cc), three groups, each
// printing one JSON line per worker count:
//  - gloo_rendezvous: W processes (fork, tcp:// store served by worker 0 on 127.0.0.1) from
//    before the first fork, and from each worker's first call, until every worker's
//    collective is connected; W = 2, 8, 32, 64.
//  - gloo_steps: distributed steps per second of range(2^20).batch(256) (DATA sharding, one
//    CPU replica per worker) with W processes joined by Gloo, against the same pipeline on W
//    threads of one process joined by the in-process collective, alternating in one run;
//    W = 2, 4, 8, 16.
//  - gloo_agreement: the per-step agreement (an all_gather of the 20 bytes a distributed
//    iterator exchanges each step) against a bare gloo::allreduce of 8 bytes (one int64
//    summed) on a Gloo context connected the same way, alternating within each repetition so
//    that a busy machine slows both alike; W = 2 and 4; goal <= 1.5. Workers are threads of
//    this process, each with its own Gloo device (its own sockets and event-loop thread), as
//    processes would have.
// The process groups run first, from a parent that has started no thread (a fork copies
// only the calling thread). White-box: it links the static library and Gloo itself.
//
// Usage: bench_gloo [--quick] [--only rendezvous|steps|agreement] [--workers N[,N...]]
//                   [--reps R]
//   --quick: small sizes and W = 2 and 4, for the CTest smoke test (figures meaningless).
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
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collective/gloo.h"
#include "collective/gloo_store.h"
#include "collective/in_process.h"
#include "collective/store_url.h"
#include "core/status.h"
#include "data/datasets.h"
#include "distribute/dist_dataset.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// CLOCK_MONOTONIC in seconds: one clock for every process of the machine, so that times
// taken in the workers compare with the parent's.
double now_s() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A TCP port free at the time of asking, for worker 0's rendezvous store.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free port");
  close(fd);
  return ntohs(a.sin_port);
}

dinput::GlooOptions loopback(const std::string& job) {
  dinput::GlooOptions options;
  options.timeout = std::chrono::milliseconds(120000);
  options.address = "127.0.0.1";
  options.job_id = job;
  return options;
}

// Runs child(w, fd) in W forked processes, each writing one line to its fd; returns the
// lines in worker order. Throws if a child fails or prints nothing within the watchdog.
std::vector<std::string> run_processes(int W, const std::function<std::string(int)>& child) {
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (int w = 0; w < W; ++w) {
    int p[2];
    if (pipe(p) != 0) throw std::runtime_error("pipe failed");
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      close(p[0]);
      std::string line;
      int rc = 0;
      try {
        line = child(w);
      } catch (const std::exception& e) {
        line = std::string("error: ") + e.what();
        rc = 1;
      }
      line += "\n";
      (void)!write(p[1], line.data(), line.size());
      close(p[1]);
      _exit(rc);
    }
    close(p[1]);
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  std::vector<std::string> lines(static_cast<size_t>(W));
  std::string failure;
  for (int w = 0; w < W; ++w) {
    std::string& line = lines[static_cast<size_t>(w)];
    char buffer[256];
    ssize_t got;
    while ((got = read(fds[static_cast<size_t>(w)], buffer, sizeof buffer)) > 0)
      line.append(buffer, static_cast<size_t>(got));
    close(fds[static_cast<size_t>(w)]);
    int status = 0;
    waitpid(pids[static_cast<size_t>(w)], &status, 0);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (failure.empty() && (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || line.empty()))
      failure = "worker " + std::to_string(w) + " of " + std::to_string(W) + " failed: " + line;
  }
  if (!failure.empty()) throw std::runtime_error(failure);
  return lines;
}

// ---- rendezvous ----

void bench_rendezvous(const std::vector<int>& workers, int reps) {
  for (int W : workers) {
    std::vector<double> from_fork, from_call;
    for (int r = 0; r < reps; ++r) {
      const std::string url = "tcp://127.0.0.1:" + std::to_string(free_port());
      const double t0 = now_s();
      auto lines = run_processes(W, [&](int w) {
        const double called = now_s();
        dinput::StoreOptions store_options;
        store_options.job_id = "rdzv";
        auto store = dinput::make_store(url, w, W, store_options);
        auto collective = dinput::make_gloo_collective(w, W, store, loopback("rdzv"));
        const double ready = now_s();
        // Every worker stays until all are connected: worker 0 serves the store the others
        // may still be reading.
        collective->all_gather(w, 1, "");
        std::ostringstream out;
        out.precision(17);
        out << called << " " << ready;
        return out.str();
      });
      double first_call = 1e300, last_ready = 0;
      for (const auto& line : lines) {
        std::istringstream in(line);
        double called, ready;
        in >> called >> ready;
        first_call = std::min(first_call, called);
        last_ready = std::max(last_ready, ready);
      }
      from_fork.push_back(last_ready - t0);
      from_call.push_back(last_ready - first_call);
    }
    std::printf(
        "{\"bench\":\"gloo_rendezvous\",\"workers\":%d,\"reps\":%d,\"from_first_fork_ms\":%.1f,"
        "\"from_first_call_ms\":%.1f,\"from_first_fork_ms_min\":%.1f,\"from_first_fork_ms_max\":%"
        ".1f}\n",
        W, reps, median(from_fork) * 1e3, median(from_call) * 1e3,
        *std::min_element(from_fork.begin(), from_fork.end()) * 1e3,
        *std::max_element(from_fork.begin(), from_fork.end()) * 1e3);
    std::fflush(stdout);
  }
}

// ---- steps per second ----

// One worker's epoch of range(n).batch(256) on `collective`: "seconds sum steps", timed
// from after a first exchange that every worker makes (so that the others' start-up is not
// counted) to the end of the epoch.
std::string one_epoch(const std::shared_ptr<dinput::Collective>& collective, int w, int64_t n) {
  using namespace dinput;
  auto strategy = make_strategy({"CPU:0"}, collective, w);
  auto dist = distribute_dataset(strategy, make_batch(make_range(0, n, 1), 256, false), {});
  collective->barrier(w, 1u << 20);
  const double start = now_s();
  DistributedIterator it(dist);
  std::vector<Element> step;
  int64_t sum = 0, steps = 0;
  while (it.next(step)) {
    const Tensor& t = step.at(0).at(0);
    const int64_t* v = t.data_as<int64_t>();
    for (int64_t i = 0; i < t.num_elements(); ++i) sum += v[i];
    ++steps;
  }
  const double seconds = now_s() - start;
  std::ostringstream out;
  out.precision(17);
  out << seconds << " " << sum << " " << steps;
  return out.str();
}

struct EpochFigures {
  double seconds = 0;  // the slowest worker's
  int64_t sum = 0, steps = 0;
};

EpochFigures parse_epochs(const std::vector<std::string>& lines) {
  EpochFigures f;
  for (const auto& line : lines) {
    std::istringstream in(line);
    double seconds;
    int64_t sum, steps;
    in >> seconds >> sum >> steps;
    f.seconds = std::max(f.seconds, seconds);
    f.sum += sum;
    f.steps = std::max(f.steps, steps);
  }
  return f;
}

void bench_steps(const std::vector<int>& workers, int reps, int64_t n) {
  const int64_t expected = n * (n - 1) / 2;
  for (int W : workers) {
    std::vector<double> procs, threads;
    int64_t steps = 0;
    for (int r = 0; r < reps; ++r) {
      const std::string url = "tcp://127.0.0.1:" + std::to_string(free_port());
      EpochFigures p = parse_epochs(run_processes(W, [&](int w) {
        dinput::StoreOptions store_options;
        store_options.job_id = "steps";
        auto store = dinput::make_store(url, w, W, store_options);
        return one_epoch(dinput::make_gloo_collective(w, W, store, loopback("steps")), w, n);
      }));
      // In-process: W threads of one (forked, so this process stays single-threaded) child.
      EpochFigures t = parse_epochs(run_processes(1, [&](int) {
        auto collective = dinput::make_in_process_collective(W, 120000);
        std::vector<std::string> lines(static_cast<size_t>(W));
        std::vector<std::thread> pool;
        for (int w = 0; w < W; ++w)
          pool.emplace_back(
              [&, w] { lines[static_cast<size_t>(w)] = one_epoch(collective, w, n); });
        for (auto& th : pool) th.join();
        EpochFigures f = parse_epochs(lines);
        std::ostringstream out;
        out.precision(17);
        out << f.seconds << " " << f.sum << " " << f.steps;
        return out.str();
      }));
      if (p.sum != expected || t.sum != expected)
        throw std::runtime_error("steps: the workers did not deliver every element once");
      procs.push_back(p.seconds);
      threads.push_back(t.seconds);
      steps = p.steps;
    }
    const double p = median(procs), t = median(threads);
    std::printf(
        "{\"bench\":\"gloo_steps\",\"workers\":%d,\"elements\":%lld,\"steps_per_worker\":%lld,"
        "\"processes_steps_per_s\":%.0f,\"in_process_steps_per_s\":%.0f,\"processes_us_per_"
        "step\":%.1f,\"in_process_us_per_step\":%.1f,\"ratio\":%.3f,\"what\":\"per-step time, "
        "processes over Gloo / threads over the in-process collective\"}\n",
        W, static_cast<long long>(n), static_cast<long long>(steps), steps / p, steps / t,
        p / steps * 1e6, t / steps * 1e6, p / t);
    std::fflush(stdout);
  }
}

// ---- agreement ----

// The distributed iterator's step report: count, status, short replica, infinite flag.
const std::string kStepReport(20, 'a');

// One bare Gloo all-reduce of one int64 (the baseline), checked.
void bare_allreduce(const std::shared_ptr<gloo::Context>& context) {
  const int W = context->size;
  int64_t value = context->rank;
  gloo::AllreduceOptions opts(context);
  opts.setOutput(&value, 1);
  opts.setReduceFunction([](void* c, const void* a, const void* b, size_t n) {
    auto* out = static_cast<int64_t*>(c);
    const auto* x = static_cast<const int64_t*>(a);
    const auto* y = static_cast<const int64_t*>(b);
    for (size_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
  });
  gloo::allreduce(opts);
  if (value != int64_t{W} * (W - 1) / 2) throw std::runtime_error("allreduce: wrong sum");
}

// The same comparison with each worker a process: the agreement and the all-reduce alternate
// in each process, each timed over `steps` steps after one synchronising step; worker 0's
// medians are reported.
void bench_agreement_processes(const std::vector<int>& workers, int steps, int repetitions) {
  for (int W : workers) {
    const std::string url = "tcp://127.0.0.1:" + std::to_string(free_port());
    auto lines = run_processes(W, [&](int w) {
      dinput::StoreOptions store_options;
      store_options.job_id = "agree";
      auto store = dinput::make_store(url, w, W, store_options);
      auto collective = dinput::make_gloo_collective(w, W, store, loopback("agree"));
      gloo::transport::tcp::attr attr;
      attr.hostname = "127.0.0.1";
      auto device = gloo::transport::tcp::CreateDevice(attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(w, W);
      dinput::GlooStoreAdapter adapter(dinput::make_prefix_store(store, "bare"),
                                       std::chrono::milliseconds(60000));
      context->connectFullMesh(adapter, device);
      auto time = [&](const std::function<void()>& body) {
        body();
        const double start = now_s();
        for (int s = 0; s < steps; ++s) body();
        return (now_s() - start) / steps;
      };
      std::vector<double> ours, theirs;
      for (int r = 0; r < repetitions; ++r) {
        ours.push_back(time([&] { collective->all_gather(w, 1, kStepReport); }));
        theirs.push_back(time([&] { bare_allreduce(context); }));
      }
      collective->all_gather(w, 2, "");  // worker 0's store outlives every worker's use
      std::ostringstream out;
      out.precision(17);
      out << median(ours) << " " << median(theirs);
      return out.str();
    });
    std::istringstream in(lines[0]);
    double ours, theirs;
    in >> ours >> theirs;
    const double ratio = ours / theirs;
    std::printf(
        "{\"bench\":\"gloo_agreement\",\"mode\":\"processes\",\"workers\":%d,\"steps\":%d,"
        "\"agreement_us\":%.2f,\"allreduce_us\":%.2f,\"ratio\":%.3f,\"goal\":\"all_gather of "
        "20 bytes <= 1.5x a bare allreduce of 8 bytes\",\"pass\":%s}\n",
        W, steps, ours * 1e6, theirs * 1e6, ratio, ratio <= 1.5 ? "true" : "false");
    std::fflush(stdout);
  }
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

void bench_agreement(const std::vector<int>& workers, int steps, int repetitions) {
  for (int W : workers) {
    auto store = dinput::make_memory_store();
    std::vector<std::shared_ptr<dinput::Collective> > collectives(static_cast<size_t>(W));
    std::vector<std::shared_ptr<gloo::rendezvous::Context> > bare(static_cast<size_t>(W));
    std::vector<std::thread> threads;
    for (int w = 0; w < W; ++w)
      threads.emplace_back([&, w] {
        collectives[static_cast<size_t>(w)] =
            dinput::make_gloo_collective(w, W, store, loopback("bench"));
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
      collectives[static_cast<size_t>(w)]->all_gather(w, 1, kStepReport);
    };
    auto allreduce = [&](int w) { bare_allreduce(bare[static_cast<size_t>(w)]); };
    std::vector<double> ours, theirs;
    for (int r = 0; r < repetitions; ++r) {
      ours.push_back(per_step(W, steps, agreement));
      theirs.push_back(per_step(W, steps, allreduce));
    }
    const double ours_us = median(ours) * 1e6, theirs_us = median(theirs) * 1e6;
    const double ratio = ours_us / theirs_us;
    std::printf(
        "{\"bench\":\"gloo_agreement\",\"mode\":\"threads\",\"workers\":%d,\"steps\":%d,"
        "\"agreement_us\":%.2f,"
        "\"allreduce_us\":%.2f,\"ratio\":%.3f,\"goal\":\"all_gather of 20 bytes <= 1.5x a "
        "bare allreduce of 8 bytes\",\"pass\":%s}\n",
        W, steps, ours_us, theirs_us, ratio, ratio <= 1.5 ? "true" : "false");
    std::fflush(stdout);
  }
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  std::vector<int> workers;
  int reps = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--workers" && i + 1 < argc) {
      workers = parse_list(argv[++i]);
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: bench_gloo [--quick] [--only rendezvous|steps|agreement] "
                   "[--workers N[,N...]] [--reps R]\n");
      return 2;
    }
  }
  auto pick = [&](std::vector<int> full) {
    return !workers.empty() ? workers : quick ? std::vector<int>{2, 4} : full;
  };
  // A worker that dies closes its sockets; writing to them must not kill the others.
  signal(SIGPIPE, SIG_IGN);
  try {
    if (only.empty() || only == "rendezvous")
      bench_rendezvous(pick({2, 8, 32, 64}), reps > 0 ? reps : quick ? 1 : 3);
    if (only.empty() || only == "steps")
      bench_steps(pick({2, 4, 8, 16}),
                  reps > 0 ? reps
                  : quick  ? 1
                           : 3,
                  quick ? int64_t{1} << 14 : int64_t{1} << 20);
    if (only.empty() || only == "agreement")
      bench_agreement_processes(pick({2, 4, 8}), quick ? 50 : 2000,
                                reps > 0 ? reps
                                : quick  ? 3
                                         : 9);
    if (only.empty() || only == "agreement")
      bench_agreement(pick({2, 4}), quick ? 50 : 2000, reps > 0 ? reps : quick ? 3 : 9);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gloo: %s\n", e.what());
    return 1;
  }
  return 0;
}

#endif  // DINPUT_HAVE_GLOO
