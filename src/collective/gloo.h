// The Gloo backend of Collective: workers are processes (on one host or several) joined by
// Gloo's TCP transport. They meet through a Store (store.h): each publishes its listening
// address there and connects to every other (a full mesh), and after that the Store is used
// no more — every step goes over the TCP connections only. The collective still holds the
// store until it is destroyed: rank 0's tcp:// server must outlive the others' rendezvous.
//
// Compiled only when CMake finds Gloo (DINPUT_HAVE_GLOO); without it make_gloo_collective
// is UNIMPLEMENTED. Nothing outside src/collective includes Gloo's headers.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "collective/collective.h"
#include "collective/store.h"

namespace dinput {

struct GlooOptions {
  // How long an operation waits for the other workers, and the rendezvous for them to arrive.
  std::chrono::milliseconds timeout{60000};
  // The network interface to listen on (e.g. "eth0"; its IPv4 address, else its first IPv6
  // address that is not link-local), or else the host name or address; with neither,
  // DINPUT_GLOO_IFACE names the interface, else DINPUT_GLOO_ADDRESS the address, and without
  // them the worker listens on the address this host's name resolves to.
  std::string iface;
  std::string address;
  // With more than one worker, listening on a loopback address is FAILED_PRECONDITION:
  // workers on other hosts could not reach it. The C API sets this unless the job is known to
  // run on one host (docs/multi-process.md); tests of workers on one host leave it off.
  bool refuse_loopback = false;
  // Namespaces the rendezvous keys, so two jobs on one store never mix.
  std::string job_id = "dinput";
};

// One process's end of the collective: it holds the single worker `rank` (all_gather with
// another worker index is INVALID_ARGUMENT).
//
// Each operation is an all-gather in ceil(log2 W) rounds of one message each way (Bruck's
// algorithm), on Gloo slots made of (channel, sequence number, round): operations of
// different channels never wait for each other, whatever order the threads of each process
// issue them in. A worker that gives up on an operation (timeout), or aborts, tells the others
// with a control message, so they fail too instead of waiting out their own timeouts; a
// worker whose process dies closes its connections, which the others see at once.
class GlooCollective final : public Collective {
 public:
  // Connects worker `rank` of `world_size` to the others through `store`; returns when every
  // worker has connected. DEADLINE_EXCEEDED naming the workers that did not arrive within
  // the timeout; UNAVAILABLE when a connection fails; INVALID_ARGUMENT for a bad interface or
  // address; FAILED_PRECONDITION for a loopback address that options.refuse_loopback refuses.
  GlooCollective(int rank, int world_size, std::shared_ptr<Store> store, GlooOptions options);
  ~GlooCollective() override;
  int num_workers() const override;
  std::vector<std::string> all_gather(int worker, uint64_t channel, std::string payload) override;
  void abort(const Error& error) override;
  std::chrono::milliseconds timeout() const override;
  void abort_channel(uint64_t channel, const Error& error) override;
  void raise_if_failed(uint64_t channel) override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The collective of GlooCollective's constructor; UNIMPLEMENTED in a build without Gloo.
std::shared_ptr<Collective> make_gloo_collective(int rank, int world_size,
                                                 std::shared_ptr<Store> store,
                                                 const GlooOptions& options);

}  // namespace dinput
