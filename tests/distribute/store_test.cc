// The rendezvous stores (tcp://, file://, redis://) with real worker processes on loopback.
// Workers are this binary run again with --store-worker (see worker_main): each opens the
// store with make_store and runs the steps given on its command line, printing one line per
// result. Every child is reaped, killed when the test process dies (PR_SET_PDEATHSIG), and
// waited for with a deadline, so a hang fails the test instead of stalling CI.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collective/redis_store.h"
#include "collective/store_url.h"
#include "collective/tcp_store.h"
#include "core/status.h"

namespace dinput {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const milliseconds kChildDeadline(30000);

// ---- worker processes ----

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

// argv: --store-worker URL RANK WORLD JOB STEP... Steps (options first, then operations):
//   noserve | connect=MS | noloopback     options of make_store
//   nofile=N                              lowers this process's descriptor limit
//   url                                   prints "url <served url>"
//   set=K=V | add=K=D | get=K1,K2@MS | check=K1,K2 | sleep=MS
int worker_main(int argc, char** argv) {
  if (argc < 6) return 2;
  std::string url = argv[2];
  int rank = std::atoi(argv[3]), world = std::atoi(argv[4]);
  StoreOptions options;
  options.job_id = argv[5];
  options.connect_timeout = milliseconds(10000);
  std::shared_ptr<Store> store;
  std::string served;
  try {
    for (int i = 6; i < argc; ++i) {
      std::string step = argv[i];
      size_t eq = step.find('=');
      std::string op = step.substr(0, eq), arg = eq == std::string::npos ? "" : step.substr(eq + 1);
      if (op == "noserve") {
        options.serve = false;
        continue;
      }
      if (op == "connect") {
        options.connect_timeout = milliseconds(std::atoll(arg.c_str()));
        continue;
      }
      if (op == "noloopback") {
        options.allow_loopback = false;
        continue;
      }
      if (op == "nofile") {
        rlimit limit{};
        getrlimit(RLIMIT_NOFILE, &limit);
        limit.rlim_cur = static_cast<rlim_t>(std::atoll(arg.c_str()));
        setrlimit(RLIMIT_NOFILE, &limit);
        continue;
      }
      if (!store) store = make_store(url, rank, world, options, &served);
      if (op == "url") {
        std::cout << "url " << served << std::endl;
      } else if (op == "set") {
        size_t e = arg.find('=');
        store->set(arg.substr(0, e), arg.substr(e + 1));
      } else if (op == "add") {
        size_t e = arg.find('=');
        int64_t v = store->add(arg.substr(0, e), std::atoll(arg.substr(e + 1).c_str()));
        std::cout << "add " << v << std::endl;
      } else if (op == "get") {
        size_t at = arg.find('@');
        auto keys = split(arg.substr(0, at), ',');
        auto values = store->get(keys, milliseconds(std::atoll(arg.substr(at + 1).c_str())));
        std::cout << "get";
        for (size_t k = 0; k < keys.size(); ++k) std::cout << " " << keys[k] << "=" << values[k];
        std::cout << std::endl;
      } else if (op == "check") {
        std::cout << "check " << store->check(split(arg, ',')) << std::endl;
      } else if (op == "sleep") {
        std::this_thread::sleep_for(milliseconds(std::atoll(arg.c_str())));
      } else {
        std::cout << "error bad step " << step << std::endl;
        return 2;
      }
    }
  } catch (const Error& e) {
    std::cout << "error " << code_name(e.code()) << " " << e.what() << std::endl;
    return 3;
  }
  return 0;
}

class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"/proc/self/exe", "--store-worker"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      // Only async-signal-safe calls between fork and exec: the parent has threads.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(4);
      dup2(fds[1], 1);
      execv(argv[0], argv.data());
      _exit(5);
    }
    close(fds[1]);
    out_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // The CPU time the child used, once finished.
  milliseconds cpu_time() const {
    auto ms = [](const timeval& t) { return t.tv_sec * 1000 + t.tv_usec / 1000; };
    return milliseconds(ms(usage_.ru_utime) + ms(usage_.ru_stime));
  }

  // The next line the child prints; empty when none comes within `timeout`.
  std::string read_line(milliseconds timeout = kChildDeadline) {
    auto deadline = Clock::now() + timeout;
    for (;;) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      if (!fill(deadline)) return {};
    }
  }

  // Waits for the child to exit (killing it past `timeout`): its exit code, -1 when it had to
  // be killed or died of a signal. `output` gets the rest of what it printed.
  int finish(std::string* output = nullptr, milliseconds timeout = kChildDeadline) {
    auto deadline = Clock::now() + timeout;
    while (fill(deadline)) {
    }
    if (output) *output = buf_;
    int status = 0;
    for (;;) {
      pid_t r = wait4(pid_, &status, WNOHANG, &usage_);
      if (r == pid_) break;
      if (Clock::now() >= deadline) {
        ADD_FAILURE() << "worker " << pid_ << " hung: killed";
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  void kill_now() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  // Reads what is available; false at end of output or past the deadline.
  bool fill(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char buf[4096];
    ssize_t r = read(out_, buf, sizeof(buf));
    if (r <= 0) return false;
    buf_.append(buf, static_cast<size_t>(r));
    return true;
  }

  pid_t pid_ = -1;
  int out_ = -1;
  std::string buf_;
  rusage usage_{};
};

// A port nothing listens on now (bound, then closed).
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Runs `fn` on a thread and fails the test if it takes longer than `timeout`.
template <typename Fn>
auto within(milliseconds timeout, Fn fn) {
  auto f = std::async(std::launch::async, fn);
  if (f.wait_for(timeout) != std::future_status::ready) {
    ADD_FAILURE() << "operation hung";
    std::abort();  // the watchdog: a hang must not stall CI
  }
  return f.get();
}

Code code_of(const std::function<void()>& fn, std::string* message = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return Code::kOk;
}

std::string temp_dir(const std::string& name) {
  std::string dir = testing::TempDir() + "dinput_store_" + name + "_" + std::to_string(getpid());
  std::string cmd = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return dir;
}

// ---- URLs and options ----

TEST(StoreUrl, Parses) {
  auto u = parse_store_url("tcp://node1:29500");
  EXPECT_EQ(u.scheme, "tcp");
  EXPECT_EQ(u.host, "node1");
  EXPECT_EQ(u.port, 29500);
  u = parse_store_url("TCP://[::1]:0/");
  EXPECT_EQ(u.scheme, "tcp");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 0);
  u = parse_store_url("file:///shared/rdzv/");
  EXPECT_EQ(u.scheme, "file");
  EXPECT_EQ(u.path, "/shared/rdzv");
  u = parse_store_url("redis://10.0.0.5:6379");
  EXPECT_EQ(u.host, "10.0.0.5");
  EXPECT_EQ(u.port, 6379);
  EXPECT_EQ(u.db, 0);
  u = parse_store_url("redis://10.0.0.5:6379/3");
  EXPECT_EQ(u.port, 6379);
  EXPECT_EQ(u.db, 3);
}

TEST(StoreUrl, MalformedIsInvalidArgumentNamingTheUrl) {
  for (std::string url :
       {"", "node1:29500", "http://node1:80", "tcp://node1", "tcp://node1:", "tcp://:29500",
        "tcp://node1:65536", "tcp://node1:-1", "tcp://node1:12ab", "tcp://::1:29500", "tcp://[::1]",
        "tcp://node1:29500/path", "redis://user@node1:6379", "redis://node1",
        "redis://node1:6379/x", "redis://node1:6379/-1", "file://", "file:///"}) {
    std::string message;
    EXPECT_EQ(code_of([&] { parse_store_url(url); }, &message), Code::kInvalidArgument) << url;
    EXPECT_NE(message.find("'" + url + "'"), std::string::npos) << message;
  }
  std::string message;
  EXPECT_EQ(code_of([&] { make_store("tcp://127.0.0.1:0", 1, 2); }, &message),
            Code::kInvalidArgument);
  EXPECT_NE(message.find("port 0"), std::string::npos) << message;
  EXPECT_EQ(code_of([&] { make_store("tcp://127.0.0.1:1", 2, 2); }), Code::kInvalidArgument);
}

TEST(StoreUrl, BindAddressFromOptionsAndEnvironment) {
  unsetenv("DINPUT_RDZV_ADDR");
  unsetenv("DINPUT_RDZV_INTERFACE");
  StoreOptions options;
  EXPECT_EQ(rendezvous_bind_address(options), "");
  setenv("DINPUT_RDZV_INTERFACE", "lo", 1);
  EXPECT_EQ(rendezvous_bind_address(options), "127.0.0.1");
  setenv("DINPUT_RDZV_ADDR", "127.0.0.2", 1);
  EXPECT_EQ(rendezvous_bind_address(options), "127.0.0.2");  // the address wins
  options.bind_address = "127.0.0.3";
  EXPECT_EQ(rendezvous_bind_address(options), "127.0.0.3");  // the option wins
  unsetenv("DINPUT_RDZV_ADDR");
  setenv("DINPUT_RDZV_INTERFACE", "no-such-if0", 1);
  options.bind_address.clear();
  std::string message;
  EXPECT_EQ(code_of([&] { rendezvous_bind_address(options); }, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("DINPUT_RDZV_INTERFACE=no-such-if0"), std::string::npos) << message;
  EXPECT_NE(message.find("lo"), std::string::npos) << message;
  unsetenv("DINPUT_RDZV_INTERFACE");

  // The server listens where asked, and rank 0 reaches it there.
  setenv("DINPUT_RDZV_ADDR", "127.0.0.1", 1);
  std::string served;
  auto store = make_store("tcp://127.0.0.1:0", 0, 1, {}, &served);
  unsetenv("DINPUT_RDZV_ADDR");
  store->set("k", "v");
  EXPECT_EQ(store->get({"k"}, milliseconds(1000)), std::vector<std::string>{"v"});
  EXPECT_NE(served.find("tcp://127.0.0.1:"), std::string::npos);
  EXPECT_EQ(served.find(":0"), std::string::npos) << served;  // the chosen port
}

TEST(StoreUrl, LoopbackHostIsAnErrorOnlyWhenNotAllowed) {
  StoreOptions strict;
  strict.allow_loopback = false;
  strict.connect_timeout = milliseconds(100);
  StoreOptions lenient = strict;
  lenient.allow_loopback = true;
  StoreOptions client_only = strict;
  client_only.serve = false;
  for (std::string host : {"localhost", "127.0.0.1", "[::1]"}) {
    for (std::string scheme : {"tcp", "redis"}) {
      std::string url = scheme + "://" + host + ":" + std::to_string(free_port());
      std::string message;
      EXPECT_EQ(code_of([&] { make_store(url, 1, 2, strict); }, &message), Code::kInvalidArgument)
          << url;
      EXPECT_NE(message.find("loopback"), std::string::npos) << message;
      EXPECT_NE(message.find(url), std::string::npos) << message;
      // Loopback allowed, or a one-worker job: no check (nothing serves there: UNAVAILABLE,
      // or UNIMPLEMENTED for redis:// without Gloo).
      Code unreachable =
          scheme == "redis" && !redis_store_available() ? Code::kUnimplemented : Code::kUnavailable;
      EXPECT_EQ(code_of([&] { make_store(url, 1, 2, lenient); }), unreachable) << url;
      EXPECT_EQ(code_of([&] { make_store(url, 0, 1, client_only); }), unreachable) << url;
    }
  }
  // The rank that serves a tcp:// store reaches it on its own machine: not checked.
  EXPECT_EQ(code_of([&] { make_store("tcp://localhost:0", 0, 2, strict); }), Code::kOk);
}

// ---- tcp:// ----

TEST(TcpStore, WorkerProcessesSetAndGetEachOthersKeys) {
  for (int world : {2, 4, 16, 64}) {
    std::string url;
    auto store = make_store("tcp://127.0.0.1:0", 0, world, {}, &url);
    std::vector<std::string> keys, expected;
    std::string line = "get";
    for (int r = 0; r < world; ++r) {
      keys.push_back("addr/" + std::to_string(r));
      expected.push_back("host" + std::to_string(r));
      line += " " + keys.back() + "=" + expected.back();
    }
    std::string all_keys = keys[0];
    for (int r = 1; r < world; ++r) all_keys += "," + keys[r];
    std::vector<std::unique_ptr<Child>> children;
    for (int r = 1; r < world; ++r) {
      children.push_back(std::make_unique<Child>(std::vector<std::string>{
          url, std::to_string(r), std::to_string(world), "", "set=" + keys[r] + "=" + expected[r],
          "get=" + all_keys + "@20000"}));
    }
    store->set("addr/0", "host0");
    EXPECT_EQ(store->get(keys, milliseconds(20000)), expected);
    for (auto& c : children) {
      std::string out;
      EXPECT_EQ(c->finish(&out), 0) << out;
      EXPECT_EQ(out, line + "\n");
    }
  }
}

TEST(TcpStore, WaitingGetIsAnsweredByTheServerWhenAnotherProcessSets) {
  auto server = std::make_shared<TcpStoreServer>("127.0.0.1", 0, "test");
  auto store = make_tcp_store("127.0.0.1", server->port(), milliseconds(5000), server);
  std::string url = "tcp://127.0.0.1:" + std::to_string(server->port());
  uint64_t before = server->requests_served();
  Child child({url, "1", "2", "", "noserve", "get=late@20000"});
  std::this_thread::sleep_for(milliseconds(800));
  store->set("late", "value");
  std::string out;
  EXPECT_EQ(child.finish(&out), 0) << out;
  EXPECT_EQ(out, "get late=value\n");
  // The child's hello and get, and our set: a client polling every 10 ms would have made
  // dozens of requests while it waited.
  EXPECT_LE(server->requests_served() - before, 4u);
}

TEST(TcpStore, AddFromManyProcessesGivesDistinctValues) {
  std::string url;
  auto store = make_store("tcp://127.0.0.1:0", 0, 7, {}, &url);
  std::vector<std::string> steps = {"", "", "7", "job"};
  for (int i = 0; i < 20; ++i) steps.push_back("add=counter=1");
  std::vector<std::unique_ptr<Child>> children;
  for (int r = 1; r < 7; ++r) {
    steps[0] = url;
    steps[1] = std::to_string(r);
    children.push_back(std::make_unique<Child>(steps));
  }
  std::set<int64_t> seen;
  for (auto& c : children) {
    std::string out;
    EXPECT_EQ(c->finish(&out), 0) << out;
    for (const auto& line : split(out, '\n')) {
      ASSERT_EQ(line.rfind("add ", 0), 0u) << line;
      EXPECT_TRUE(seen.insert(std::atoll(line.c_str() + 4)).second) << line;
    }
  }
  EXPECT_EQ(seen.size(), 120u);
  EXPECT_EQ(*seen.begin(), 1);
  EXPECT_EQ(*seen.rbegin(), 120);
  // The job id namespaces the counter: the unprefixed key was never touched.
  EXPECT_FALSE(store->check({"counter"}));
  auto job = make_prefix_store(store, "job");
  EXPECT_EQ(job->add("counter", 0), 120);
}

TEST(TcpStore, GetTimesOutNamingTheMissingKeys) {
  std::string served;
  auto store = make_store("tcp://localhost:0", 0, 1, {}, &served);
  store->set("b", "1");
  std::string message;
  auto start = Clock::now();
  EXPECT_EQ(code_of(
                [&] {
                  store->get({"a", "b", "c"}, milliseconds(300));
                },
                &message),
            Code::kDeadlineExceeded);
  EXPECT_GE(Clock::now() - start, milliseconds(290));
  EXPECT_NE(message.find("300 ms: a, c"), std::string::npos) << message;
  // Rank 0 names the store as the URL does, not by the address it reaches it at.
  EXPECT_EQ(served.rfind("tcp://localhost:", 0), 0u) << served;
  EXPECT_NE(message.find(served), std::string::npos) << message;
  EXPECT_TRUE(store->check({"b"}));
  EXPECT_FALSE(store->check({"a", "b"}));
  // set replaces; a timeout of 0 only looks.
  store->set("b", "2");
  EXPECT_EQ(store->get({"b"}, milliseconds(0)), std::vector<std::string>{"2"});
  EXPECT_EQ(code_of([&] { store->get({"a"}, milliseconds(0)); }), Code::kDeadlineExceeded);
  // add on a value that is no integer names the key.
  EXPECT_EQ(code_of([&] { store->add("b", 1); }), Code::kOk);
  store->set("text", "x");
  EXPECT_EQ(code_of([&] { store->add("text", 1); }, &message), Code::kFailedPrecondition);
  EXPECT_NE(message.find("'text'"), std::string::npos) << message;
}

TEST(TcpStore, ConcurrentGetDoesNotHoldUpOtherThreads) {
  auto store = make_store("tcp://127.0.0.1:0", 0, 1);
  auto waiting =
      std::async(std::launch::async, [&] { return store->get({"released"}, milliseconds(20000)); });
  std::this_thread::sleep_for(milliseconds(100));
  within(milliseconds(5000), [&] { store->set("released", "yes"); });
  EXPECT_EQ(within(milliseconds(5000), [&] { return waiting.get(); }),
            std::vector<std::string>{"yes"});
}

TEST(TcpStore, ServerKilledMidWaitIsUnavailableNamingTheAddress) {
  Child server({"tcp://127.0.0.1:0", "0", "2", "", "url", "sleep=60000"});
  std::string line = server.read_line();
  ASSERT_EQ(line.rfind("url ", 0), 0u) << line;
  std::string url = line.substr(4);
  auto client = make_store(url, 1, 2);
  auto waiting = std::async(std::launch::async, [&] {
    std::string message;
    Code code = code_of([&] { client->get({"never"}, milliseconds(30000)); }, &message);
    return std::make_pair(code, message);
  });
  std::this_thread::sleep_for(milliseconds(300));
  auto start = Clock::now();
  server.kill_now();
  auto [code, message] = within(milliseconds(10000), [&] { return waiting.get(); });
  EXPECT_LT(Clock::now() - start, milliseconds(5000));
  EXPECT_EQ(code, Code::kUnavailable) << message;
  EXPECT_NE(message.find(url), std::string::npos) << message;
  // Later operations fail at once too (a refused connection is not retried once the store
  // was reached), naming the address.
  start = Clock::now();
  EXPECT_EQ(within(milliseconds(10000), [&] { return code_of([&] { client->set("k", "v"); }); }),
            Code::kUnavailable);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(TcpStore, ServerStopsWhenItsOwnerIsDestroyed) {
  std::string url;
  auto owner = make_store("tcp://127.0.0.1:0", 0, 2, {}, &url);
  auto client = make_store(url, 1, 2);
  auto waiting = std::async(std::launch::async, [&] {
    std::string message;
    Code code = code_of([&] { client->get({"never"}, milliseconds(30000)); }, &message);
    return std::make_pair(code, message);
  });
  std::this_thread::sleep_for(milliseconds(200));
  within(milliseconds(5000), [&] { owner.reset(); });
  auto [code, message] = within(milliseconds(5000), [&] { return waiting.get(); });
  EXPECT_EQ(code, Code::kUnavailable) << message;
  EXPECT_NE(message.find(url), std::string::npos) << message;
}

TEST(TcpStore, PortInUseIsUnavailableNamingTheAddress) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::string url = "tcp://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  std::string message;
  EXPECT_EQ(code_of([&] { make_store(url, 0, 2); }, &message), Code::kUnavailable);
  EXPECT_NE(message.find(url), std::string::npos) << message;
  EXPECT_NE(message.find("in use"), std::string::npos) << message;
  // Two stores on one port: the second fails the same way.
  std::string served;
  auto first = make_store("tcp://127.0.0.1:0", 0, 2, {}, &served);
  EXPECT_EQ(code_of([&] { make_store(served, 0, 2); }, &message), Code::kUnavailable);
  EXPECT_NE(message.find(served), std::string::npos) << message;
  close(fd);
}

TEST(TcpStore, ConnectingRetriesUntilTheTimeout) {
  std::string url = "tcp://127.0.0.1:" + std::to_string(free_port());
  StoreOptions options;
  options.connect_timeout = milliseconds(400);
  std::string message;
  auto start = Clock::now();
  EXPECT_EQ(code_of([&] { make_store(url, 1, 2, options); }, &message), Code::kUnavailable);
  auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(395));  // the whole timeout
  EXPECT_LT(took, milliseconds(5000));
  EXPECT_NE(message.find(url), std::string::npos) << message;
  EXPECT_NE(message.find("tried for"), std::string::npos) << message;
}

TEST(TcpStore, WorkerStartedBeforeTheServerWaitsForIt) {
  std::string url = "tcp://127.0.0.1:" + std::to_string(free_port());
  Child early({url, "1", "2", "", "get=k@20000"});
  std::this_thread::sleep_for(milliseconds(500));
  auto store = make_store(url, 0, 2);
  store->set("k", "hello");
  std::string out;
  EXPECT_EQ(early.finish(&out), 0) << out;
  EXPECT_EQ(out, "get k=hello\n");
}

TEST(TcpStore, SomethingElseOnThePortIsNamed) {
  // A listener that is not a store: it accepts and says something else.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::thread other([fd] {
    int c = accept(fd, nullptr, nullptr);
    const char reply[] = "HTTP/1.0 400 Bad Request\r\n\r\n";
    if (c >= 0) {
      ssize_t ignored = write(c, reply, sizeof(reply) - 1);
      (void)ignored;
      close(c);
    }
  });
  std::string url = "tcp://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  std::string message;
  StoreOptions options;
  options.connect_timeout = milliseconds(2000);
  EXPECT_EQ(within(milliseconds(10000),
                   [&] { return code_of([&] { make_store(url, 1, 2, options); }, &message); }),
            Code::kUnavailable);
  EXPECT_NE(message.find("not a dinput rendezvous store"), std::string::npos) << message;
  other.join();
  close(fd);
}

TEST(TcpStore, ManyWaitersAndAMalformedClient) {
  std::string url;
  auto store = make_store("tcp://127.0.0.1:0", 0, 1, {}, &url);
  int port = std::atoi(url.substr(url.rfind(':') + 1).c_str());
  // A client that speaks something else is dropped; the others go on.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  const char garbage[] = "\xff\xff\xff\xffGET / HTTP/1.0\r\n\r\n";
  ASSERT_GT(write(fd, garbage, sizeof(garbage) - 1), 0);
  char buf[16];
  EXPECT_EQ(read(fd, buf, sizeof(buf)), 0);  // closed by the server
  close(fd);
  // 64 threads wait on one key, each on a connection of its own; one set releases them all.
  std::vector<std::future<std::vector<std::string>>> waiters;
  for (int i = 0; i < 64; ++i)
    waiters.push_back(
        std::async(std::launch::async, [&] { return store->get({"go"}, milliseconds(20000)); }));
  std::this_thread::sleep_for(milliseconds(200));
  store->set("go", "now");
  for (auto& w : waiters)
    EXPECT_EQ(within(milliseconds(10000), [&] { return w.get(); }),
              std::vector<std::string>{"now"});
}

TEST(TcpStore, ServerOutOfDescriptorsWaitsInsteadOfSpinning) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's runtime needs descriptors of its own (reporting, symbolizing), which a
  // process limited to 16 does not have: the limit tests the store, not the sanitizer.
  GTEST_SKIP() << "not under AddressSanitizer: the server runs with 16 file descriptors";
#endif
  // A server process allowed 16 descriptors (about 8 left for connections) and 40 clients:
  // those it cannot accept wait in the queue; the server must not spin on them meanwhile.
  Child server({"tcp://127.0.0.1:0", "0", "2", "", "nofile=16", "url", "sleep=1500"});
  std::string line = server.read_line();
  ASSERT_EQ(line.rfind("url ", 0), 0u) << line;
  int port = std::atoi(line.substr(line.rfind(':') + 1).c_str());
  std::vector<int> fds;
  for (int i = 0; i < 40; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    fds.push_back(fd);
  }
  std::string out;
  EXPECT_EQ(server.finish(&out), 0) << out;
  EXPECT_LT(server.cpu_time().count(), 500) << "ms of CPU while out of descriptors";
  for (int fd : fds) close(fd);
}

// Two jobs with the same keys on one store, each of two worker processes: every worker sees
// only its own job's values.
void two_jobs_on_one_store(const std::string& url, const std::vector<std::string>& extra) {
  std::vector<std::unique_ptr<Child>> children;
  for (std::string job : {"jobA", "jobB"}) {
    for (int r = 0; r < 2; ++r) {
      std::vector<std::string> args = {url, std::to_string(r), "2", job};
      args.insert(args.end(), extra.begin(), extra.end());
      // Both workers of a job count themselves, then meet again: each then reads 2.
      std::string me = std::to_string(r);
      for (std::string s :
           {"set=rank/" + me + "=" + job + me, std::string("get=rank/0,rank/1@20000"),
            std::string("add=n=1"), "set=counted/" + me + "=1",
            std::string("get=counted/0,counted/1@20000"), std::string("add=n=0")})
        args.push_back(s);
      children.push_back(std::make_unique<Child>(args));
    }
  }
  for (size_t i = 0; i < children.size(); ++i) {
    std::string job = i < 2 ? "jobA" : "jobB";
    std::string out;
    EXPECT_EQ(children[i]->finish(&out), 0) << out;
    auto lines = split(out, '\n');
    ASSERT_EQ(lines.size(), 4u) << out;
    EXPECT_EQ(lines[0], "get rank/0=" + job + "0 rank/1=" + job + "1");
    EXPECT_TRUE(lines[1] == "add 1" || lines[1] == "add 2") << lines[1];
    EXPECT_EQ(lines[2], "get counted/0=1 counted/1=1");
    EXPECT_EQ(lines[3], "add 2");
  }
}

TEST(TcpStore, TwoJobsOnOneStoreNeverMix) {
  auto server = std::make_shared<TcpStoreServer>("", 0, "test");
  two_jobs_on_one_store("tcp://127.0.0.1:" + std::to_string(server->port()), {"noserve"});
}

// ---- file:// ----

// W worker processes on the store at `url`: each publishes its address and reads every
// other's, then adds 1 to a shared counter ten times. The reads see every address, and the
// 10 W additions return 10 W distinct values, the last of them 10 W.
void workers_meet_and_count(const std::string& url, int W) {
  std::vector<std::unique_ptr<Child>> children;
  std::string all_keys, all_values;
  for (int r = 0; r < W; ++r) {
    all_keys += (r ? "," : "") + ("addr/" + std::to_string(r));
    all_values += (r ? " " : "") + ("addr/" + std::to_string(r) + "=h" + std::to_string(r));
  }
  for (int r = 0; r < W; ++r) {
    std::vector<std::string> args = {url,
                                     std::to_string(r),
                                     std::to_string(W),
                                     "job",
                                     "set=addr/" + std::to_string(r) + "=h" + std::to_string(r),
                                     "get=" + all_keys + "@20000"};
    for (int i = 0; i < 10; ++i) args.push_back("add=counter=1");
    children.push_back(std::make_unique<Child>(args));
  }
  std::set<int64_t> seen;
  for (auto& c : children) {
    std::string out;
    EXPECT_EQ(c->finish(&out), 0) << out;
    auto lines = split(out, '\n');
    ASSERT_EQ(lines.size(), 11u) << out;
    EXPECT_EQ(lines[0], "get " + all_values);
    for (size_t i = 1; i < lines.size(); ++i)
      EXPECT_TRUE(seen.insert(std::atoll(lines[i].c_str() + 4)).second) << lines[i];
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(10 * W));
  EXPECT_EQ(*seen.rbegin(), 10 * W);
}

TEST(FileStore, WorkerProcessesMeetInADirectory) {
  std::string dir = temp_dir("procs");
  workers_meet_and_count("file://" + dir + "/rdzv", 4);  // the directory is made on first use
}

TEST(FileStore, WaitsTimeOutNamingMissingKeysAndJobsNeverMix) {
  std::string dir = temp_dir("jobs");
  auto store = make_store("file://" + dir, 0, 1);
  store->set("b", "1");
  store->set("b", "2");  // replaces
  std::string message;
  EXPECT_EQ(code_of(
                [&] {
                  store->get({"a", "b", "c"}, milliseconds(200));
                },
                &message),
            Code::kDeadlineExceeded);
  EXPECT_NE(message.find("200 ms: a, c"), std::string::npos) << message;
  EXPECT_NE(message.find("file://" + dir), std::string::npos) << message;
  EXPECT_EQ(store->get({"b"}, milliseconds(0)), std::vector<std::string>{"2"});
  // Keys with any bytes, '/' included, stay inside the directory.
  store->set("../x/.tmp-y", "z");
  EXPECT_EQ(store->get({"../x/.tmp-y"}, milliseconds(0)), std::vector<std::string>{"z"});
  two_jobs_on_one_store("file://" + dir, {});
  // A directory that cannot be made names itself.
  EXPECT_EQ(code_of([&] { make_store("file:///proc/dinput-no/such", 0, 1); }, &message),
            Code::kUnavailable);
  EXPECT_NE(message.find("/proc/dinput-no"), std::string::npos) << message;
}

TEST(FileStore, AWaitIsAnsweredWhenAnotherProcessSets) {
  std::string dir = temp_dir("wait");
  std::string url = "file://" + dir;
  Child child({url, "1", "2", "", "get=late@20000"});
  std::this_thread::sleep_for(milliseconds(300));
  make_store(url, 0, 2)->set("late", "v");
  std::string out;
  EXPECT_EQ(child.finish(&out), 0) << out;
  EXPECT_EQ(out, "get late=v\n");
}

// ---- redis:// ----

TEST(RedisStore, WithoutGlooIsUnimplemented) {
  if (redis_store_available()) GTEST_SKIP() << "built with Gloo";
  std::string message;
  EXPECT_EQ(code_of([&] { make_store("redis://127.0.0.1:6379", 0, 1); }, &message),
            Code::kUnimplemented);
  EXPECT_NE(message.find("without Gloo"), std::string::npos) << message;
}

class RedisStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!redis_store_available()) GTEST_SKIP() << "built without Gloo";
    if (std::system("command -v redis-server >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "redis-server is not installed";
    port_ = free_port();
    url_ = "redis://127.0.0.1:" + std::to_string(port_);
    start();
  }
  void TearDown() override { stop(); }

  void start() {
    std::string port = std::to_string(port_);
    pid_t parent = getpid();
    server_ = fork();
    ASSERT_GE(server_, 0);
    if (server_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(4);
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", static_cast<char*>(nullptr));
      _exit(5);
    }
    // Ready once it answers (make_store retries connecting until then).
    StoreOptions options;
    options.connect_timeout = milliseconds(10000);
    make_store(url_, 0, 1, options)->set("ready", "1");
  }
  void stop() {
    if (server_ > 0) {
      kill(server_, SIGKILL);
      waitpid(server_, nullptr, 0);
      server_ = -1;
    }
  }

  int port_ = 0;
  std::string url_;
  pid_t server_ = -1;
};

TEST_F(RedisStoreTest, WorkerProcessesSetGetAndAdd) { workers_meet_and_count(url_, 3); }

TEST_F(RedisStoreTest, TimeoutsJobsAndAServerThatGoes) {
  auto store = make_store(url_, 0, 1);
  store->set("b", "1");
  store->set("b", "2");  // replaces (Gloo's own set refuses)
  EXPECT_EQ(store->get({"b"}, milliseconds(0)), std::vector<std::string>{"2"});
  std::string message;
  EXPECT_EQ(code_of(
                [&] {
                  store->get({"a", "b", "c"}, milliseconds(200));
                },
                &message),
            Code::kDeadlineExceeded);
  EXPECT_NE(message.find("200 ms: a, c"), std::string::npos) << message;
  EXPECT_NE(message.find(url_), std::string::npos) << message;
  EXPECT_TRUE(store->check({"b"}));
  EXPECT_FALSE(store->check({"a", "b"}));
  store->set("text", "x");
  EXPECT_EQ(code_of([&] { store->add("text", 1); }, &message), Code::kFailedPrecondition);
  two_jobs_on_one_store(url_, {});

  // Databases keep their keys apart; one Redis does not have is named.
  auto db1 = make_store(url_ + "/1", 0, 1);
  auto db2 = make_store(url_ + "/2", 0, 1);
  db1->set("only-in-1", "x");
  EXPECT_TRUE(db1->check({"only-in-1"}));
  EXPECT_FALSE(db2->check({"only-in-1"}));
  EXPECT_FALSE(store->check({"only-in-1"}));
  EXPECT_EQ(code_of([&] { make_store(url_ + "/100000", 0, 1); }, &message),
            Code::kFailedPrecondition);
  EXPECT_NE(message.find("database 100000"), std::string::npos) << message;

  // The server goes away during a wait.
  auto waiting = std::async(std::launch::async, [&] {
    std::string m;
    Code code = code_of([&] { store->get({"never"}, milliseconds(30000)); }, &m);
    return std::make_pair(code, m);
  });
  std::this_thread::sleep_for(milliseconds(200));
  stop();
  auto [code, m] = within(milliseconds(10000), [&] { return waiting.get(); });
  EXPECT_EQ(code, Code::kUnavailable) << m;
  EXPECT_NE(m.find(url_), std::string::npos) << m;
  // And nothing serves there now: connecting gives up at the timeout, naming the address.
  StoreOptions options;
  options.connect_timeout = milliseconds(300);
  EXPECT_EQ(code_of([&] { make_store(url_, 0, 1, options); }, &message), Code::kUnavailable);
  EXPECT_NE(message.find(url_), std::string::npos) << message;
}

}  // namespace
}  // namespace dinput

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--store-worker") {
    // A worker never outlives a hung test by much.
    alarm(60);
    return dinput::worker_main(argc, argv);
  }
  signal(SIGPIPE, SIG_IGN);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
