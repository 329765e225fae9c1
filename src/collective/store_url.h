// The rendezvous store named by a URL, as every worker of a job opens it:
//   tcp://HOST:PORT    served by the worker of rank 0 (a thread of it), reached by every worker
//   file:///DIR        a directory on a shared file system
//   redis://HOST:PORT[/DB]  a Redis server (needs Gloo at build time)
// docs/multi-process.md ("Rendezvous stores") describes the stores and the options.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "collective/store.h"

struct sockaddr;

namespace dinput {

struct StoreUrl {
  std::string scheme;  // "tcp", "file" or "redis"
  std::string host;    // tcp, redis: without the brackets of an IPv6 literal
  int port = -1;       // tcp, redis
  std::string path;    // file: the directory
  int db = 0;          // redis: the database number (redis://HOST:PORT/DB)
};

// Parses `url`; INVALID_ARGUMENT naming it when malformed (unknown scheme, missing or
// out-of-range port, empty directory).
StoreUrl parse_store_url(const std::string& url);

struct StoreOptions {
  // Namespaces every key (make_prefix_store), so that jobs sharing a store never mix; empty:
  // keys are used as given.
  std::string job_id;
  // How long a worker retries connecting to a tcp:// or redis:// store before UNAVAILABLE.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(60)};
  // Whether the store's host may resolve to a loopback address when world_size > 1. True
  // suits jobs on one machine (`dinput launch`); a job that spans machines sets it false, so
  // that tcp://localhost:PORT fails at once, naming the host, instead of leaving each machine
  // waiting on a store of its own. Rank 0 of a tcp:// store is not checked: it serves the
  // store and reaches it on this machine whatever the name resolves to.
  bool allow_loopback = true;
  // tcp://, rank 0: the numeric address or host name the server listens on. Empty: the
  // DINPUT_RDZV_ADDR environment variable, else the address of `bind_interface`, else every
  // interface.
  std::string bind_address;
  // tcp://, rank 0: a network interface (such as eth0) whose address the server listens on.
  // Empty: the DINPUT_RDZV_INTERFACE environment variable. `bind_address` wins over it.
  std::string bind_interface;
  // tcp://: whether rank 0 serves the store. False when it is served by something else (a
  // store shared by several jobs): every rank is then a client only.
  bool serve = true;
};

// The address a tcp:// server of rank 0 listens on under `options` (and the environment):
// empty for every interface. INVALID_ARGUMENT naming the interface when it has no address.
std::string rendezvous_bind_address(const StoreOptions& options);

// The address of network interface `iface` (its IPv4 address, else its first IPv6 address
// that is not link-local), for listening on it. INVALID_ARGUMENT naming `source` (the option
// or environment variable that named it) and listing the interfaces there when it has none.
std::string interface_address(const std::string& iface, const std::string& source);

// Whether `sa` is a loopback address (127.0.0.0/8, ::1, or 127.x mapped into IPv6).
bool is_loopback(const sockaddr* sa);

// Opens the store of `url` for the worker `rank` of `world_size` workers: starts the tcp://
// server on rank 0, connects (with retries), and applies the job id. `served_url`, when not
// null, receives the URL the store is reached at: that of `url`, with the chosen port where
// rank 0 asked for port 0. The server of rank 0 stops when the returned store is destroyed.
std::shared_ptr<Store> make_store(const std::string& url, int rank, int world_size,
                                  const StoreOptions& options = {},
                                  std::string* served_url = nullptr);

}  // namespace dinput
