#include "collective/tcp_store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/thread.h"

namespace dinput {

namespace {

using Clock = std::chrono::steady_clock;

// docs/multi-process.md, "Rendezvous stores", describes these numbers.
constexpr uint32_t kMagic = 0x444e5253;  // "DNRS"
constexpr uint32_t kVersion = 1;
constexpr uint32_t kMaxFrame = 64u << 20;  // a rendezvous value is a few bytes to a few KiB
enum Op : uint8_t { kHello = 0, kSet = 1, kGet = 2, kAdd = 3, kCheck = 4 };
enum Reply : uint8_t { kOk = 0, kTimedOut = 1, kFailed = 2 };
// Timeouts longer than this (about 35 years) mean "no limit"; it keeps deadlines finite.
constexpr int64_t kMaxTimeoutMs = int64_t{1} << 40;

std::string errno_text(int err) { return std::strerror(err); }

// ---- encoding ----

class Writer {
 public:
  Writer() { out_.resize(4); }  // room for the frame length
  Writer& u8(uint8_t v) {
    out_.push_back(static_cast<char>(v));
    return *this;
  }
  Writer& u32(uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out_.push_back(static_cast<char>((v >> s) & 0xff));
    return *this;
  }
  Writer& i64(int64_t v) {
    uint64_t u = static_cast<uint64_t>(v);
    for (int s = 56; s >= 0; s -= 8) out_.push_back(static_cast<char>((u >> s) & 0xff));
    return *this;
  }
  Writer& str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    out_ += s;
    return *this;
  }
  Writer& strs(const std::vector<std::string>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (const auto& s : v) str(s);
    return *this;
  }
  // The frame: its body's length, then the body.
  std::string finish() {
    uint32_t n = static_cast<uint32_t>(out_.size() - 4);
    for (int i = 0; i < 4; ++i) out_[i] = static_cast<char>((n >> (24 - 8 * i)) & 0xff);
    return std::move(out_);
  }

 private:
  std::string out_;
};

// Reads a frame body; `ok()` turns false on the first read past its end (a malformed frame).
class Reader {
 public:
  explicit Reader(const std::string& body) : body_(body) {}
  bool ok() const { return ok_; }
  bool done() const { return pos_ == body_.size(); }
  uint8_t u8() { return need(1) ? static_cast<uint8_t>(body_[pos_++]) : 0; }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(body_[pos_++]);
    return v;
  }
  int64_t i64() {
    if (!need(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(body_[pos_++]);
    return static_cast<int64_t>(v);
  }
  std::string str() {
    uint32_t n = u32();
    if (!need(n)) return {};
    std::string s = body_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::vector<std::string> strs() {
    uint32_t n = u32();
    std::vector<std::string> v;
    // Each string takes at least 4 bytes: a count larger than what is left is malformed.
    if (!ok_ || n > (body_.size() - pos_) / 4) {
      ok_ = false;
      return v;
    }
    v.reserve(n);
    for (uint32_t i = 0; i < n && ok_; ++i) v.push_back(str());
    return v;
  }

 private:
  bool need(size_t n) {
    if (!ok_ || body_.size() - pos_ < n) ok_ = false;
    return ok_;
  }
  const std::string& body_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Parses the length prefix of the frame at the start of `buf`: false while incomplete.
bool frame_length(const std::string& buf, uint32_t* n) {
  if (buf.size() < 4) return false;
  *n = 0;
  for (int i = 0; i < 4; ++i) *n = (*n << 8) | static_cast<uint8_t>(buf[i]);
  return true;
}

bool parse_int64(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

std::string sockaddr_host(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof(buf));
  else if (ss.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof(buf));
  return buf;
}

// A number in [0, n], different in each process and thread.
int64_t jitter(int64_t n) {
  thread_local std::minstd_rand rng(
      static_cast<unsigned>(getpid() ^ std::hash<std::thread::id>()(std::this_thread::get_id()) ^
                            static_cast<unsigned>(Clock::now().time_since_epoch().count())));
  return n <= 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 1));
}

std::string host_port(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? str_cat("[", host, "]:", port)
                                             : str_cat(host, ":", port);
}

}  // namespace

// ---- server ----

struct TcpStoreServer::Impl {
  std::string url;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  int port = 0;
  std::string bound_host;
  std::string local_host;
  std::atomic<uint64_t> served{0};
  Thread thread;

  struct Conn {
    std::string in;
    std::string out;
    bool hello = false;
    bool writing = false;  // EPOLLOUT registered
    // The parked get, if any (one per connection: a client waits for its reply).
    bool parked = false;
    uint64_t serial = 0;  // tells a parked get from an earlier one in waiting_on
    std::vector<std::string> keys;
    size_t missing = 0;
    // Its entry in `deadlines`, erased when it is answered before its timeout.
    std::multimap<Clock::time_point, std::pair<int, uint64_t>>::iterator deadline_it;
  };
  std::multimap<Clock::time_point, std::pair<int, uint64_t>> deadlines;
  std::unordered_map<int, Conn> conns;
  std::unordered_map<std::string, std::string> values;
  // For each key not yet set, the parked gets (connection, serial) waiting on it.
  std::unordered_map<std::string, std::vector<std::pair<int, uint64_t>>> waiting_on;
  uint64_t next_serial = 1;
  std::vector<int> runnable;  // connections whose parked get was answered
  bool accept_paused = false;
  Clock::time_point accept_resume;

  ~Impl() {
    for (auto& [fd, conn] : conns) close(fd);
    if (listen_fd >= 0) close(listen_fd);
    if (epoll_fd >= 0) close(epoll_fd);
    if (wake_fd >= 0) close(wake_fd);
  }

  void run() {
    std::vector<epoll_event> events(64);
    for (;;) {
      int wait_ms = -1;
      if (!deadlines.empty()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadlines.begin()->first -
                                                                          Clock::now())
                        .count();
        wait_ms = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left + 1, 1 << 30)));
      }
      if (accept_paused) {
        if (Clock::now() >= accept_resume) {
          listen_for(EPOLLIN);
          accept_paused = false;
        } else {
          wait_ms = wait_ms < 0 ? 50 : std::min(wait_ms, 50);
        }
      }
      int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), wait_ms);
      if (n < 0 && errno != EINTR) return;
      for (int i = 0; i < n; ++i) {
        int fd = events[i].data.fd;
        if (fd == wake_fd) return;
        if (fd == listen_fd) {
          accept_all();
          continue;
        }
        if (!conns.count(fd)) continue;
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
          if (!read_from(fd)) {
            drop(fd);
            continue;
          }
          serve(fd);
        }
        if (conns.count(fd) && (events[i].events & EPOLLOUT)) flush(fd);
      }
      expire();
      while (!runnable.empty()) {
        int fd = runnable.back();
        runnable.pop_back();
        if (conns.count(fd)) serve(fd);
      }
    }
  }

  void accept_all() {
    for (;;) {
      int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: the listening socket stays readable, so stop watching it for
          // a moment instead of spinning; waiting clients stay in the accept queue.
          listen_for(0);
          accept_paused = true;
          accept_resume = Clock::now() + std::chrono::milliseconds(50);
        }
        return;  // EAGAIN, or a connection reset before we took it
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        continue;
      }
      conns[fd];
    }
  }

  void listen_for(uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = listen_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
  }

  // Reads what the socket has; false when the peer closed or failed.
  bool read_from(int fd) {
    Conn& c = conns[fd];
    char buf[65536];
    for (;;) {
      ssize_t r = recv(fd, buf, sizeof(buf), 0);
      if (r > 0) {
        c.in.append(buf, static_cast<size_t>(r));
        continue;
      }
      if (r == 0) return false;
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
  }

  void drop(int fd) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    auto c = conns.find(fd);
    if (c != conns.end() && c->second.parked) deadlines.erase(c->second.deadline_it);
    conns.erase(fd);  // entries of its parked get in waiting_on go stale (serials tell)
  }

  // Handles every complete request buffered on `fd`, stopping at a get that must wait.
  void serve(int fd) {
    for (;;) {
      Conn& c = conns[fd];
      if (c.parked) return;
      uint32_t n = 0;
      if (!frame_length(c.in, &n)) return;
      if (n > kMaxFrame || n == 0) return drop(fd);
      if (c.in.size() < 4 + size_t{n}) return;
      std::string body = c.in.substr(4, n);
      c.in.erase(0, 4 + size_t{n});
      if (!handle(fd, body)) return drop(fd);
      if (!conns.count(fd)) return;
    }
  }

  // One request; false for a malformed one (the connection is dropped: its client is not
  // speaking this protocol).
  bool handle(int fd, const std::string& body) {
    Conn& c = conns[fd];
    Reader r(body);
    uint8_t op = r.u8();
    if (!c.hello && op != kHello) return false;
    switch (op) {
      case kHello: {
        uint32_t magic = r.u32(), version = r.u32();
        if (!r.ok() || !r.done() || magic != kMagic) return false;
        c.hello = true;
        if (version != kVersion) {
          send_reply(fd, Writer().u8(kFailed).str(str_cat("protocol version ", version,
                                                          " not served (this server speaks ",
                                                          kVersion, ")")));
          return true;
        }
        send_reply(fd, Writer().u8(kOk).u32(kMagic).u32(kVersion));
        return true;
      }
      case kSet: {
        std::string key = r.str(), value = r.str();
        if (!r.ok() || !r.done()) return false;
        put(key, std::move(value));
        send_reply(fd, Writer().u8(kOk));
        return true;
      }
      case kAdd: {
        std::string key = r.str();
        int64_t delta = r.i64();
        if (!r.ok() || !r.done()) return false;
        int64_t now = 0;
        auto it = values.find(key);
        if (it != values.end() && !parse_int64(it->second, &now)) {
          send_reply(fd, Writer().u8(kFailed).str(
                             str_cat("add: the value of key '", key, "' is not an integer")));
          return true;
        }
        now += delta;
        put(key, std::to_string(now));
        send_reply(fd, Writer().u8(kOk).i64(now));
        return true;
      }
      case kCheck: {
        std::vector<std::string> keys = r.strs();
        if (!r.ok() || !r.done()) return false;
        bool all = true;
        for (const auto& k : keys) all = all && values.count(k);
        send_reply(fd, Writer().u8(kOk).u8(all ? 1 : 0));
        return true;
      }
      case kGet: {
        int64_t timeout_ms = r.i64();
        std::vector<std::string> keys = r.strs();
        if (!r.ok() || !r.done()) return false;
        size_t missing = 0;
        for (const auto& k : keys) missing += values.count(k) ? 0 : 1;
        if (missing == 0) {
          answer_get(fd, keys);
          return true;
        }
        if (timeout_ms <= 0) {
          reply_timeout(fd, keys);
          return true;
        }
        c.parked = true;
        c.serial = next_serial++;
        c.missing = missing;
        auto deadline =
            Clock::now() + std::chrono::milliseconds(std::min(timeout_ms, kMaxTimeoutMs));
        for (const auto& k : keys)
          if (!values.count(k)) waiting_on[k].emplace_back(fd, c.serial);
        c.keys = std::move(keys);
        c.deadline_it = deadlines.emplace(deadline, std::make_pair(fd, c.serial));
        return true;
      }
      default:
        return false;
    }
  }

  // Stores a value and answers the parked gets it completes.
  void put(const std::string& key, std::string value) {
    bool fresh = values.find(key) == values.end();
    values[key] = std::move(value);
    if (!fresh) return;
    auto it = waiting_on.find(key);
    if (it == waiting_on.end()) return;
    auto waiters = std::move(it->second);
    waiting_on.erase(it);
    for (auto [fd, serial] : waiters) {
      auto c = conns.find(fd);
      if (c == conns.end() || !c->second.parked || c->second.serial != serial) continue;
      // A key listed twice in one get is waited for once per listing.
      if (--c->second.missing > 0) continue;
      // Taken out first: answering may drop the connection (a failed send).
      std::vector<std::string> keys = std::move(c->second.keys);
      c->second.parked = false;
      deadlines.erase(c->second.deadline_it);
      runnable.push_back(fd);
      answer_get(fd, keys);
    }
  }

  void answer_get(int fd, const std::vector<std::string>& keys) {
    Writer w;
    w.u8(kOk).u32(static_cast<uint32_t>(keys.size()));
    for (const auto& k : keys) w.str(values.at(k));
    send_reply(fd, w);
  }

  void reply_timeout(int fd, const std::vector<std::string>& keys) {
    std::vector<std::string> missing;
    for (const auto& k : keys)
      if (!values.count(k)) missing.push_back(k);
    send_reply(fd, Writer().u8(kTimedOut).strs(missing));
  }

  // Answers the parked gets whose deadline has passed.
  void expire() {
    auto now = Clock::now();
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
      auto [fd, serial] = deadlines.begin()->second;
      deadlines.erase(deadlines.begin());
      auto c = conns.find(fd);
      if (c == conns.end() || !c->second.parked || c->second.serial != serial) continue;
      std::vector<std::string> keys = std::move(c->second.keys);
      c->second.parked = false;
      runnable.push_back(fd);
      reply_timeout(fd, keys);
    }
  }

  void send_reply(int fd, Writer& w) {
    served.fetch_add(1, std::memory_order_relaxed);
    conns[fd].out += w.finish();
    flush(fd);
  }
  void send_reply(int fd, Writer&& w) { send_reply(fd, w); }

  void flush(int fd) {
    Conn& c = conns[fd];
    while (!c.out.empty()) {
      ssize_t w = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (w > 0) {
        c.out.erase(0, static_cast<size_t>(w));
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      return drop(fd);
    }
    bool want = !c.out.empty();
    if (want != c.writing) {
      epoll_event ev{};
      ev.events = want ? static_cast<uint32_t>(EPOLLIN | EPOLLOUT) : static_cast<uint32_t>(EPOLLIN);
      ev.data.fd = fd;
      epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &ev);
      c.writing = want;
    }
  }
};

TcpStoreServer::TcpStoreServer(const std::string& bind_host, int port, const std::string& url)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.url = url;
  DINPUT_CHECK_ARG(port >= 0 && port <= 65535, "rendezvous store ", url, ": port ", port,
                   " is out of range [0, 65535]");
  // Every interface: IPv6 "::" accepting IPv4 too, or "0.0.0.0" where IPv6 is off.
  std::vector<std::string> candidates;
  if (bind_host.empty())
    candidates = {"::", "0.0.0.0"};
  else
    candidates = {bind_host};
  int last_err = 0;
  std::string tried;
  for (const auto& host : candidates) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    std::string service = std::to_string(port);
    int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
    if (rc != 0) {
      raise(Code::kInvalidArgument, "rendezvous store ", url, ": cannot resolve the address '",
            host, "' to listen on: ", gai_strerror(rc));
    }
    tried = host_port(host, port);
    for (addrinfo* ai = res; ai && s.listen_fd < 0; ai = ai->ai_next) {
      int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        last_err = errno;
        continue;
      }
      int one = 1, zero = 0;
      // Lets a new job take the port of one that just ended (connections in TIME_WAIT); on
      // Linux it does not let two servers listen on one port.
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (ai->ai_family == AF_INET6 && bind_host.empty())
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
      if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        last_err = errno;
        close(fd);
        if (last_err == EADDRINUSE) break;  // no other address family will help
        continue;
      }
      s.listen_fd = fd;
    }
    freeaddrinfo(res);
    if (s.listen_fd >= 0 || last_err == EADDRINUSE) break;
  }
  if (s.listen_fd < 0) {
    raise(Code::kUnavailable, "rendezvous store ", url, ": cannot listen on ", tried, ": ",
          errno_text(last_err),
          last_err == EADDRINUSE ? " (another process, or another job, serves that port)" : "");
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&ss), &len);
  s.port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(ss).sin6_port
                                          : reinterpret_cast<sockaddr_in&>(ss).sin_port);
  s.bound_host = sockaddr_host(ss);
  if (s.bound_host == "::" || s.bound_host == "0.0.0.0")
    s.local_host = "127.0.0.1";
  else
    s.local_host = s.bound_host;

  s.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  s.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (s.epoll_fd < 0 || s.wake_fd < 0)
    raise(Code::kUnavailable, "rendezvous store ", url, ": ", errno_text(errno));
  for (int fd : {s.listen_fd, s.wake_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }
  s.thread = Thread([&s] { s.run(); });
}

TcpStoreServer::~TcpStoreServer() {
  uint64_t one = 1;
  ssize_t ignored = write(impl_->wake_fd, &one, sizeof(one));
  (void)ignored;
  if (impl_->thread.joinable()) impl_->thread.join();
  // ~Impl closes the connections: clients waiting on a get see the end of the stream.
}

int TcpStoreServer::port() const { return impl_->port; }
std::string TcpStoreServer::bound_host() const { return impl_->bound_host; }
std::string TcpStoreServer::local_host() const { return impl_->local_host; }
uint64_t TcpStoreServer::requests_served() const {
  return impl_->served.load(std::memory_order_relaxed);
}

// ---- client ----

namespace {

class TcpStore final : public Store {
 public:
  TcpStore(std::string host, int port, std::chrono::milliseconds connect_timeout,
           std::shared_ptr<TcpStoreServer> server, std::string url)
      : server_(std::move(server)),
        host_(std::move(host)),
        port_(port),
        url_(url.empty() ? "tcp://" + host_port(host_, port_) : std::move(url)),
        connect_timeout_(connect_timeout) {
    // The first connection waits for the server as long as allowed (rank 0 may start late);
    // it is kept for the first operation.
    idle_.push_back(connect(connect_timeout_));
    reached_ = true;
  }
  ~TcpStore() override {
    for (int fd : idle_) close(fd);
  }

  void set(const std::string& key, const std::string& value) override {
    std::string reply = call(Writer().u8(kSet).str(key).str(value).finish(), io_timeout());
    expect_ok(reply, "set of key '" + key + "'");
  }

  std::vector<std::string> get(const std::vector<std::string>& keys,
                               std::chrono::milliseconds timeout) override {
    int64_t ms = std::max<int64_t>(0, std::min<int64_t>(timeout.count(), kMaxTimeoutMs));
    // The server answers at the deadline; the grace covers a slow network, after which the
    // server is taken for gone.
    std::string reply = call(Writer().u8(kGet).i64(ms).strs(keys).finish(),
                             std::chrono::milliseconds(ms) + io_timeout());
    Reader r(reply);
    uint8_t status = r.u8();
    if (status == kTimedOut) {
      std::vector<std::string> missing = r.strs();
      std::string names;
      for (const auto& k : missing) names += (names.empty() ? "" : ", ") + k;
      raise(Code::kDeadlineExceeded, "rendezvous store ", url_, ": keys not set within ",
            timeout.count(), " ms: ", names);
    }
    expect_ok(reply, "get");
    std::vector<std::string> values = r.strs();
    if (!r.ok() || values.size() != keys.size())
      raise(Code::kUnavailable, "rendezvous store ", url_, ": malformed reply to a get");
    return values;
  }

  int64_t add(const std::string& key, int64_t delta) override {
    std::string reply = call(Writer().u8(kAdd).str(key).i64(delta).finish(), io_timeout());
    expect_ok(reply, "add to key '" + key + "'");
    Reader r(reply);
    r.u8();
    int64_t v = r.i64();
    if (!r.ok()) raise(Code::kUnavailable, "rendezvous store ", url_, ": malformed reply");
    return v;
  }

  bool check(const std::vector<std::string>& keys) override {
    std::string reply = call(Writer().u8(kCheck).strs(keys).finish(), io_timeout());
    expect_ok(reply, "check");
    Reader r(reply);
    r.u8();
    uint8_t all = r.u8();
    if (!r.ok()) raise(Code::kUnavailable, "rendezvous store ", url_, ": malformed reply");
    return all != 0;
  }

 private:
  // How long a request that does not wait may take before the server is taken for gone.
  std::chrono::milliseconds io_timeout() const {
    return std::max(connect_timeout_, std::chrono::milliseconds(1000));
  }

  void expect_ok(const std::string& reply, const std::string& what) {
    Reader r(reply);
    uint8_t status = r.u8();
    if (status == kOk && r.ok()) return;
    if (status == kFailed) {
      std::string message = r.str();
      raise(Code::kFailedPrecondition, "rendezvous store ", url_, ": ", what, ": ", message);
    }
    raise(Code::kUnavailable, "rendezvous store ", url_, ": malformed reply to a ", what);
  }

  // Sends one request on a connection of its own and returns the reply body.
  std::string call(const std::string& frame, std::chrono::milliseconds timeout) {
    int fd = -1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        fd = idle_.back();
        idle_.pop_back();
      }
    }
    if (fd < 0) {
      // The server was reached before: a refused connection now means it is gone, so only
      // a short retry covers a momentarily full accept queue.
      fd = connect(std::min(connect_timeout_, std::chrono::milliseconds(5000)));
    }
    std::string reply;
    std::string error = exchange(fd, frame, timeout, &reply);
    if (!error.empty()) {
      close(fd);
      raise(Code::kUnavailable, "rendezvous store ", url_, ": ", error,
            " (the store is served by the worker of rank 0: has it exited or failed?)");
    }
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(fd);
    return reply;
  }

  // Writes `frame`, reads one reply frame into `reply`; an error text, empty on success.
  static std::string exchange(int fd, const std::string& frame, std::chrono::milliseconds timeout,
                              std::string* reply) {
    auto deadline = Clock::now() + timeout;
    size_t sent = 0;
    while (sent < frame.size()) {
      ssize_t w = send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
      if (w > 0) {
        sent += static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        std::string e = wait_fd(fd, POLLOUT, deadline);
        if (!e.empty()) return e;
        continue;
      }
      return "cannot send: " + errno_text(errno);
    }
    std::string in;
    uint32_t n = 0;
    for (;;) {
      if (frame_length(in, &n)) {
        if (n > kMaxFrame) return "malformed reply (frame too long)";
        if (in.size() >= 4 + size_t{n}) break;
      }
      char buf[65536];
      ssize_t r = recv(fd, buf, sizeof(buf), 0);
      if (r > 0) {
        in.append(buf, static_cast<size_t>(r));
        continue;
      }
      if (r == 0) return "the server closed the connection";
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        std::string e = wait_fd(fd, POLLIN, deadline);
        if (!e.empty()) return e;
        continue;
      }
      return "connection lost: " + errno_text(errno);
    }
    if (in.size() != 4 + size_t{n}) return "malformed reply (unexpected bytes)";
    *reply = in.substr(4);
    return {};
  }

  static std::string wait_fd(int fd, short events, Clock::time_point deadline) {
    for (;;) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return "no answer from the server in time";
      pollfd p{fd, events, 0};
      int rc = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
      if (rc > 0) return {};
      if (rc < 0 && errno != EINTR) return "poll: " + errno_text(errno);
    }
  }

  // A connected socket that has said hello, retrying with a growing pause for `patience`.
  int connect(std::chrono::milliseconds patience) {
    auto start = Clock::now();
    auto deadline = start + patience;
    auto pause = std::chrono::milliseconds(10);
    std::string last;
    for (;;) {
      bool fatal = false;
      int fd = try_connect(deadline, &last, &fatal);
      if (fd >= 0) return fd;
      auto now = Clock::now();
      if (fatal || now >= deadline) break;
      // A random part of the pause keeps thousands of workers that started together from
      // knocking in step; the last try comes at the deadline.
      auto sleep = pause / 2 + std::chrono::milliseconds(jitter(pause.count() / 2));
      std::this_thread::sleep_for(std::min<Clock::duration>(sleep, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    }
    auto tried =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    raise(Code::kUnavailable, "rendezvous store ", url_, ": cannot connect (tried for ", tried,
          " ms): ", last,
          reached_ ? "" : " (is the worker of rank 0 running, and is the address right?)");
  }

  int try_connect(Clock::time_point deadline, std::string* error, bool* fatal) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    std::string service = std::to_string(port_);
    int rc = getaddrinfo(host_.c_str(), service.c_str(), &hints, &res);
    if (rc != 0) {
      // Name services of clusters may learn a host's name late: keep trying.
      *error = str_cat("cannot resolve '", host_, "': ", gai_strerror(rc));
      return -1;
    }
    int fd = -1;
    for (addrinfo* ai = res; ai && fd < 0; ai = ai->ai_next) {
      fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        *error = "socket: " + errno_text(errno);
        continue;
      }
      int err = 0;
      if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
          std::string e = wait_fd(fd, POLLOUT, deadline);
          socklen_t len = sizeof(err);
          err = 0;
          if (!e.empty())
            err = ETIMEDOUT;
          else
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        }
      }
      if (err != 0) {
        *error = errno_text(err);
        // Refused after the store was reached: its server is gone, no retry will find it.
        if (err == ECONNREFUSED && reached_) *fatal = true;
        close(fd);
        fd = -1;
      }
    }
    freeaddrinfo(res);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    // A machine of rank 0 that loses power sends nothing: keepalive probes find it gone in
    // about 25 s even while a get waits much longer.
    int idle = 10, interval = 5, count = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
    std::string reply;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    std::string e = exchange(fd, Writer().u8(kHello).u32(kMagic).u32(kVersion).finish(),
                             std::max(left, std::chrono::milliseconds(1000)), &reply);
    Reader r(reply);
    uint8_t status = r.u8();
    if (e.empty() && status == kOk && r.u32() == kMagic && r.ok()) return fd;
    close(fd);
    *fatal = true;
    if (e.empty() && status == kFailed) {
      *error = r.str();
    } else {
      *error = "the process listening there is not a dinput rendezvous store" +
               (e.empty() ? std::string() : " (" + e + ")");
    }
    return -1;
  }

  std::shared_ptr<TcpStoreServer> server_;  // destroyed last: connections close first
  std::string host_;
  int port_;
  std::string url_;
  std::chrono::milliseconds connect_timeout_;
  std::mutex mu_;
  std::vector<int> idle_;
  bool reached_ = false;
};

}  // namespace

std::shared_ptr<Store> make_tcp_store(const std::string& host, int port,
                                      std::chrono::milliseconds connect_timeout,
                                      std::shared_ptr<TcpStoreServer> server,
                                      const std::string& url) {
  return std::make_shared<TcpStore>(host, port, connect_timeout, std::move(server), url);
}

}  // namespace dinput
