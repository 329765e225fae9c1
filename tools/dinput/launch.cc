#include "launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli_options.h"
#include "status.h"
#include "suggest.h"

extern char** environ;

namespace dinput_tool {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMaxProcesses = 1024;
// How long the other workers have to end on their own once one has failed (the collective's
// abort releases them at once), and then to end after SIGTERM, before SIGKILL.
constexpr auto kStopGrace = std::chrono::seconds(5);
// How long output may still arrive after every worker has exited (from a process a worker
// left behind that holds its pipe).
constexpr auto kDrainGrace = std::chrono::seconds(1);
// A worker whose lines are this far ahead of the merge is not read until the merge catches up,
// so memory stays bounded (its pipe fills and it waits).
constexpr size_t kMaxPendingBytes = 16u << 20;

struct LaunchOptions {
  int processes = 0;
  std::string rdzv;
  std::string job_id;
  std::vector<std::string> command;
};

LaunchOptions parse_launch_options(int argc, char** argv) {
  static const std::vector<std::string> kNames = {"-n", "--nproc", "--rdzv", "--job-id"};
  LaunchOptions options;
  int i = 0;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the command starts here
    std::string name = arg, value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    } else if (arg.compare(0, 2, "-n") == 0 && arg.size() > 2 && arg[2] != '-') {
      name = "-n";  // -n4
      value = arg.substr(2);
      has_value = true;
    }
    bool known = false;
    for (const std::string& k : kNames) known = known || k == name;
    if (!known) {
      throw invalid_argument("unknown option " + name + " for 'launch'" +
                             did_you_mean(name, kNames) + "; see dinput launch --help");
    }
    if (!has_value) {
      if (i + 1 >= argc) throw invalid_argument(name + " needs a value");
      value = argv[++i];
    }
    if (name == "-n" || name == "--nproc") {
      options.processes = static_cast<int>(parse_integer(name, value, 1, kMaxProcesses));
    } else if (name == "--rdzv") {
      options.rdzv = value;
    } else {
      options.job_id = value;
    }
  }
  for (; i < argc; ++i) options.command.emplace_back(argv[i]);
  if (options.processes == 0) {
    throw invalid_argument("launch needs -n W, the number of worker processes to start");
  }
  if (options.command.empty()) {
    throw invalid_argument(
        "launch needs the command every worker runs, e.g. dinput launch -n 4 -- dinput run "
        "'range(8).batch(4)'");
  }
  return options;
}

// A port of 127.0.0.1 held for the rendezvous of the job: bound, not listening, with
// SO_REUSEADDR, so that no other socket takes it between now and the moment the worker of
// rank 0 binds it (with SO_REUSEADDR too, which Linux allows beside a socket that does not
// listen) to serve the job's store.
class ReservedPort {
 public:
  ReservedPort() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw_errno("could not open a socket for the rendezvous port");
    const int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw_errno("could not reserve a rendezvous port on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
  }
  ~ReservedPort() {
    if (fd_ >= 0) close(fd_);
  }
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;
  int port() const { return port_; }

 private:
  void throw_errno(const std::string& what) {
    const int error = errno;
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    throw Failure(DINPUT_UNAVAILABLE, what + ": " + std::strerror(error));
  }

  int fd_ = -1;
  int port_ = 0;
};

// One worker process and what it has written so far.
struct Child {
  int rank = 0;
  pid_t pid = -1;
  int out = -1;  // read ends of its stdout and stderr pipes; -1 once at end of file
  int err = -1;
  std::string out_partial, err_partial;  // an incomplete last line
  std::deque<std::string> lines;         // complete stdout lines not yet merged
  size_t pending_bytes = 0;
  bool merged_all = false;  // every stdout line merged, and its stdout at end of file
  bool exited = false;
  int status = 0;  // the exit status as a shell reports it (128 + N for signal N)
  bool wrote_stderr = false;
};

void close_fd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Writes all of `text`; false when the reader has gone (EPIPE) or the write failed.
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The environment of a worker: this process's, with the variables that place it in the job
// (docs/multi-process.md, "Cluster resolvers": the explicit source) replaced.
std::vector<std::string> worker_environment(const LaunchOptions& options, int rank,
                                            const std::string& rdzv, const std::string& job_id) {
  static const char* const kSet[] = {"DINPUT_RANK",       "DINPUT_WORLD_SIZE",
                                     "DINPUT_LOCAL_RANK", "DINPUT_LOCAL_WORLD_SIZE",
                                     "DINPUT_RDZV_URL",   "DINPUT_JOB_ID"};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const char* name : kSet) {
      const size_t n = std::strlen(name);
      replaced =
          replaced || (entry.compare(0, n, name) == 0 && entry.size() > n && entry[n] == '=');
    }
    if (!replaced) env.push_back(entry);
  }
  const std::string n = std::to_string(options.processes), r = std::to_string(rank);
  env.push_back("DINPUT_RANK=" + r);
  env.push_back("DINPUT_WORLD_SIZE=" + n);
  env.push_back("DINPUT_LOCAL_RANK=" + r);
  env.push_back("DINPUT_LOCAL_WORLD_SIZE=" + n);
  env.push_back("DINPUT_RDZV_URL=" + rdzv);
  env.push_back("DINPUT_JOB_ID=" + job_id);
  return env;
}

// The program to execute: a command named `dinput` is this very executable (the same build
// as the launcher, whatever PATH holds); anything else is looked up in PATH as a shell would.
std::string program_of(const std::string& command) {
  if (command != "dinput") return command;
  std::vector<char> path(4096);
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return command;
  return std::string(path.data(), static_cast<size_t>(n));
}

// Starts one worker with its stdout and stderr on pipes the launcher reads.
void start(Child* child, const LaunchOptions& options, const std::string& rdzv,
           const std::string& job_id) {
  const std::vector<std::string> env = worker_environment(options, child->rank, rdzv, job_id);
  const std::string program = program_of(options.command[0]);
  // Everything the child needs is built before fork: the child only calls exec.
  std::vector<char*> argv, envp;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (size_t i = 1; i < options.command.size(); ++i) {
    argv.push_back(const_cast<char*>(options.command[i].c_str()));
  }
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string exec_failed =
      "NOT_FOUND: dinput launch: could not run '" + options.command[0] + "': ";

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw Failure(DINPUT_UNAVAILABLE, "could not create a pipe");
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    throw Failure(DINPUT_UNAVAILABLE, "could not create a pipe");
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // A worker must not outlive the launcher, even one killed with SIGKILL.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    signal(SIGPIPE, SIG_DFL);  // the launcher ignores it; the worker gets the usual default
    execvpe(argv[0], argv.data(), envp.data());
    const std::string message = exec_failed + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, message.data(), message.size());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    throw Failure(DINPUT_UNAVAILABLE,
                  std::string("could not start a worker process: ") + std::strerror(errno));
  }
  child->pid = pid;
  child->out = out[0];
  child->err = err[0];
}

volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int signal) { g_stop_signal = signal; }

// The launcher itself: the workers, the merge of their stdout in worker order, their stderr
// lines (each distinct line once), and stopping them all when one fails.
class Launch {
 public:
  Launch(const LaunchOptions& options) : options_(options), children_(options.processes) {}

  int run() {
    std::unique_ptr<ReservedPort> port;
    std::string rdzv = options_.rdzv;
    if (rdzv.empty()) {
      port = std::make_unique<ReservedPort>();
      rdzv = "tcp://127.0.0.1:" + std::to_string(port->port());
    }
    const std::string job_id = options_.job_id.empty()
                                   ? "launch-" + std::to_string(getpid()) + "-" +
                                         std::to_string(Clock::now().time_since_epoch().count())
                                   : options_.job_id;
    // Before any worker starts, so that a stop request never finds a worker it is not passed
    // to (exec resets the handler in the workers).
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    for (int r = 0; r < options_.processes; ++r) {
      children_[static_cast<size_t>(r)].rank = r;
      try {
        start(&children_[static_cast<size_t>(r)], options_, rdzv, job_id);
      } catch (const Failure&) {
        stop_all(SIGKILL);
        wait_all();
        throw;
      }
    }
    loop();
    return exit_status();
  }

 private:
  void loop() {
    for (;;) {
      if (g_stop_signal != 0 && !forwarded_signal_) {
        forwarded_signal_ = true;
        stop_all(SIGTERM);
        begin_stopping();
      }
      std::vector<pollfd> fds;
      std::vector<std::pair<Child*, bool>> owners;  // (child, is stdout)
      for (Child& c : children_) {
        if (c.out >= 0 && (c.pending_bytes < kMaxPendingBytes || reader_gone_)) {
          fds.push_back(pollfd{c.out, POLLIN, 0});
          owners.emplace_back(&c, true);
        }
        if (c.err >= 0) {
          fds.push_back(pollfd{c.err, POLLIN, 0});
          owners.emplace_back(&c, false);
        }
      }
      const bool all_exited = reap();
      if (all_exited && fds.empty()) break;
      if (all_exited) {
        if (drain_deadline_ == Clock::time_point{}) drain_deadline_ = Clock::now() + kDrainGrace;
        if (Clock::now() >= drain_deadline_) {
          for (Child& c : children_) {
            close_fd(&c.out);
            close_fd(&c.err);
          }
          merge();
          break;
        }
      }
      escalate();
      const int ready = poll(fds.data(), fds.size(), 50);
      if (ready < 0 && errno != EINTR) break;
      for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        Child& c = *owners[i].first;
        if (owners[i].second) {
          read_stdout(&c);
        } else {
          read_stderr(&c);
        }
      }
      merge();
    }
    merge();
  }

  void read_stdout(Child* c) {
    char buffer[65536];
    const ssize_t n = read(c->out, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) {
      if (!c->out_partial.empty()) push_line(c, std::move(c->out_partial));
      c->out_partial.clear();
      close_fd(&c->out);
      return;
    }
    if (reader_gone_) return;  // nobody reads the merge any more: drain only
    c->out_partial.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = c->out_partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      push_line(c, c->out_partial.substr(start, nl - start));
    }
    c->out_partial.erase(0, start);
  }

  void push_line(Child* c, std::string line) {
    c->pending_bytes += line.size();
    c->lines.push_back(std::move(line));
  }

  void read_stderr(Child* c) {
    char buffer[8192];
    const ssize_t n = read(c->err, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) {
      if (!c->err_partial.empty()) error_line(c, c->err_partial);
      c->err_partial.clear();
      close_fd(&c->err);
      return;
    }
    c->err_partial.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = c->err_partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      error_line(c, c->err_partial.substr(start, nl - start));
    }
    c->err_partial.erase(0, start);
  }

  // Workers that fail together usually say the same thing (an error in one worker's pipeline
  // reaches every worker with its message): such a line is shown once.
  void error_line(Child* c, const std::string& line) {
    c->wrote_stderr = true;
    if (!error_lines_.insert(line).second) return;
    write_all(STDERR_FILENO, line + "\n");
  }

  // Writes the stdout lines that are due: line k of every worker in worker order before line
  // k + 1 of any, a worker whose output has ended being passed over; the `run --stats` lines
  // become one line, as `dinput run --workers W` prints them.
  void merge() {
    std::string out;
    for (;;) {
      Child* c = next_unmerged();
      if (c == nullptr) {
        if (!stats_written_ && !stats_.empty()) {
          stats_written_ = true;
          std::string line = "{\"stats\":[";
          for (size_t i = 0; i < stats_.size(); ++i) line += (i ? "," : "") + stats_[i];
          out += line + "]}\n";
        }
        break;
      }
      if (!c->lines.empty()) {
        std::string line = std::move(c->lines.front());
        c->lines.pop_front();
        c->pending_bytes -= line.size();
        static const std::string kStats = "{\"stats\":[";
        if (line.compare(0, kStats.size(), kStats) == 0 && line.size() >= kStats.size() + 2 &&
            line.compare(line.size() - 2, 2, "]}") == 0) {
          stats_.push_back(line.substr(kStats.size(), line.size() - kStats.size() - 2));
        } else {
          out += line;
          out.push_back('\n');
        }
        cursor_ = (cursor_ + 1) % children_.size();
        continue;
      }
      if (c->out < 0) {  // ended, and every line merged
        c->merged_all = true;
        cursor_ = (cursor_ + 1) % children_.size();
        continue;
      }
      break;  // its next line has not come yet
    }
    if (out.empty() || reader_gone_) return;
    if (!write_all(STDOUT_FILENO, out)) {
      // `dinput launch ... | head -1`: the reader has what it wanted; the workers are stopped.
      reader_gone_ = true;
      stop_all(SIGTERM);
      begin_stopping();
    }
  }

  // The worker whose line is due, from the cursor on; null when every output has ended.
  Child* next_unmerged() {
    for (size_t i = 0; i < children_.size(); ++i) {
      Child& c = children_[cursor_];
      if (!c.merged_all) return &c;
      cursor_ = (cursor_ + 1) % children_.size();
    }
    return nullptr;
  }

  // Collects the workers that have exited; true when all have.
  bool reap() {
    bool all = true;
    for (Child& c : children_) {
      if (c.exited) continue;
      int status = 0;
      const pid_t pid = waitpid(c.pid, &status, WNOHANG);
      if (pid == 0 || (pid < 0 && errno == EINTR)) {
        all = false;
        continue;
      }
      c.exited = true;
      c.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      if (WIFSIGNALED(status)) signaled_[c.rank] = WTERMSIG(status);
      // A worker stopped because the reader left or the launcher was told to stop has not
      // failed on its own.
      if (c.status != 0 && first_failure_ == nullptr && !reader_gone_ && !forwarded_signal_) {
        first_failure_ = &c;
        begin_stopping();
      }
    }
    return all;
  }

  void begin_stopping() {
    if (stop_deadline_ == Clock::time_point{}) stop_deadline_ = Clock::now() + kStopGrace;
  }

  // Once a worker has failed, the others have kStopGrace to end on their own, then SIGTERM,
  // then SIGKILL: no worker outlives the launch.
  void escalate() {
    if (stop_deadline_ == Clock::time_point{} || Clock::now() < stop_deadline_) return;
    stop_all(sent_term_ ? SIGKILL : SIGTERM);
    sent_term_ = true;
    stop_deadline_ = Clock::now() + kStopGrace;
  }

  void stop_all(int signal) {
    for (Child& c : children_) {
      if (c.pid > 0 && !c.exited) kill(c.pid, signal);
    }
  }

  void wait_all() {
    for (Child& c : children_) {
      if (c.pid > 0 && !c.exited) waitpid(c.pid, nullptr, 0);
      c.exited = true;
      close_fd(&c.out);
      close_fd(&c.err);
    }
  }

  int exit_status() {
    if (reader_gone_) return 0;
    if (g_stop_signal != 0 && first_failure_ == nullptr) return 128 + g_stop_signal;
    if (first_failure_ == nullptr) return 0;
    const Child& c = *first_failure_;
    // A worker that died without a word (a signal, or a silent exit) is reported here, so that
    // every failure of a launch has its line.
    if (auto it = signaled_.find(c.rank); it != signaled_.end()) {
      write_all(STDERR_FILENO, "UNAVAILABLE: dinput launch: worker " + std::to_string(c.rank) +
                                   " (pid " + std::to_string(c.pid) + ") was killed by signal " +
                                   std::to_string(it->second) + " (" + strsignal(it->second) +
                                   ")\n");
    } else if (!c.wrote_stderr) {
      write_all(STDERR_FILENO, "UNKNOWN: dinput launch: worker " + std::to_string(c.rank) +
                                   " exited with status " + std::to_string(c.status) + "\n");
    }
    return c.status;
  }

  const LaunchOptions& options_;
  std::vector<Child> children_;
  size_t cursor_ = 0;
  std::vector<std::string> stats_;
  bool stats_written_ = false;
  std::set<std::string> error_lines_;
  std::map<int, int> signaled_;  // rank -> the signal that ended it
  Child* first_failure_ = nullptr;
  bool reader_gone_ = false;
  bool forwarded_signal_ = false;
  bool sent_term_ = false;
  Clock::time_point stop_deadline_{};
  Clock::time_point drain_deadline_{};
};

}  // namespace

bool launch_asks_for_help(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return true;
    if (arg == "--" || arg.empty() || arg[0] != '-') return false;  // the command's own
    if (arg == "-n" || arg == "--nproc" || arg == "--rdzv" || arg == "--job-id") ++i;  // a value
  }
  return false;
}

int run_launch(int argc, char** argv) {
  const LaunchOptions options = parse_launch_options(argc, argv);
  Launch launch(options);
  return launch.run();
}

}  // namespace dinput_tool
