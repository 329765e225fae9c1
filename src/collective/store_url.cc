#include "collective/store_url.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <utility>

#include "collective/file_store.h"
#include "collective/redis_store.h"
#include "collective/tcp_store.h"
#include "core/status.h"

namespace dinput {

namespace {

[[noreturn]] void bad_url(const std::string& url, const std::string& why) {
  raise(Code::kInvalidArgument, "rendezvous URL '", url, "': ", why,
        " (expected tcp://HOST:PORT, file:///DIR or redis://HOST:PORT[/DB])");
}

// HOST:PORT of a tcp:// or redis:// URL, IPv6 literals in brackets.
void parse_host_port(const std::string& url, std::string rest, StoreUrl* out) {
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find_first_of("/?#@") != std::string::npos)
    bad_url(url, "only HOST:PORT may follow the scheme (no path, query or user name)");
  std::string port;
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) bad_url(url, "an IPv6 address misses its ']'");
    out->host = rest.substr(1, close - 1);
    std::string after = rest.substr(close + 1);
    if (after.empty()) bad_url(url, "missing port");
    if (after[0] != ':') bad_url(url, "expected ':' and a port after the address");
    port = after.substr(1);
  } else {
    size_t colon = rest.rfind(':');
    if (colon == std::string::npos) bad_url(url, "missing port");
    out->host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (out->host.find(':') != std::string::npos)
      bad_url(url, "an IPv6 address goes in brackets, as in tcp://[::1]:29500");
  }
  if (out->host.empty()) bad_url(url, "missing host");
  if (port.empty()) bad_url(url, "missing port");
  if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      }))
    bad_url(url, "port '" + port + "' is not a number in [0, 65535]");
  out->port = std::atoi(port.c_str());
  if (out->port > 65535) bad_url(url, "port " + port + " is out of range [0, 65535]");
}

std::string env_or(const std::string& value, const char* name, std::string* source) {
  if (!value.empty()) return value;
  const char* env = std::getenv(name);
  if (env && *env) {
    *source = name;
    return env;
  }
  return {};
}

}  // namespace

std::string interface_address(const std::string& iface, const std::string& source) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0)
    raise(Code::kUnavailable, source, "=", iface, ": cannot list the network interfaces");
  std::string v4, v6;
  std::set<std::string> names;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    names.insert(a->ifa_name);
    if (iface != a->ifa_name) continue;
    char buf[INET6_ADDRSTRLEN] = {0};
    if (a->ifa_addr->sa_family == AF_INET && v4.empty()) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, buf, sizeof(buf));
      v4 = buf;
    } else if (a->ifa_addr->sa_family == AF_INET6 && v6.empty()) {
      const in6_addr& a6 = reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr;
      // A link-local address needs a scope to be reached: not one to give other machines.
      if (IN6_IS_ADDR_LINKLOCAL(&a6)) continue;
      inet_ntop(AF_INET6, &a6, buf, sizeof(buf));
      v6 = buf;
    }
  }
  freeifaddrs(list);
  if (!v4.empty()) return v4;
  if (!v6.empty()) return v6;
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  raise(Code::kInvalidArgument, source, "=", iface,
        ": no network interface of that name with an address (interfaces here: ", known, ")");
}

std::string rendezvous_bind_address(const StoreOptions& options) {
  std::string source = "bind_address";
  std::string addr = env_or(options.bind_address, "DINPUT_RDZV_ADDR", &source);
  if (!addr.empty()) return addr;
  source = "bind_interface";
  std::string iface = env_or(options.bind_interface, "DINPUT_RDZV_INTERFACE", &source);
  if (iface.empty()) return {};
  return interface_address(iface, source);
}

bool is_loopback(const sockaddr* sa) {
  if (sa->sa_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&a)) return a.s6_addr[12] == 127;
  }
  return false;
}

namespace {

// In a job that spans machines, a store host that resolves to loopback would give each
// machine a store of its own and leave every worker waiting: fail now, naming the host.
void check_loopback(const std::string& url, const StoreUrl& u, int world_size,
                    const StoreOptions& options) {
  if (options.allow_loopback || world_size <= 1) return;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(u.host.c_str(), nullptr, &hints, &res) != 0) return;  // connect reports it
  bool all = res != nullptr;
  std::string first;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    all = all && is_loopback(ai->ai_addr);
    if (first.empty()) {
      char buf[INET6_ADDRSTRLEN] = {0};
      if (ai->ai_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, buf,
                  sizeof(buf));
      else if (ai->ai_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, buf,
                  sizeof(buf));
      first = buf;
    }
  }
  freeaddrinfo(res);
  if (!all) return;
  raise(Code::kInvalidArgument, "rendezvous URL '", url, "': host '", u.host,
        "' resolves to the loopback address ", first, ", which each machine of a ", world_size,
        "-worker job spread over several machines reaches on itself; name the machine of the "
        "store by an address the others reach (or allow loopback for a job on one machine)");
}

}  // namespace

StoreUrl parse_store_url(const std::string& url) {
  size_t sep = url.find("://");
  if (sep == std::string::npos || sep == 0) bad_url(url, "missing scheme");
  StoreUrl out;
  out.scheme = url.substr(0, sep);
  std::transform(out.scheme.begin(), out.scheme.end(), out.scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string rest = url.substr(sep + 3);
  if (out.scheme == "redis") {
    // redis://HOST:PORT/DB: a database number, as Redis URLs have it.
    size_t slash = rest.find('/');
    if (slash != std::string::npos && slash + 1 < rest.size()) {
      std::string db = rest.substr(slash + 1);
      if (!db.empty() && db.back() == '/') db.pop_back();
      if (db.empty() || db.size() > 9 || !std::all_of(db.begin(), db.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          }))
        bad_url(url, "database '" + db + "' is not a number");
      out.db = std::atoi(db.c_str());
      rest = rest.substr(0, slash);
    }
    parse_host_port(url, rest, &out);
  } else if (out.scheme == "tcp") {
    parse_host_port(url, rest, &out);
  } else if (out.scheme == "file") {
    // file:///abs/dir (an empty host) or file://localhost/abs/dir; anything else after
    // file:// is taken as a directory relative to the working directory.
    if (rest.rfind("localhost/", 0) == 0) rest = rest.substr(9);
    if (rest.empty() || rest == "/") bad_url(url, "empty directory");
    while (rest.size() > 1 && rest.back() == '/') rest.pop_back();
    out.path = rest;
  } else {
    bad_url(url, "unknown scheme '" + out.scheme + "'");
  }
  return out;
}

std::shared_ptr<Store> make_store(const std::string& url, int rank, int world_size,
                                  const StoreOptions& options, std::string* served_url) {
  StoreUrl u = parse_store_url(url);
  DINPUT_CHECK_ARG(world_size >= 1, "rendezvous URL '", url, "': world size ", world_size,
                   " is not positive");
  DINPUT_CHECK_ARG(rank >= 0 && rank < world_size, "rendezvous URL '", url, "': rank ", rank,
                   " is outside [0, ", world_size, ")");
  std::shared_ptr<Store> base;
  std::string served = url;
  if (u.scheme == "tcp") {
    bool serving = options.serve && rank == 0;
    if (u.port == 0 && !serving)
      bad_url(url, "port 0 (any free port) can only be asked for by the rank that serves it");
    if (serving) {
      auto server = std::make_shared<TcpStoreServer>(rendezvous_bind_address(options), u.port, url);
      int port = server->port();
      served = u.host.find(':') != std::string::npos ? str_cat("tcp://[", u.host, "]:", port)
                                                     : str_cat("tcp://", u.host, ":", port);
      base = make_tcp_store(server->local_host(), port, options.connect_timeout, server, served);
    } else {
      check_loopback(url, u, world_size, options);
      base = make_tcp_store(u.host, u.port, options.connect_timeout);
    }
  } else if (u.scheme == "file") {
    base = make_file_store(u.path);
  } else {
    if (u.port == 0) bad_url(url, "port 0 names no Redis server");
    check_loopback(url, u, world_size, options);
    base = make_redis_store(u.host, u.port, u.db, options.connect_timeout);
  }
  if (served_url) *served_url = served;
  if (options.job_id.empty()) return base;
  return make_prefix_store(std::move(base), options.job_id);
}

}  // namespace dinput
