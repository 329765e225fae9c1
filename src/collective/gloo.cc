#include "collective/gloo.h"

#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "collective/gloo_store.h"
#include "collective/in_process.h"
#include "core/status.h"

namespace dinput {

namespace {

using Clock = std::chrono::steady_clock;
using gloo::transport::UnboundBuffer;

// Gloo's own wait timeouts are never used: one that expires closes every connection of the
// context (all channels, for good). Waits are unbounded for Gloo and cut short by the
// collective itself (abortWaitRecv), which fails only the operation concerned.
constexpr std::chrono::milliseconds kForever = std::chrono::hours(24 * 365 * 10);

// Every payload travels in one message of at most kMessage bytes: an 8-byte length, then up
// to kInline bytes of the payload. A longer payload sends the rest in a second exchange,
// whose sizes every worker then knows from the lengths: Gloo requires a receive to be posted
// with room for what arrives (more would stop its event loop), and the per-step values
// (tens of bytes) need only the first exchange.
constexpr size_t kLengthBytes = 8;
constexpr size_t kMessage = 512;
constexpr size_t kInline = kMessage - kLengthBytes;
// A control message (abort, abort_channel): kind, channel, code, message length, message.
constexpr size_t kControlHeader = 1 + 8 + 4 + 4;
constexpr size_t kControlMessage = 2048;

// Gloo matches a send with a receive by a 64-bit slot. Ours: bits 63-62 the exchange (0 the
// first, 1 the rest of long payloads, 3 control), bit 61 the agreement-channel bit of the
// channel id, bits 60-40 the channel's low 21 bits, bits 39-0 the sequence number. Channels
// a million apart or operations 2^40 apart could share a slot, but a slot is only in use
// while its operation runs (or on a channel that was aborted), so they never meet.
uint64_t data_slot(uint64_t channel, uint64_t seq, uint64_t exchange) {
  return (exchange << 62) | ((channel >> 63) << 61) |
         ((channel & ((uint64_t{1} << 21) - 1)) << 40) | (seq & ((uint64_t{1} << 40) - 1));
}
constexpr uint64_t kControlSlot = uint64_t{3} << 62;

enum ControlKind : uint8_t { kAbortAll = 1, kAbortChannel = 2 };

void put_u64(char* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint64_t get_u64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::string workers_list(const std::vector<int>& ranks) {
  // At most kNamed are named: with thousands of workers the list would swamp the message.
  constexpr size_t kNamed = 10;
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < kNamed; ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kNamed) out += str_cat(" and ", ranks.size() - kNamed, " more");
  return str_cat(ranks.size() == 1 ? "worker " : "workers ", out);
}

}  // namespace

// One all_gather (or one control broadcast) in flight. Its buffers stay alive as long as
// Gloo may still write into or read from them: when the operation fails, the record moves
// to the collective's graveyard, freed only once the connections are closed.
struct Op {
  uint64_t channel = 0;
  uint64_t seq = 0;
  Clock::time_point deadline;
  std::string send_msg;
  std::string send_rest;
  std::vector<std::string> recv_msg;   // per worker
  std::vector<std::string> recv_rest;  // per worker
  std::vector<std::unique_ptr<UnboundBuffer>> sends, recvs, rest_sends, rest_recvs;
  std::vector<bool> arrived;
  std::mutex mu;  // buffers being added vs interrupt()
  bool interrupted = false;
  bool timed_out = false;

  // Wakes the operation's thread from any wait, now or later.
  void interrupt(bool timeout) {
    std::lock_guard<std::mutex> lock(mu);
    interrupted = true;
    timed_out = timed_out || timeout;
    for (auto* list : {&sends, &recvs, &rest_sends, &rest_recvs})
      for (auto& b : *list)
        if (b) {
          b->abortWaitRecv();
          b->abortWaitSend();
        }
  }
  UnboundBuffer* add(std::vector<std::unique_ptr<UnboundBuffer>>& list, size_t index,
                     std::unique_ptr<UnboundBuffer> buffer) {
    std::lock_guard<std::mutex> lock(mu);
    if (interrupted) {
      buffer->abortWaitRecv();
      buffer->abortWaitSend();
    }
    list[index] = std::move(buffer);
    return list[index].get();
  }
};

struct GlooCollective::Impl {
  int rank = 0;
  int size = 0;
  GlooOptions options;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;

  std::mutex mu;
  std::optional<Error> aborted;
  std::optional<Error> broken;  // a connection to a worker failed
  std::map<uint64_t, Error> aborted_channels;
  std::map<uint64_t, uint64_t> next_seq;
  std::set<std::shared_ptr<Op>> pending;
  std::list<std::shared_ptr<Op>> graveyard;
  std::list<std::pair<std::unique_ptr<UnboundBuffer>, std::string>> control_graveyard;
  bool stopping = false;
  std::condition_variable timer_cv;
  std::thread timer;
  std::thread control;
  UnboundBuffer* control_recv = nullptr;  // the control thread's current receive (under mu)

  bool no_deadline() const { return options.timeout.count() > kNoDeadlineMs; }

  void throw_if_failed(uint64_t channel) {
    if (aborted) throw *aborted;
    if (broken) throw *broken;
    auto found = aborted_channels.find(channel);
    if (found != aborted_channels.end()) throw found->second;
  }

  // Applies an abort locally; true if it changed anything.
  bool apply_abort(const Error& error) {
    std::lock_guard<std::mutex> lock(mu);
    if (aborted) return false;
    aborted = error;
    for (const auto& op : pending) op->interrupt(false);
    return true;
  }
  bool apply_abort_channel(uint64_t channel, const Error& error) {
    std::lock_guard<std::mutex> lock(mu);
    if (!aborted_channels.emplace(channel, error).second) return false;  // the first stays
    for (const auto& op : pending)
      if (op->channel == channel) op->interrupt(false);
    return true;
  }
  void lost(int peer, const std::string& what, const Op& op) {
    std::lock_guard<std::mutex> lock(mu);
    if (!broken)
      broken = Error(Code::kUnavailable,
                     str_cat("collective: worker ", rank, " lost its connection to worker ", peer,
                             " at step ", op.seq, " of channel ", op.channel, " (", what,
                             "): that worker stopped, or the network between them failed; "
                             "every worker fails"));
    for (const auto& p : pending) p->interrupt(false);
  }

  // Sends a control message to every other worker. Waits (at most a second, or the timeout)
  // for it to leave, so that a worker which aborts and then exits still tells the others.
  void broadcast(ControlKind kind, uint64_t channel, const Error& error) {
    if (size == 1) return;
    std::string text = error.what();
    text.resize(std::min(text.size(), kControlMessage - kControlHeader));
    std::string msg(kControlHeader, '\0');
    msg[0] = static_cast<char>(kind);
    put_u64(&msg[1], channel);
    const int32_t code = static_cast<int32_t>(error.code());
    const uint32_t length = static_cast<uint32_t>(text.size());
    std::memcpy(&msg[9], &code, 4);
    std::memcpy(&msg[13], &length, 4);
    msg += text;
    auto op = std::make_shared<Op>();
    op->send_msg = std::move(msg);
    op->sends.resize(static_cast<size_t>(size));
    op->deadline = Clock::now() +
                   std::min<std::chrono::milliseconds>(options.timeout, std::chrono::seconds(1));
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping) return;
      pending.insert(op);
    }
    timer_cv.notify_all();
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      try {
        auto* b = op->add(op->sends, static_cast<size_t>(p),
                          context->createUnboundBuffer(&op->send_msg[0], op->send_msg.size()));
        b->send(p, kControlSlot, 0, op->send_msg.size());
      } catch (const std::exception&) {
        // That worker is gone: it needs no message.
      }
    }
    for (int p = 0; p < size; ++p) {
      auto& b = op->sends[static_cast<size_t>(p)];
      if (!b) continue;
      try {
        if (!b->waitSend(nullptr, kForever)) break;
      } catch (const std::exception&) {
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    pending.erase(op);
    graveyard.push_back(op);  // sends that did not leave may still leave
  }

  void timer_loop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      // Every operation's deadline is its start plus the same timeout (control broadcasts'
      // are shorter and notify): one that starts while this waits ends no earlier than the
      // wait, so starting an operation need not wake this thread.
      Clock::time_point next = Clock::now() + std::min<std::chrono::milliseconds>(
                                                  options.timeout, std::chrono::hours(1));
      const Clock::time_point now = Clock::now();
      for (const auto& op : pending) {
        if (op->deadline <= now)
          op->interrupt(true);
        else
          next = std::min(next, op->deadline);
      }
      timer_cv.wait_until(lock, next);
    }
  }

  void control_loop() {
    for (;;) {
      auto memory = std::string(kControlMessage, '\0');
      std::unique_ptr<UnboundBuffer> buffer;
      std::vector<int> peers;
      for (int p = 0; p < size; ++p)
        if (p != rank) peers.push_back(p);
      bool received = false;
      try {
        buffer = context->createUnboundBuffer(&memory[0], memory.size());
        {
          std::lock_guard<std::mutex> lock(mu);
          if (stopping) return;
          control_recv = buffer.get();
        }
        buffer->recv(peers, kControlSlot, 0, memory.size());
        received = buffer->waitRecv(nullptr, kForever);
      } catch (const std::exception&) {
        // A worker's connection failed while its message was on the way; operations report
        // that worker themselves. Listen again, after a pause in case the failure persists.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        control_recv = nullptr;
        if (!received) {
          // Gloo may still deliver into it.
          if (buffer) control_graveyard.emplace_back(std::move(buffer), std::move(memory));
          if (stopping) return;
          continue;
        }
      }
      const auto kind = static_cast<uint8_t>(memory[0]);
      const uint64_t channel = get_u64(&memory[1]);
      int32_t code;
      uint32_t length;
      std::memcpy(&code, &memory[9], 4);
      std::memcpy(&length, &memory[13], 4);
      length = std::min<uint32_t>(length, kControlMessage - kControlHeader);
      const Error error(static_cast<Code>(code), memory.substr(kControlHeader, length));
      if (kind == kAbortAll)
        apply_abort(error);
      else if (kind == kAbortChannel)
        apply_abort_channel(channel, error);
    }
  }

  std::vector<std::string> all_gather(uint64_t channel, std::string payload);
  [[noreturn]] void fail(const std::shared_ptr<Op>& op);
  void wait_recvs(Op& op, std::vector<std::unique_ptr<UnboundBuffer>>& list);
  void wait_sends(Op& op, std::vector<std::unique_ptr<UnboundBuffer>>& list);
};

namespace {

// Thrown inside an operation when a wait was cut short; the cause is in the collective.
struct Interrupted {};

// Thrown inside an operation when Gloo reports a broken connection to `peer`.
struct Lost {
  int peer;
  std::string what;
};

}  // namespace

void GlooCollective::Impl::wait_recvs(Op& op, std::vector<std::unique_ptr<UnboundBuffer>>& list) {
  for (size_t p = 0; p < list.size(); ++p) {
    if (!list[p]) continue;
    try {
      if (!list[p]->waitRecv(nullptr, kForever)) throw Interrupted{};
    } catch (const std::exception& e) {
      throw Lost{static_cast<int>(p), e.what()};
    }
    op.arrived[p] = true;
  }
}

void GlooCollective::Impl::wait_sends(Op&, std::vector<std::unique_ptr<UnboundBuffer>>& list) {
  for (size_t p = 0; p < list.size(); ++p) {
    if (!list[p]) continue;
    try {
      if (!list[p]->waitSend(nullptr, kForever)) throw Interrupted{};
    } catch (const std::exception& e) {
      throw Lost{static_cast<int>(p), e.what()};
    }
  }
}

void GlooCollective::Impl::fail(const std::shared_ptr<Op>& op) {
  std::unique_lock<std::mutex> lock(mu);
  pending.erase(op);
  graveyard.push_back(op);
  if (aborted) throw *aborted;
  if (broken) throw *broken;
  auto found = aborted_channels.find(op->channel);
  if (found != aborted_channels.end()) throw found->second;
  // Timed out: this worker gives up on the step, and so must every other (one that already
  // completed it fails its next step on the channel), or the workers would go on out of
  // step. The message names the workers whose payload did not come.
  std::vector<int> missing;
  for (int p = 0; p < size; ++p)
    if (p != rank && !op->arrived[static_cast<size_t>(p)]) missing.push_back(p);
  const Error error(
      Code::kDeadlineExceeded,
      str_cat("collective: worker ", rank, " waited ", options.timeout.count(), " ms for ",
              missing.empty() ? std::string("the other workers") : workers_list(missing),
              " at step ", op->seq, " of channel ", op->channel,
              "; they had not arrived: they may only be slow (raise the timeout), or have stopped "
              "iterating or never started. A worker that failed reports its own error; every "
              "worker fails this step"));
  aborted_channels.emplace(op->channel, error);
  for (const auto& p : pending)
    if (p->channel == op->channel) p->interrupt(false);
  lock.unlock();
  broadcast(kAbortChannel, op->channel, error);
  throw error;
}

std::vector<std::string> GlooCollective::Impl::all_gather(uint64_t channel, std::string payload) {
  auto op = std::make_shared<Op>();
  op->channel = channel;
  const auto n = static_cast<size_t>(size);
  {
    std::lock_guard<std::mutex> lock(mu);
    throw_if_failed(channel);
    op->seq = next_seq[channel]++;
    op->deadline = no_deadline() ? Clock::time_point::max() : Clock::now() + options.timeout;
    pending.insert(op);
  }
  std::vector<std::string> result(n);
  if (size == 1) {
    std::lock_guard<std::mutex> lock(mu);
    pending.erase(op);
    result[0] = std::move(payload);
    return result;
  }
  op->arrived.assign(n, false);
  op->arrived[static_cast<size_t>(rank)] = true;
  op->recv_msg.assign(n, std::string());
  op->recvs.resize(n);
  op->sends.resize(n);
  op->rest_recvs.resize(n);
  op->rest_sends.resize(n);
  op->send_msg.resize(kLengthBytes);
  put_u64(&op->send_msg[0], payload.size());
  op->send_msg.append(payload, 0, std::min(payload.size(), kInline));
  const uint64_t slot = data_slot(channel, op->seq, 0);
  int peer = -1;
  try {
    // Receives first, so that each peer's send finds its receive already announced.
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      peer = p;
      auto& memory = op->recv_msg[static_cast<size_t>(p)];
      memory.assign(kMessage, '\0');
      op->add(op->recvs, static_cast<size_t>(p),
              context->createUnboundBuffer(&memory[0], memory.size()))
          ->recv(p, slot, 0, memory.size());
    }
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      peer = p;
      op->add(op->sends, static_cast<size_t>(p),
              context->createUnboundBuffer(&op->send_msg[0], op->send_msg.size()))
          ->send(p, slot, 0, op->send_msg.size());
    }
    wait_recvs(*op, op->recvs);
    // Long payloads: the rest of each, whose sizes every worker now knows.
    std::vector<uint64_t> lengths(n);
    bool any_long = payload.size() > kInline;
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      lengths[static_cast<size_t>(p)] = get_u64(op->recv_msg[static_cast<size_t>(p)].data());
      any_long = any_long || lengths[static_cast<size_t>(p)] > kInline;
    }
    if (any_long) {
      const uint64_t rest_slot = data_slot(channel, op->seq, 1);
      op->recv_rest.assign(n, std::string());
      for (int p = 0; p < size; ++p) {
        if (p == rank || lengths[static_cast<size_t>(p)] <= kInline) continue;
        peer = p;
        auto& memory = op->recv_rest[static_cast<size_t>(p)];
        memory.assign(lengths[static_cast<size_t>(p)] - kInline, '\0');
        op->arrived[static_cast<size_t>(p)] = false;
        op->add(op->rest_recvs, static_cast<size_t>(p),
                context->createUnboundBuffer(&memory[0], memory.size()))
            ->recv(p, rest_slot, 0, memory.size());
      }
      if (payload.size() > kInline) {
        op->send_rest = payload.substr(kInline);
        for (int p = 0; p < size; ++p) {
          if (p == rank) continue;
          peer = p;
          op->add(op->rest_sends, static_cast<size_t>(p),
                  context->createUnboundBuffer(&op->send_rest[0], op->send_rest.size()))
              ->send(p, rest_slot, 0, op->send_rest.size());
        }
      }
      wait_recvs(*op, op->rest_recvs);
    }
    wait_sends(*op, op->sends);
    wait_sends(*op, op->rest_sends);
    for (int p = 0; p < size; ++p) {
      auto& out = result[static_cast<size_t>(p)];
      if (p == rank) {
        out = std::move(payload);
        continue;
      }
      const std::string& msg = op->recv_msg[static_cast<size_t>(p)];
      const uint64_t length = lengths[static_cast<size_t>(p)];
      out.assign(msg, kLengthBytes, std::min<uint64_t>(length, kInline));
      if (length > kInline) out += op->recv_rest[static_cast<size_t>(p)];
    }
  } catch (const Interrupted&) {
    fail(op);
  } catch (const Lost& lost_peer) {
    lost(lost_peer.peer, lost_peer.what, *op);
    fail(op);
  } catch (const std::exception& e) {
    // Posting a send or receive on a connection Gloo already knows to be broken.
    lost(peer, e.what(), *op);
    fail(op);
  }
  std::lock_guard<std::mutex> lock(mu);
  pending.erase(op);
  return result;
}

GlooCollective::GlooCollective(int rank, int world_size, std::shared_ptr<Store> store,
                               GlooOptions options)
    : impl_(std::make_unique<Impl>()) {
  DINPUT_CHECK_ARG(world_size >= 1 && world_size <= kMaxWorkers,
                   "collective: world_size must be in [1, ", kMaxWorkers, "], got ", world_size);
  DINPUT_CHECK_ARG(rank >= 0 && rank < world_size, "collective: rank ", rank, " is outside [0, ",
                   world_size, ")");
  DINPUT_CHECK_ARG(store != nullptr, "collective: the rendezvous store is null");
  DINPUT_CHECK_ARG(options.timeout.count() > 0, "collective: timeout must be > 0 ms, got ",
                   options.timeout.count());
  if (options.iface.empty() && options.address.empty()) {
    if (const char* env = std::getenv("DINPUT_GLOO_IFACE"); env && *env) options.iface = env;
  }
  Impl& s = *impl_;
  s.rank = rank;
  s.size = world_size;
  s.options = options;
  // Gloo's connect waits up to 5 times its timeout; the rendezvous already waited for every
  // worker to publish its address, so the connections themselves come quickly.
  const auto gloo_timeout =
      std::min<std::chrono::milliseconds>(options.timeout, std::chrono::hours(1));
  gloo::transport::tcp::attr attr;
  if (!options.iface.empty())
    attr.iface = options.iface;
  else
    attr.hostname = options.address;
  try {
    s.device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    raise(Code::kInvalidArgument, "collective: cannot listen on ",
          options.iface.empty() ? str_cat("address '", options.address, "'")
                                : str_cat("network interface '", options.iface, "'"),
          ": ", e.what());
  }
  s.context = std::make_shared<gloo::rendezvous::Context>(rank, world_size);
  s.context->setTimeout(gloo_timeout);
  auto keys = make_prefix_store(make_prefix_store(std::move(store), options.job_id), "gloo");
  GlooStoreAdapter adapter(keys, options.timeout);
  try {
    // Each worker publishes its addresses under its rank, then connects to every other.
    s.context->connectFullMesh(adapter, s.device);
  } catch (const Error& e) {
    if (e.code() != Code::kDeadlineExceeded) throw;
    // Gloo waits for the workers one by one: name all those still missing.
    std::vector<int> missing;
    for (int r = 0; r < world_size; ++r)
      if (r != rank && !keys->check({std::to_string(r)})) missing.push_back(r);
    raise(Code::kDeadlineExceeded, "collective: worker ", rank, " of ", world_size, " waited ",
          options.timeout.count(), " ms at the rendezvous for ",
          missing.empty() ? std::string("the other workers") : workers_list(missing),
          " to publish their addresses (", e.what(),
          "): they were not started, or use another rendezvous or job id");
  } catch (const gloo::Exception& e) {
    raise(Code::kUnavailable, "collective: worker ", rank, " of ", world_size,
          " could not connect to the other workers: ", e.what());
  }
  s.timer = std::thread([&s] { s.timer_loop(); });
  s.control = std::thread([&s] { s.control_loop(); });
}

GlooCollective::~GlooCollective() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stopping = true;
    for (const auto& op : s.pending) op->interrupt(false);
    if (s.control_recv) s.control_recv->abortWaitRecv();
  }
  s.timer_cv.notify_all();
  if (s.timer.joinable()) s.timer.join();
  if (s.control.joinable()) s.control.join();
  // Connections first: only then can no Gloo thread touch the buffers left behind.
  s.context.reset();
  s.device.reset();
  s.graveyard.clear();
  s.control_graveyard.clear();
}

int GlooCollective::num_workers() const { return impl_->size; }

std::vector<std::string> GlooCollective::all_gather(int worker, uint64_t channel,
                                                    std::string payload) {
  if (worker != impl_->rank)
    raise(Code::kInvalidArgument, "collective: this process holds worker ", impl_->rank,
          " of the Gloo collective, not worker ", worker);
  return impl_->all_gather(channel, std::move(payload));
}

void GlooCollective::abort(const Error& error) {
  if (impl_->apply_abort(error)) impl_->broadcast(kAbortAll, 0, error);
}

void GlooCollective::abort_channel(uint64_t channel, const Error& error) {
  if (impl_->apply_abort_channel(channel, error)) impl_->broadcast(kAbortChannel, channel, error);
}

std::shared_ptr<Collective> make_gloo_collective(int rank, int world_size,
                                                 std::shared_ptr<Store> store,
                                                 const GlooOptions& options) {
  return std::make_shared<GlooCollective>(rank, world_size, std::move(store), options);
}

}  // namespace dinput
