// The Gloo collective (src/collective/gloo.cc): workers as threads of this process first,
// each with its own GlooCollective over one in-memory store and loopback TCP, then as real
// processes (fork) over a store in files, where one of them is killed.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collective/gloo.h"
#include "collective/store_url.h"
#include "harness.h"
#include "io/file_sources.h"

namespace dinput::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

GlooOptions loopback(int64_t timeout_ms, std::string job = "test") {
  GlooOptions o;
  o.timeout = milliseconds(timeout_ms);
  o.address = "127.0.0.1";
  o.job_id = std::move(job);
  return o;
}

// W collectives, one per worker, built concurrently (each constructor waits for the others)
// with the given options.
std::vector<std::shared_ptr<Collective>> connect_with(int W, std::shared_ptr<Store> store,
                                                      const GlooOptions& options) {
  std::vector<std::shared_ptr<Collective>> out(static_cast<size_t>(W));
  std::vector<std::string> errors(static_cast<size_t>(W));
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w)
    threads.emplace_back([&, w] {
      try {
        out[static_cast<size_t>(w)] = make_gloo_collective(w, W, store, options);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(w)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int w = 0; w < W; ++w) EXPECT_EQ(errors[static_cast<size_t>(w)], "") << "worker " << w;
  return out;
}

// The same on loopback with a timeout (and a fresh memory store unless one is given).
std::vector<std::shared_ptr<Collective>> connect(int W, int64_t timeout_ms,
                                                 std::shared_ptr<Store> store = nullptr) {
  if (!store) store = make_memory_store();
  return connect_with(W, std::move(store), loopback(timeout_ms));
}

template <typename F>
Code code_of(F&& f, std::string* message = nullptr) {
  try {
    f();
    return Code::kOk;
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
}

std::string payload_of(int w, int step) {
  // Sizes from empty to past one message (the second exchange), differing between workers.
  const size_t size = static_cast<size_t>((w * 37 + step * 101) % 1300);
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + (w + step + i) % 26);
  return s;
}

TEST(GlooCollective, AllGatherGivesEveryPayloadInWorkerOrder) {
  // Powers of two and not: the rounds of Bruck's all-gather differ.
  for (int W : {2, 3, 4, 5, 8}) {
    SCOPED_TRACE(W);
    auto c = connect(W, 20000);
    ASSERT_EQ(c.size(), static_cast<size_t>(W));
    std::vector<std::string> errors(static_cast<size_t>(W));
    std::vector<std::thread> threads;
    for (int w = 0; w < W; ++w)
      threads.emplace_back([&, w] {
        for (int step = 0; step < 30; ++step) {
          auto got = c[static_cast<size_t>(w)]->all_gather(w, 1, payload_of(w, step));
          std::vector<std::string> want;
          for (int v = 0; v < W; ++v) want.push_back(payload_of(v, step));
          if (got != want) errors[static_cast<size_t>(w)] = "step " + std::to_string(step);
        }
        // The Collective helpers built on all_gather.
        auto sums = c[static_cast<size_t>(w)]->all_reduce_sum(w, 2, std::vector<int64_t>{w, 1});
        if (sums != std::vector<int64_t>{W * (W - 1) / 2, W})
          errors[static_cast<size_t>(w)] = "sum";
        c[static_cast<size_t>(w)]->barrier(w, 2);
      });
    for (auto& t : threads) t.join();
    for (int w = 0; w < W; ++w) EXPECT_EQ(errors[static_cast<size_t>(w)], "") << "worker " << w;
    EXPECT_EQ(c[0]->num_workers(), W);
    EXPECT_EQ(code_of([&] { c[0]->all_gather(1, 1, "x"); }), Code::kInvalidArgument);
  }
}

// Each worker runs one thread per channel; the threads of different workers reach the
// channels in whatever order the scheduler gives, so no channel may wait for another.
TEST(GlooCollective, ChannelsInterleavedFromSeveralThreads) {
  constexpr int W = 3, kChannels = 6, kSteps = 40;
  auto c = connect(W, 20000);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w)
    for (int ch = 0; ch < kChannels; ++ch)
      threads.emplace_back([&, w, ch] {
        // Agreement channels (top bit set) as well as iterators' and the strategy's.
        const uint64_t channel = ch == kChannels - 1 ? (uint64_t{1} << 63) | 4 : uint64_t(ch);
        for (int step = 0; step < kSteps; ++step) {
          if ((w + ch + step) % 7 == 0) std::this_thread::sleep_for(milliseconds(1));
          auto got = c[static_cast<size_t>(w)]->all_gather(
              w, channel,
              std::to_string(ch) + ":" + std::to_string(step) + ":" + std::to_string(w));
          for (int v = 0; v < W; ++v)
            if (got.at(static_cast<size_t>(v)) !=
                std::to_string(ch) + ":" + std::to_string(step) + ":" + std::to_string(v))
              ++bad;
        }
      });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// W workers over Gloo (threads, each its own collective), two epochs each.
std::vector<WorkerRun> run_gloo_workers(int W, int R, const MakeDist& make) {
  return run_workers_on(connect(W, 20000), R, make, /*epochs=*/2);
}

TEST(GlooCollective, DistributedIteratorGivesTheInProcessOutput) {
  struct Case {
    int W, R;
    MakeDist make;
  };
  const std::vector<Case> cases = {
      {2, 2,
       [](std::shared_ptr<const Strategy> s) {
         return distribute_dataset(s, make_batch(make_range(0, 20, 1), 8, false), {});
       }},
      {3, 1,
       [](std::shared_ptr<const Strategy> s) {
         return distribute_dataset(
             s, make_batch(make_shuffle(make_range(0, 50, 1), 50, 5, true), 6, false), {});
       }},
      {4, 2,
       [](std::shared_ptr<const Strategy> s) {
         return distribute_dataset(
             s, make_batch(with_policy(make_range(0, 30, 1), AutoShardPolicy::kOff), 8, false), {});
       }},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.W);
    auto in_process = run_workers(k.W, k.R, k.make);
    auto again = run_workers(k.W, k.R, k.make);
    auto gloo = run_gloo_workers(k.W, k.R, k.make);
    for (int w = 0; w < k.W; ++w) {
      ASSERT_EQ(gloo[static_cast<size_t>(w)].error, "") << "worker " << w;
      ASSERT_EQ(in_process[static_cast<size_t>(w)].error, "") << "worker " << w;
      // The Gloo run made two epochs (two distributed datasets on one strategy); each
      // in-process run one.
      EXPECT_EQ(notation(gloo[static_cast<size_t>(w)]),
                notation(in_process[static_cast<size_t>(w)]) + " ; " +
                    notation(again[static_cast<size_t>(w)]))
          << "worker " << w;
    }
  }
}

TEST(GlooCollective, TimeoutNamesTheMissingWorkerAndFailsItToo) {
  auto c = connect(3, 300);
  std::string m0, m1, m2;
  Code c0 = Code::kOk, c1 = Code::kOk;
  const auto start = Clock::now();
  std::thread t1([&] { c1 = code_of([&] { c[1]->all_gather(1, 3, "b"); }, &m1); });
  c0 = code_of([&] { c[0]->all_gather(0, 3, "a"); }, &m0);
  t1.join();
  EXPECT_LT(Clock::now() - start, milliseconds(5000));
  EXPECT_EQ(c0, Code::kDeadlineExceeded);
  EXPECT_EQ(c1, Code::kDeadlineExceeded);
  EXPECT_NE(m0.find("for worker 2 at step 0 of channel 3"), std::string::npos) << m0;
  EXPECT_NE(m1.find("worker 2"), std::string::npos) << m1;
  // The late worker does not complete the step alone: the others gave up on the channel.
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(code_of([&] { c[2]->all_gather(2, 3, "c"); }, &m2), Code::kDeadlineExceeded);
  EXPECT_NE(m2.find("worker 2"), std::string::npos) << m2;
  // Other channels go on.
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int w = 0; w < 3; ++w)
    ts.emplace_back([&, w] {
      if (c[static_cast<size_t>(w)]->all_gather(w, 4, "x").size() == 3) ++ok;
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 3);
}

// A worker waits for one peer a round, and that peer may be waiting for the missing worker:
// the message still names the workers that had not entered the step, and only them.
TEST(GlooCollective, TimeoutNamesOnlyTheWorkersThatHadNotArrived) {
  for (int W : {4, 6}) {
    SCOPED_TRACE(W);
    auto c = connect(W, 300);
    const int arriving = W == 4 ? 3 : 4;  // W = 6: workers 4 and 5 stay away
    std::vector<std::string> m(static_cast<size_t>(arriving));
    std::vector<Code> codes(static_cast<size_t>(arriving));
    std::vector<std::thread> ts;
    for (int w = 0; w < arriving; ++w)
      ts.emplace_back([&, w] {
        codes[static_cast<size_t>(w)] = code_of(
            [&] { c[static_cast<size_t>(w)]->all_gather(w, 3, "a"); }, &m[static_cast<size_t>(w)]);
      });
    for (auto& t : ts) t.join();
    for (int w = 0; w < arriving; ++w) {
      EXPECT_EQ(codes[static_cast<size_t>(w)], Code::kDeadlineExceeded);
      EXPECT_NE(m[static_cast<size_t>(w)].find(W == 4 ? "for worker 3 at step 0 of channel 3"
                                                      : "for workers 4, 5 at step 0 of channel 3"),
                std::string::npos)
          << m[static_cast<size_t>(w)];
    }
  }
}

TEST(GlooCollective, AbortFromOneWorkerReleasesTheOthers) {
  auto c = connect(3, 60000);
  std::string m1, m2;
  Code c1 = Code::kOk, c2 = Code::kOk;
  const auto start = Clock::now();
  std::thread t1([&] { c1 = code_of([&] { c[1]->all_gather(1, 1, "b"); }, &m1); });
  std::thread t2([&] { c2 = code_of([&] { c[2]->all_gather(2, 7, "c"); }, &m2); });
  std::this_thread::sleep_for(milliseconds(100));
  c[0]->abort(Error(Code::kInvalidArgument, "worker 0's pipeline failed: bad record"));
  t1.join();
  t2.join();
  EXPECT_LT(Clock::now() - start, milliseconds(5000));
  EXPECT_EQ(c1, Code::kInvalidArgument);
  EXPECT_EQ(c2, Code::kInvalidArgument);
  EXPECT_EQ(m1, "worker 0's pipeline failed: bad record");
  EXPECT_EQ(m2, m1);
  // Later operations fail too, on every worker.
  for (int w = 0; w < 3; ++w)
    EXPECT_EQ(code_of([&] { c[static_cast<size_t>(w)]->all_gather(w, 9, ""); }),
              Code::kInvalidArgument);
}

TEST(GlooCollective, AbortChannelReleasesThatChannelOnly) {
  auto c = connect(2, 60000);
  std::string m1;
  Code c1 = Code::kOk;
  std::thread t1([&] { c1 = code_of([&] { c[1]->all_gather(1, 5, "b"); }, &m1); });
  std::this_thread::sleep_for(milliseconds(100));
  c[0]->abort_channel(5, Error(Code::kCancelled, "iterator cancelled"));
  t1.join();
  EXPECT_EQ(c1, Code::kCancelled);
  EXPECT_EQ(m1, "iterator cancelled");
  EXPECT_EQ(code_of([&] { c[0]->all_gather(0, 5, ""); }), Code::kCancelled);
  std::thread t([&] { c[1]->all_gather(1, 6, "y"); });
  EXPECT_EQ(c[0]->all_gather(0, 6, "x"), (std::vector<std::string>{"x", "y"}));
  t.join();
}

// A worker that leaves a channel after its steps (its iterator freed once it has taken K
// steps) has sent its part of those steps: the others, slower, still complete them, and
// only the steps it never takes fail. Three workers, so that Bruck's rounds forward blocks.
TEST(GlooCollective, AbortChannelAfterAStepLetsTheOthersCompleteIt) {
  auto c = connect(3, 60000);
  std::vector<std::thread> slow;
  std::vector<std::vector<std::string>> got(3);
  std::vector<Code> next(3, Code::kOk);
  for (int w = 1; w < 3; ++w)
    slow.emplace_back([&, w] {
      got[static_cast<size_t>(w)] = c[static_cast<size_t>(w)]->all_gather(w, 7, payload_of(w, 0));
      // Worker 0 is gone from the channel by now; the next step cannot complete.
      std::this_thread::sleep_for(milliseconds(200));
      next[static_cast<size_t>(w)] =
          code_of([&] { c[static_cast<size_t>(w)]->all_gather(w, 7, "later"); });
    });
  // Worker 0 completes step 0 (it needs the others' parts), then leaves at once, before the
  // slower workers have read theirs.
  got[0] = c[0]->all_gather(0, 7, payload_of(0, 0));
  c[0]->abort_channel(7, Error(Code::kCancelled, "worker 0 freed its iterator"));
  for (auto& t : slow) t.join();
  const std::vector<std::string> all = {payload_of(0, 0), payload_of(1, 0), payload_of(2, 0)};
  for (int w = 0; w < 3; ++w) EXPECT_EQ(got[static_cast<size_t>(w)], all) << "worker " << w;
  EXPECT_EQ(next[1], Code::kCancelled);
  EXPECT_EQ(next[2], Code::kCancelled);
}

// A job id reused by a job of another size finds the first job's addresses in the store (a
// file:// directory or Redis database keeps them); Gloo's own check of their size is then a
// clear error of the collective, not an INTERNAL one (nor, for a C++ caller, an exception
// other than dinput::Error).
TEST(GlooCollective, JobIdReusedByAJobOfAnotherSizeIsAClearError) {
  auto store = make_memory_store();
  connect(3, 60000, store);  // leaves the addresses of 3 workers under job "test"
  std::string message;
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 2, store, loopback(2000)); }, &message),
            Code::kFailedPrecondition)
      << message;
  EXPECT_NE(message.find("same job id"), std::string::npos) << message;
}

// A store that still holds a finished job's addresses under the same job id (a file://
// directory or Redis database is not emptied): a new worker reads its peer's old address and
// cannot connect there. It fails within about the timeout, not several times it. The old
// worker's port is held here (bound, not listening) so that connecting is refused and no
// other test's worker can take that port meanwhile.
TEST(GlooCollective, StaleAddressFailsWithinTheTimeout) {
  auto store = make_memory_store();
  int held = -1;
  for (int attempt = 0; attempt < 5 && held < 0; ++attempt) {
    auto old_job = connect(2, 60000, store);
    const std::string blob = store->get({"test/gloo/0"}, milliseconds(1000)).at(0);
    old_job.clear();  // its ports close
    // The old worker 0's port, from its address (sockaddr_storage at the blob's start).
    sockaddr_storage ss{};
    std::memcpy(&ss, blob.data(), std::min(blob.size(), sizeof ss));
    if (ss.ss_family != AF_INET) GTEST_SKIP() << "the address is not IPv4";
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), sizeof(sockaddr_in)) == 0)
      held = fd;
    else
      close(fd);  // taken again already: try with another old job
  }
  ASSERT_GE(held, 0) << "could not hold an old worker's port";
  const auto start = Clock::now();
  std::string message;
  const Code code = code_of([&] { make_gloo_collective(1, 2, store, loopback(5000)); }, &message);
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  close(held);
  EXPECT_NE(code, Code::kOk);
  EXPECT_LT(took, 7500) << message;  // 25 s before: five times the timeout
}

TEST(GlooCollective, RendezvousTimeoutNamesTheMissingWorkers) {
  auto store = make_memory_store();
  std::vector<std::string> messages(2);
  std::vector<Code> codes(2);
  std::vector<std::thread> ts;
  for (int w = 0; w < 2; ++w)
    ts.emplace_back([&, w] {
      codes[static_cast<size_t>(w)] =
          code_of([&] { make_gloo_collective(w, 4, store, loopback(300)); },
                  &messages[static_cast<size_t>(w)]);
    });
  for (auto& t : ts) t.join();
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(codes[static_cast<size_t>(w)], Code::kDeadlineExceeded);
    EXPECT_NE(messages[static_cast<size_t>(w)].find("at the rendezvous for workers 2, 3 "),
              std::string::npos)
        << messages[static_cast<size_t>(w)];
  }
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 2, store, loopback(0)); }),
            Code::kInvalidArgument);
  EXPECT_EQ(code_of([&] { make_gloo_collective(2, 2, store, loopback(100)); }),
            Code::kInvalidArgument);
  GlooOptions bad = loopback(100);
  bad.address.clear();
  bad.iface = "no-such-interface0";
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 1, store, bad); }), Code::kInvalidArgument);
  // An address of another host (Gloo itself crashed on one), or one that does not resolve.
  for (const char* address : {"192.0.2.1", "no-such-host.invalid"}) {
    GlooOptions elsewhere = loopback(100);
    elsewhere.address = address;
    std::string m;
    EXPECT_EQ(code_of([&] { make_gloo_collective(0, 2, store, elsewhere); }, &m),
              Code::kInvalidArgument);
    EXPECT_NE(m.find(std::string("cannot listen on address '") + address + "'"), std::string::npos)
        << m;
  }
}

// Timeouts past what the clock can hold wait without a deadline (as in process).
TEST(GlooCollective, HugeTimeoutsWait) {
  GlooOptions o = loopback(0, "huge");
  o.timeout = milliseconds::max();
  auto c = connect_with(2, make_memory_store(), o);
  ASSERT_TRUE(c[0] && c[1]);
  std::thread late([&] {
    std::this_thread::sleep_for(milliseconds(100));
    c[1]->all_gather(1, 1, "b");
  });
  EXPECT_EQ(c[0]->all_gather(0, 1, "a"), (std::vector<std::string>{"a", "b"}));
  late.join();
}

// DINPUT_GLOO_IFACE names the interface when the options name neither it nor an address.
TEST(GlooCollective, InterfaceFromTheEnvironment) {
  auto store = make_memory_store();
  GlooOptions o = loopback(5000, "env");
  o.address.clear();
  setenv("DINPUT_GLOO_IFACE", "no-such-interface0", 1);
  std::string m;
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 1, store, o); }, &m), Code::kInvalidArgument);
  EXPECT_NE(m.find("DINPUT_GLOO_IFACE=no-such-interface0: no network interface of that name"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("interfaces here: "), std::string::npos) << m;
  EXPECT_NE(m.find("lo"), std::string::npos) << m;
  // An address in the options wins over the variable.
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 1, store, loopback(5000, "env2")); }), Code::kOk);
  // The loopback interface by name.
  setenv("DINPUT_GLOO_IFACE", "lo", 1);
  auto c = connect_with(2, store, o);
  unsetenv("DINPUT_GLOO_IFACE");
  std::thread t([&] { c[1]->all_gather(1, 1, "b"); });
  EXPECT_EQ(c[0]->all_gather(0, 1, "a"), (std::vector<std::string>{"a", "b"}));
  t.join();
}

// DINPUT_GLOO_ADDRESS names the address when neither the options nor DINPUT_GLOO_IFACE name
// where to listen; the interface variable wins over it.
TEST(GlooCollective, AddressFromTheEnvironment) {
  auto store = make_memory_store();
  GlooOptions o = loopback(5000, "env-address");
  o.address.clear();
  setenv("DINPUT_GLOO_ADDRESS", "192.0.2.1", 1);
  std::string m;
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 1, store, o); }, &m), Code::kInvalidArgument);
  EXPECT_NE(m.find("cannot listen on DINPUT_GLOO_ADDRESS '192.0.2.1'"), std::string::npos) << m;
  setenv("DINPUT_GLOO_IFACE", "lo", 1);
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 1, store, o); }), Code::kOk);
  unsetenv("DINPUT_GLOO_IFACE");
  setenv("DINPUT_GLOO_ADDRESS", "127.0.0.1", 1);
  o.job_id = "env-address-2";
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 1, store, o); }), Code::kOk);
  unsetenv("DINPUT_GLOO_ADDRESS");
}

// With refuse_loopback (the C API's choice for a job not known to run on one host), a worker
// of several that would listen on a loopback address fails at once, naming it; one worker
// alone may.
TEST(GlooCollective, RefusedLoopbackNamesTheAddress) {
  auto store = make_memory_store();
  GlooOptions o = loopback(5000, "refuse");
  o.refuse_loopback = true;
  std::string m;
  const auto start = Clock::now();
  EXPECT_EQ(code_of([&] { make_gloo_collective(1, 3, store, o); }, &m), Code::kFailedPrecondition);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));  // not after the rendezvous
  EXPECT_NE(m.find("worker 1 of 3 would listen on the loopback address 127.0.0.1 (from address "
                   "'127.0.0.1')"),
            std::string::npos)
      << m;
  o.address = "localhost";
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 2, store, o); }, &m), Code::kFailedPrecondition);
  EXPECT_NE(m.find("'localhost'"), std::string::npos) << m;
  o.job_id = "refuse-alone";
  EXPECT_EQ(code_of([&] { make_gloo_collective(0, 1, store, o); }), Code::kOk);
}

// Threads of this process, and how many of them block SIGPIPE (from /proc).
std::pair<int, int> threads_blocking_sigpipe() {
  int threads = 0, blocking = 0;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return {-1, -1};
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream status(std::string("/proc/self/task/") + entry->d_name + "/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("SigBlk:", 0) == 0) {
        ++threads;
        const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
        if (mask & (1ull << (SIGPIPE - 1))) ++blocking;
      }
  }
  closedir(dir);
  return {threads, blocking};
}

// Every thread the collective starts blocks SIGPIPE: a write to a worker that died then fails
// (the others report it) instead of killing this process. The caller's mask is left alone.
TEST(GlooCollective, ItsThreadsBlockSigpipe) {
  const auto before = threads_blocking_sigpipe();
  auto c = connect(2, 20000);
  const auto after = threads_blocking_sigpipe();
  EXPECT_GT(after.first, before.first);
  EXPECT_EQ(after.second - before.second, after.first - before.first);
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  EXPECT_FALSE(sigismember(&mask, SIGPIPE));
}

// Two workers that lose a third at the same moment each tell the others why, and leave at
// once: a worker that had not seen the loss itself still names the lost worker, not one of
// those that left. (Each one's message used to cut the other's broadcast short, so both
// could leave before the third worker had their reason.) With W = 4, workers 1 and 2 wait
// for worker 3 in the step, and worker 0 waits for worker 2.
TEST(GlooCollective, SurvivorsThatLeaveAtOnceStillNameTheLostWorker) {
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(round);
    auto c = connect(4, 20000);
    ASSERT_EQ(c.size(), 4u);
    std::vector<std::string> got(3);
    std::vector<std::thread> ts;
    for (int w = 0; w < 3; ++w)
      ts.emplace_back([&, w] {
        try {
          c[static_cast<size_t>(w)]->all_gather(w, 1, "x");
          got[static_cast<size_t>(w)] = "completed";
        } catch (const Error& e) {
          got[static_cast<size_t>(w)] = e.what();
        }
        if (w != 0) c[static_cast<size_t>(w)].reset();  // leaves at once
      });
    std::this_thread::sleep_for(milliseconds(100));  // the others wait in the step
    c[3].reset();                                    // worker 3 leaves mid-step
    for (auto& t : ts) t.join();
    for (int w = 0; w < 3; ++w)
      EXPECT_NE(got[static_cast<size_t>(w)].find("lost its connection to worker 3"),
                std::string::npos)
          << "worker " << w << ": " << got[static_cast<size_t>(w)];
  }
}

// A store in a directory, for processes: a key is a file, written whole by rename.
class DirStore final : public Store {
 public:
  explicit DirStore(std::string dir) : dir_(std::move(dir)) {}
  void set(const std::string& key, const std::string& value) override {
    const std::string tmp = path(key) + ".tmp" + std::to_string(getpid());
    std::ofstream(tmp, std::ios::binary) << value;
    std::rename(tmp.c_str(), path(key).c_str());
  }
  std::vector<std::string> get(const std::vector<std::string>& keys,
                               milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    while (!check(keys)) {
      if (Clock::now() > deadline) raise(Code::kDeadlineExceeded, "dir store: keys missing");
      std::this_thread::sleep_for(milliseconds(2));
    }
    std::vector<std::string> out;
    for (const auto& k : keys) {
      std::ifstream in(path(k), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      out.push_back(ss.str());
    }
    return out;
  }
  int64_t add(const std::string& key, int64_t delta) override {
    const int fd = open((dir_ + "/lock").c_str(), O_CREAT | O_RDWR, 0600);
    flock(fd, LOCK_EX);
    int64_t now = delta;
    if (check({key})) now += std::stoll(get({key}, milliseconds(0)).at(0));
    set(key, std::to_string(now));
    flock(fd, LOCK_UN);
    close(fd);
    return now;
  }
  bool check(const std::vector<std::string>& keys) override {
    struct stat st;
    for (const auto& k : keys)
      if (stat(path(k).c_str(), &st) != 0) return false;
    return true;
  }

 private:
  std::string path(const std::string& key) const {
    std::string p = dir_ + "/k_";
    for (unsigned char ch : key)
      p += std::isalnum(ch) ? std::string(1, char(ch)) : std::to_string(ch);
    return p;
  }
  std::string dir_;
};

// Runs in a child: what it reports goes to `fd` as one line.
// Waits for every child and closes its pipe; a child still running past the watchdog is a
// failure and is killed. Returns each child's wait status.
std::vector<int> reap_children(const std::vector<pid_t>& pids, const std::vector<int>& fds,
                               Clock::time_point watchdog) {
  std::vector<int> statuses(pids.size(), 0);
  for (size_t i = 0; i < pids.size(); ++i) {
    while (waitpid(pids[i], &statuses[i], WNOHANG) == 0) {
      if (Clock::now() > watchdog) {
        ADD_FAILURE() << "worker " << i << " hung; killed";
        kill(pids[i], SIGKILL);
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    close(fds[i]);
  }
  return statuses;
}

void child_worker(int w, int W, const std::string& dir, int report_fd) {
  auto say = [&](const std::string& s) {
    std::string line = s + "\n";
    (void)!write(report_fd, line.data(), line.size());
  };
  try {
    auto c = make_gloo_collective(w, W, std::make_shared<DirStore>(dir), loopback(30000));
    for (int step = 0; step < 3; ++step) c->all_gather(w, 1, std::to_string(w));
    say("ready");
    if (w == W - 1) {
      c->all_gather(w, 99, "");  // waits (nobody else comes) until the parent kills it
      say("unexpected: the doomed worker completed");
      return;
    }
    const auto start = Clock::now();
    try {
      c->all_gather(w, 1, "after");
      say("unexpected: completed without the killed worker");
    } catch (const Error& e) {
      const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
      say(str_cat(code_name(e.code()), " after ", ms, " ms: ", e.what()));
    }
  } catch (const std::exception& e) {
    say(std::string("error: ") + e.what());
  }
}

TEST(GlooCollective, ProcessKilledMidStepFailsTheOthersNamingIt) {
  // W = 4 and 5: some survivors exchange only with other survivors in the round they wait in.
  for (int W : {2, 3, 4, 5}) {
    SCOPED_TRACE(W);
    char tmpl[] = "/tmp/dinput_gloo_XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    std::vector<pid_t> pids;
    std::vector<int> fds;
    for (int w = 0; w < W; ++w) {
      int p[2];
      ASSERT_EQ(pipe(p), 0);
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        close(p[0]);
        child_worker(w, W, dir, p[1]);
        _exit(0);
      }
      close(p[1]);
      pids.push_back(pid);
      fds.push_back(p[0]);
    }
    // Reads one line from each child, failing (and killing them all) past the watchdog.
    const auto watchdog = Clock::now() + std::chrono::seconds(60);
    auto read_line = [&](int w) {
      std::string line;
      char ch;
      while (Clock::now() < watchdog) {
        struct timeval tv = {0, 100000};
        fd_set set;
        FD_ZERO(&set);
        FD_SET(fds[static_cast<size_t>(w)], &set);
        if (select(fds[static_cast<size_t>(w)] + 1, &set, nullptr, nullptr, &tv) <= 0) continue;
        if (read(fds[static_cast<size_t>(w)], &ch, 1) != 1 || ch == '\n') break;
        line += ch;
      }
      return line;
    };
    bool all_ready = true;
    for (int w = 0; w < W; ++w) {
      const std::string line = read_line(w);
      EXPECT_EQ(line, "ready") << "worker " << w;
      all_ready = all_ready && line == "ready";
    }
    if (all_ready) {
      std::this_thread::sleep_for(milliseconds(200));  // the survivors are waiting in a step
      kill(pids.back(), SIGKILL);
      for (int w = 0; w + 1 < W; ++w) {
        const std::string line = read_line(w);
        EXPECT_EQ(line.rfind("UNAVAILABLE after ", 0), 0u) << line;
        // Well within the timeout (30 s): the closed connection is seen at once.
        EXPECT_LT(std::atoi(line.c_str() + std::strlen("UNAVAILABLE after ")), 5000) << line;
        EXPECT_NE(line.find("lost its connection to worker " + std::to_string(W - 1)),
                  std::string::npos)
            << line;
      }
    }
    // Every child reaped; any still running past the watchdog is killed.
    reap_children(pids, fds, watchdog);
    std::system(("rm -rf " + dir).c_str());
  }
}

// Reads what a child wrote to `fd` until it closes it, or the watchdog passes.
std::string read_all(int fd, Clock::time_point watchdog) {
  std::string out;
  char buffer[4096];
  while (Clock::now() < watchdog) {
    struct timeval tv = {0, 100000};
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    if (select(fd + 1, &set, nullptr, nullptr, &tv) <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

// Workers as processes: each child builds its strategy on its own GlooCollective and
// iterates; what each worker gets is what the same worker gets in process.
TEST(GlooCollective, WorkerProcessesGiveTheInProcessOutput) {
#if defined(__SANITIZE_THREAD__)
  // This test forks from a process that already runs threads (the in-process run it compares
  // with, the tcp:// server), which ThreadSanitizer's runtime does not support: its children
  // stop before they print. The default and AddressSanitizer stages run it.
  GTEST_SKIP() << "forks after starting threads, which ThreadSanitizer does not support";
#endif
  // The store: the test's own in files, then the library's tcp:// (served here, by the test
  // process, on a port the system chooses) and file://.
  for (const std::string kind : {"dir", "tcp", "file"})
    for (int W : {2, 3, 4}) {
      SCOPED_TRACE(kind + " W=" + std::to_string(W));
      const MakeDist make = [](std::shared_ptr<const Strategy> s) {
        return distribute_dataset(s, make_batch(make_range(0, 20, 1), 8, false), {});
      };
      auto in_process = run_workers(W, 2, make);
      char tmpl[] = "/tmp/dinput_gloo_XXXXXX";
      const std::string dir = mkdtemp(tmpl);
      std::shared_ptr<Store> server;
      std::string url = "file://" + dir;
      // The tcp:// server is a thread of this process, started only after the workers are
      // forked: a fork while it runs could copy a lock it holds (the allocator's, under
      // ASan) into a child, where nobody would ever release it. Its port is reserved first
      // (bound, not listening; the server binds it with SO_REUSEADDR beside that).
      int reserved = -1;
      if (kind == "tcp") {
        reserved = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_GE(reserved, 0);
        const int one = 1;
        setsockopt(reserved, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        ASSERT_EQ(bind(reserved, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
        ASSERT_EQ(getsockname(reserved, reinterpret_cast<sockaddr*>(&address), &length), 0);
        url = "tcp://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
      }
      auto open_store = [&](int w) -> std::shared_ptr<Store> {
        if (kind == "dir") return std::make_shared<DirStore>(dir);
        StoreOptions o;
        o.serve = false;  // the server runs in the test process (not copied by fork)
        return make_store(url, w, W, o);
      };
      std::vector<pid_t> pids;
      std::vector<int> fds;
      for (int w = 0; w < W; ++w) {
        int p[2];
        ASSERT_EQ(pipe(p), 0);
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
          close(p[0]);
          WorkerRun run;
          try {
            auto c = make_gloo_collective(w, W, open_store(w), loopback(30000));
            DistributedIterator it(make(make_strategy({"CPU:0", "CPU:1"}, c, w)));
            std::vector<Element> step;
            while (it.next(step)) {
              std::vector<std::vector<int64_t>> replicas;
              for (const auto& piece : step) replicas.push_back(values_of(piece));
              run.steps.push_back(std::move(replicas));
            }
          } catch (const Error& e) {
            run.error = e.what();
          }
          const std::string out = run.error.empty() ? notation(run) : "error: " + run.error;
          (void)!write(p[1], out.data(), out.size());
          _exit(0);
        }
        close(p[1]);
        pids.push_back(pid);
        fds.push_back(p[0]);
      }
      if (kind == "tcp") server = make_store(url, 0, W, {});
      const auto watchdog = Clock::now() + std::chrono::seconds(60);
      for (int w = 0; w < W; ++w)
        EXPECT_EQ(read_all(fds[static_cast<size_t>(w)], watchdog),
                  notation(in_process[static_cast<size_t>(w)]))
            << "worker " << w;
      if (reserved >= 0) close(reserved);
      const std::vector<int> statuses = reap_children(pids, fds, watchdog);
      for (size_t i = 0; i < statuses.size(); ++i)
        EXPECT_TRUE(WIFEXITED(statuses[i]) && WEXITSTATUS(statuses[i]) == 0) << "worker " << i;
      std::system(("rm -rf " + dir).c_str());
    }
}

// An error in one worker's pipeline reaches every worker process, as in process: each fails
// with the error of the failing worker. Its message (naming a long path) is longer than one
// message of the all-gather, so it also takes the exchange of long payloads.
TEST(GlooCollective, PipelineErrorOfOneProcessReachesEveryWorker) {
  constexpr int W = 3;
  char tmpl[] = "/tmp/dinput_gloo_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string missing =
      dir + "/" + std::string(200, 'd') + "/" + std::string(200, 'e') + "/" + std::string(200, 'f');
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (int w = 0; w < W; ++w) {
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(p[0]);
      std::string out = "no error";
      try {
        std::string file = dir + "/w" + std::to_string(w) + ".txt";
        if (w == 1)
          file = missing;
        else
          std::ofstream(file) << "1\n2\n3\n4\n";
        auto c = make_gloo_collective(w, W, std::make_shared<DirStore>(dir), loopback(30000));
        DistributedIterator it(distribute_dataset(
            make_strategy({"CPU:0"}, c, w), make_batch(make_text_lines({file}), 2, false), {}));
        std::vector<Element> step;
        while (it.next(step)) {
        }
      } catch (const Error& e) {
        out = str_cat(code_name(e.code()), ": ", e.what());
      }
      (void)!write(p[1], out.data(), out.size());
      _exit(0);
    }
    close(p[1]);
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  const auto watchdog = Clock::now() + std::chrono::seconds(60);
  std::vector<std::string> got;
  for (int w = 0; w < W; ++w) got.push_back(read_all(fds[static_cast<size_t>(w)], watchdog));
  EXPECT_NE(got[1].find(missing), std::string::npos) << got[1];
  EXPECT_GT(got[1].size(), 600u);
  EXPECT_EQ(got[0], got[1]);
  EXPECT_EQ(got[2], got[1]);
  reap_children(pids, fds, watchdog);
  std::system(("rm -rf " + dir).c_str());
}

// A worker whose pipeline fails aborts and exits at once: the others report its reason, not
// the connection it closed.
TEST(GlooCollective, ProcessThatAbortsAndExitsTellsTheOthersWhy) {
  constexpr int W = 3;
  char tmpl[] = "/tmp/dinput_gloo_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (int w = 0; w < W; ++w) {
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(p[0]);
      std::string line;
      try {
        auto c = make_gloo_collective(w, W, std::make_shared<DirStore>(dir), loopback(30000));
        c->all_gather(w, 1, "x");
        if (w == 0) {
          std::this_thread::sleep_for(milliseconds(200));  // the others wait in step 1
          c->abort(Error(Code::kInvalidArgument, "worker 0's pipeline failed: bad record"));
          _exit(0);  // without destroying the collective, as a crashing program would
        }
        c->all_gather(w, 1, "y");
        line = "unexpected: completed";
      } catch (const Error& e) {
        line = str_cat(code_name(e.code()), ": ", e.what());
      }
      line += "\n";
      (void)!write(p[1], line.data(), line.size());
      _exit(0);
    }
    close(p[1]);
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  const auto watchdog = Clock::now() + std::chrono::seconds(60);
  for (int w = 1; w < W; ++w) {
    std::string line;
    char ch;
    while (Clock::now() < watchdog) {
      struct timeval tv = {0, 100000};
      fd_set set;
      FD_ZERO(&set);
      FD_SET(fds[static_cast<size_t>(w)], &set);
      if (select(fds[static_cast<size_t>(w)] + 1, &set, nullptr, nullptr, &tv) <= 0) continue;
      if (read(fds[static_cast<size_t>(w)], &ch, 1) != 1 || ch == '\n') break;
      line += ch;
    }
    EXPECT_EQ(line, "INVALID_ARGUMENT: worker 0's pipeline failed: bad record") << "worker " << w;
  }
  reap_children(pids, fds, watchdog);
  std::system(("rm -rf " + dir).c_str());
}

// A worker process that never starts: the others fail the rendezvous within the timeout,
// naming it, and exit (none is left behind: reap_children fails a test whose child hangs).
TEST(GlooCollective, ProcessThatNeverArrivesFailsTheRendezvousNamingIt) {
  constexpr int W = 3;
  char tmpl[] = "/tmp/dinput_gloo_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (int w = 0; w + 1 < W; ++w) {  // worker 2 is never started
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(p[0]);
      std::string out = "unexpected: joined";
      const auto start = Clock::now();
      try {
        make_gloo_collective(w, W, std::make_shared<DirStore>(dir), loopback(1500));
      } catch (const Error& e) {
        const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
        out = str_cat(code_name(e.code()), " after ", ms, " ms: ", e.what());
      }
      (void)!write(p[1], out.data(), out.size());
      _exit(0);
    }
    close(p[1]);
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  const auto watchdog = Clock::now() + std::chrono::seconds(60);
  for (int w = 0; w + 1 < W; ++w) {
    const std::string got = read_all(fds[static_cast<size_t>(w)], watchdog);
    EXPECT_EQ(got.rfind("DEADLINE_EXCEEDED after ", 0), 0u) << got;
    EXPECT_LT(std::atoi(got.c_str() + std::strlen("DEADLINE_EXCEEDED after ")), 20000) << got;
    EXPECT_NE(got.find("at the rendezvous for worker 2 "), std::string::npos) << got;
  }
  const std::vector<int> statuses = reap_children(pids, fds, watchdog);
  for (size_t i = 0; i < statuses.size(); ++i)
    EXPECT_TRUE(WIFEXITED(statuses[i]) && WEXITSTATUS(statuses[i]) == 0) << "worker " << i;
  std::system(("rm -rf " + dir).c_str());
}

// Two jobs on one store, told apart by their job ids, run at once without mixing.
TEST(GlooCollective, TwoJobsOnOneStore) {
  auto store = make_memory_store();
  constexpr int W = 2;
  std::vector<std::shared_ptr<Collective>> c(2 * W);
  std::vector<std::thread> ts;
  for (int i = 0; i < 2 * W; ++i)
    ts.emplace_back([&, i] {
      c[static_cast<size_t>(i)] =
          make_gloo_collective(i % W, W, store, loopback(20000, i < W ? "job-a" : "job-b"));
    });
  for (auto& t : ts) t.join();
  ts.clear();
  std::vector<std::vector<std::string>> got(2 * W);
  for (int i = 0; i < 2 * W; ++i)
    ts.emplace_back([&, i] {
      got[static_cast<size_t>(i)] = c[static_cast<size_t>(i)]->all_gather(
          i % W, 1, (i < W ? "a" : "b") + std::to_string(i % W));
    });
  for (auto& t : ts) t.join();
  for (int i = 0; i < 2 * W; ++i)
    EXPECT_EQ(got[static_cast<size_t>(i)], i < W ? (std::vector<std::string>{"a0", "a1"})
                                                 : (std::vector<std::string>{"b0", "b1"}));
}

}  // namespace
}  // namespace dinput::testing
