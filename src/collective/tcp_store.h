// The tcp://HOST:PORT rendezvous store: a small key-value server run as a thread of the worker
// of rank 0, and the client every worker (rank 0 too) talks to it through. The wire protocol
// is described in docs/multi-process.md ("Rendezvous stores"). A get that waits is parked by
// the server and answered when its keys appear or its timeout passes, so clients never poll.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "collective/store.h"

namespace dinput {

class TcpStoreServer {
 public:
  // Listens on `bind_host` (a numeric address; empty: every interface) at `port` (0: a free
  // port the system chooses) and starts serving. `url` names the store in error messages.
  // UNAVAILABLE naming `url` and the address when it cannot listen there (port in use).
  TcpStoreServer(const std::string& bind_host, int port, const std::string& url);
  // Stops serving: every connection is closed, so clients waiting on a get see the server go.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  // The port it listens on (the chosen one when asked for port 0).
  int port() const;
  // The numeric address it listens on ("0.0.0.0" or "::" for every interface).
  std::string bound_host() const;
  // The address a client on this machine reaches it at.
  std::string local_host() const;
  // Requests answered so far (a get that waited counts once): lets tests see that waits are
  // not polled.
  uint64_t requests_served() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A client of the store at host:port. Connecting retries with a growing pause until
// `connect_timeout` has passed, then fails with UNAVAILABLE naming the address and how long it
// tried. `server`, when given, is kept alive as long as the client (rank 0 owns its server
// through its client). `url` names the store in error messages (empty: tcp://HOST:PORT). Each
// concurrent operation uses a connection of its own, so a long get on one thread never delays
// a set on another.
std::shared_ptr<Store> make_tcp_store(const std::string& host, int port,
                                      std::chrono::milliseconds connect_timeout,
                                      std::shared_ptr<TcpStoreServer> server = nullptr,
                                      const std::string& url = "");

}  // namespace dinput
