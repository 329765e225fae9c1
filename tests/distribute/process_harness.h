// Worker processes for the process tests (process_test): the test binary runs itself again
// as each worker, `process_test --worker NAME ARGS...`, where NAME is a worker registered
// with RegisterWorker. Children are started with exec (so they hold no copy of the test
// process's threads, and their environment is exactly the one given), get
// PR_SET_PDEATHSIG so they die with the test, and are all reaped by run_children, which kills
// and reports any still running past its deadline: a hang fails the test instead of CI.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

extern char** environ;

namespace dinput::testing {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// ---- workers, by name ----

using WorkerMain = std::function<int(const std::vector<std::string>& args)>;

inline std::map<std::string, WorkerMain>& worker_registry() {
  static std::map<std::string, WorkerMain> registry;
  return registry;
}

// A worker entry point of this binary, defined at namespace scope in a test file.
struct RegisterWorker {
  RegisterWorker(const std::string& name, WorkerMain fn) {
    worker_registry()[name] = std::move(fn);
  }
};

// ---- starting and reaping children ----

struct ChildSpec {
  std::vector<std::string> args;  // after --worker: the worker's name, then its arguments
  std::vector<std::string> env;   // NAME=VALUE, the child's whole environment
  bool inherit_env = true;        // true: this process's environment instead of env
};

struct ChildResult {
  std::string out, err;  // what it wrote to stdout and stderr
  int status = 0;        // waitpid's status
  bool hung = false;     // still running at the deadline, so killed
  bool exited_ok() const { return !hung && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

// This process's environment without the variables named in `drop`, plus `set`.
inline std::vector<std::string> environment_with(const std::vector<std::string>& drop,
                                                 const std::map<std::string, std::string>& set) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool keep = set.count(name) == 0;
    for (const auto& d : drop) keep = keep && d != name;
    if (keep) env.push_back(entry);
  }
  for (const auto& [name, value] : set) env.push_back(name + "=" + value);
  return env;
}

// Starts every child at once and waits until all have exited or the deadline passes (then
// kills the rest, failing the test). Every child is reaped before it returns.
inline std::vector<ChildResult> run_children(const std::vector<ChildSpec>& specs,
                                             milliseconds deadline_after = milliseconds(90000)) {
  const auto deadline = Clock::now() + deadline_after;
  const size_t n = specs.size();
  std::vector<ChildResult> results(n);
  std::vector<pid_t> pids(n, -1);
  std::vector<int> out_fds(n, -1), err_fds(n, -1);
  const pid_t parent = getpid();
  for (size_t i = 0; i < n; ++i) {
    // Everything the child needs is built before fork: between fork and exec the child may
    // only make async-signal-safe calls, as this process has threads.
    std::vector<std::string> all = {"/proc/self/exe", "--worker"};
    all.insert(all.end(), specs[i].args.begin(), specs[i].args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings =
        specs[i].inherit_env ? environment_with({}, {}) : specs[i].env;
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe: " << std::strerror(errno);
      break;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(120);
      dup2(out[1], 1);
      dup2(err[1], 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(121);
    }
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
      ADD_FAILURE() << "fork: " << std::strerror(errno);
      close(out[0]);
      close(err[0]);
      break;
    }
    pids[i] = pid;
    out_fds[i] = out[0];
    err_fds[i] = err[0];
  }
  // Reads every child's output until each closes both pipes, or the deadline.
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> owner;  // child, stdout?
    for (size_t i = 0; i < n; ++i) {
      if (out_fds[i] >= 0) fds.push_back({out_fds[i], POLLIN, 0}), owner.push_back({i, true});
      if (err_fds[i] >= 0) fds.push_back({err_fds[i], POLLIN, 0}), owner.push_back({i, false});
    }
    if (fds.empty()) break;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    if (poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(left, 1000))) < 0 &&
        errno != EINTR)
      break;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const auto [i, is_out] = owner[k];
      char buffer[8192];
      const ssize_t got = read(fds[k].fd, buffer, sizeof buffer);
      if (got > 0) {
        (is_out ? results[i].out : results[i].err).append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[k].fd);
        (is_out ? out_fds[i] : err_fds[i]) = -1;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (pids[i] < 0) continue;
    for (;;) {
      const pid_t r = waitpid(pids[i], &results[i].status, WNOHANG);
      if (r == pids[i] || (r < 0 && errno != EINTR)) break;
      if (Clock::now() > deadline) {
        ADD_FAILURE() << "worker process " << i << " (" << specs[i].args.at(0)
                      << ") still running at the deadline: killed";
        results[i].hung = true;
        kill(pids[i], SIGKILL);
        waitpid(pids[i], &results[i].status, 0);
        break;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    if (out_fds[i] >= 0) close(out_fds[i]);
    if (err_fds[i] >= 0) close(err_fds[i]);
  }
  return results;
}

// No child of this process is left, running or unreaped.
inline void expect_no_children() {
  int status = 0;
  const pid_t r = waitpid(-1, &status, WNOHANG);
  EXPECT_TRUE(r < 0 && errno == ECHILD)
      << "a child process was left behind (waitpid gave " << r << ")";
}

// A port nothing listens on now (bound, then closed). Another program may take it before
// the test's worker does: callers retry on a port in use.
inline int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// ---- what a worker prints ----

// A worker prints, for each run it makes: "RUN <name>", "STEPS <notation>" and, when it
// failed, "ERROR <CODE: message>" (newlines in the message written as \n).
inline std::string report_run(const std::string& name, const WorkerRun& run) {
  std::string error;
  for (char ch : run.error) error += ch == '\n' ? std::string("\\n") : std::string(1, ch);
  std::string s = "RUN " + name + "\nSTEPS " + notation(run) + "\n";
  if (!run.error.empty()) s += "ERROR " + error + "\n";
  return s;
}

// "[0,1] | [2] ; [] | [3]" back to steps of replicas of values.
inline std::vector<std::vector<std::vector<int64_t>>> parse_notation(const std::string& s) {
  std::vector<std::vector<std::vector<int64_t>>> steps;
  std::vector<std::vector<int64_t>> step;
  std::vector<int64_t> piece;
  std::string number;
  for (char ch : s) {
    if (ch == '[') {
      piece.clear();
    } else if (ch == ',' || ch == ']') {
      if (!number.empty()) piece.push_back(std::stoll(number));
      number.clear();
      if (ch == ']') step.push_back(piece);
    } else if (ch == ';') {
      steps.push_back(step);
      step.clear();
    } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
      number += ch;
    }
  }
  if (!step.empty()) steps.push_back(step);
  return steps;
}

// The runs a worker reported, by name.
inline std::map<std::string, WorkerRun> parse_report(const std::string& out) {
  std::map<std::string, WorkerRun> runs;
  WorkerRun* current = nullptr;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    start = end + 1;
    if (line.rfind("RUN ", 0) == 0) {
      current = &runs[line.substr(4)];
    } else if (current && line.rfind("STEPS ", 0) == 0) {
      current->steps = parse_notation(line.substr(6));
    } else if (current && line.rfind("ERROR ", 0) == 0) {
      for (size_t i = 6; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == 'n') {
          current->error += '\n';
          ++i;
        } else {
          current->error += line[i];
        }
      }
    }
  }
  return runs;
}

}  // namespace dinput::testing
