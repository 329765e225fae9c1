#include "collective/gloo.h"

#include "core/status.h"

// Without Gloo (CMake did not find it, or DINPUT_WITH_GLOO=OFF) only the factory exists, and
// says so.
#ifndef DINPUT_HAVE_GLOO

namespace dinput {

std::shared_ptr<Collective> make_gloo_collective(int, int, std::shared_ptr<Store>,
                                                 const GlooOptions&) {
  raise(Code::kUnimplemented,
        "collective: this dinput was built without Gloo, so its workers cannot be processes "
        "(install libgloo-dev and rebuild; dinput_build_info reports \"gloo\")");
}

}  // namespace dinput

#else

#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <netdb.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
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
#include "collective/store_url.h"
#include "core/status.h"
#include "core/thread.h"

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

// Gloo matches a send with a receive by a 64-bit slot (raw: gloo::Slot's 32-bit tag has no
// room for a channel and a 64-bit step). Ours: bits 63-59 the exchange (round k of the
// all-gather is k, the rest of long payloads 30, control messages 31), bit 58 the
// agreement-channel bit of the channel id, bits 57-40 the channel's low 18 bits, bits 39-0
// the step. Channels 2^18 apart or steps 2^40 apart could share a slot, but a slot is in use
// only while its operation runs (or on a channel that was aborted), so they never meet.
constexpr uint64_t kRestExchange = 30;
uint64_t data_slot(uint64_t channel, uint64_t seq, uint64_t exchange) {
  return (exchange << 59) | ((channel >> 63) << 58) |
         ((channel & ((uint64_t{1} << 18) - 1)) << 40) | (seq & ((uint64_t{1} << 40) - 1));
}
constexpr uint64_t kControlSlot = uint64_t{31} << 59;
// The channel of the barrier that ends the constructor. Its one step shares a slot only with
// step 0 of agreement channel 2^18 - 1, which 262,143 earlier agreements would open.
constexpr uint64_t kJoinChannel = ~uint64_t{0};

// kQuery asks whether a worker has entered a step (after a timeout, to name the missing);
// kReply answers it (code 1: it has). Their text is the step, 8 bytes.
// kLeaving: the sender is closing its collective normally (its connections close next).
// kPing: nothing; sent to the next worker to see whether its connection still stands.
enum ControlKind : uint8_t {
  kAbortAll = 1,
  kAbortChannel = 2,
  kQuery = 3,
  kReply = 4,
  kLeaving = 5,
  kPing = 6
};

std::string control_message(ControlKind kind, uint64_t channel, int32_t code, std::string text) {
  text.resize(std::min(text.size(), kControlMessage - kControlHeader));
  std::string msg(kControlHeader, '\0');
  msg[0] = static_cast<char>(kind);
  std::memcpy(&msg[1], &channel, 8);
  const uint32_t length = static_cast<uint32_t>(text.size());
  std::memcpy(&msg[9], &code, 4);
  std::memcpy(&msg[13], &length, 4);
  return msg + text;
}

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

// Blocks SIGPIPE in this thread while it lives; threads started meanwhile keep it blocked.
class BlockSigpipe {
 public:
  BlockSigpipe() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~BlockSigpipe() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  BlockSigpipe(const BlockSigpipe&) = delete;
  BlockSigpipe& operator=(const BlockSigpipe&) = delete;

 private:
  sigset_t old_;
};

// The first address of `host` that a socket can listen on, numeric, as Gloo itself would pick
// it (it tries them in getaddrinfo's order); empty, with `why` set, when there is none.
std::string listen_address(const std::string& host, std::string* why, bool* loopback) {
  addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
    *why = str_cat("it does not resolve (", gai_strerror(rc), ")");
    return {};
  }
  *why = "no address of it belongs to this host";
  std::string numeric;
  for (const addrinfo* a = found; a && numeric.empty(); a = a->ai_next) {
    const int fd = socket(a->ai_family, SOCK_STREAM, 0);
    if (fd < 0) continue;
    sockaddr_storage address = {};
    std::memcpy(&address, a->ai_addr, a->ai_addrlen);  // port 0: any
    const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), a->ai_addrlen) == 0;
    close(fd);
    char text[NI_MAXHOST] = {};
    if (bound && getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0,
                             NI_NUMERICHOST) == 0) {
      numeric = text;
      *loopback = is_loopback(a->ai_addr);
      why->clear();
    }
  }
  freeaddrinfo(found);
  return numeric;
}

}  // namespace

// One all_gather (or one control broadcast) in flight. Its buffers stay alive as long as
// Gloo may still write into or read from them: when the operation fails, the record moves
// to the collective's graveyard, freed only once the connections are closed.
struct Op {
  uint64_t channel = 0;
  uint64_t seq = 0;
  Clock::time_point deadline;
  // Messages and their buffers, in the order posted; sends[i] goes to send_peers[i].
  std::list<std::string> send_msgs;
  std::list<std::string> recv_msg;
  std::vector<std::unique_ptr<UnboundBuffer> > sends, recvs;
  std::vector<int> send_peers;
  // A control broadcast: only its deadline or the collective's end cut it short, never a
  // failure (see broadcast()).
  bool control = false;
  std::mutex mu;  // guards `interrupted`, and buffers being added vs interrupt()
  bool interrupted = false;

  // Wakes the operation's thread from any wait, now or later.
  void interrupt() {
    std::lock_guard<std::mutex> lock(mu);
    interrupted = true;
    for (auto* list : {&sends, &recvs})
      for (auto& b : *list) {
        b->abortWaitRecv();
        b->abortWaitSend();
      }
  }
  UnboundBuffer* add(std::vector<std::unique_ptr<UnboundBuffer> >& list,
                     std::unique_ptr<UnboundBuffer> buffer) {
    std::lock_guard<std::mutex> lock(mu);
    if (interrupted) {
      buffer->abortWaitRecv();
      buffer->abortWaitSend();
    }
    list.push_back(std::move(buffer));
    return list.back().get();
  }
};

struct GlooCollective::Impl {
  int rank = 0;
  int size = 0;
  GlooOptions options;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  // The rendezvous store, kept as long as the collective: a tcp:// store is served by the
  // process of worker 0, and workers still connecting to each other read their peers'
  // addresses from it after worker 0 itself is connected.
  std::shared_ptr<Store> store;

  std::mutex mu;
  std::optional<Error> aborted;
  std::optional<Error> broken;  // a connection to a worker failed
  std::map<uint64_t, Error> aborted_channels;
  // The first step of each aborted channel that fails. A worker that leaves a channel after
  // step k (its iterator freed once it has what it wanted) sent its part of every step up to
  // k, so the others still complete those steps; only later steps fail. Absent: every step.
  std::map<uint64_t, uint64_t> aborted_from;
  // Workers whose connection failed. The control thread no longer listens to them: a message
  // one announced before it went would otherwise be picked for every receive, and fail it.
  std::set<int> gone;
  // Workers that said they were leaving (kLeaving): their connections close without a fault.
  std::set<int> left;
  // The liveness probe of iterators that exchange nothing per step (probe()).
  Clock::time_point next_probe{};
  std::unique_ptr<UnboundBuffer> ping;
  std::string ping_message;
  std::map<uint64_t, uint64_t> next_seq;
  std::set<std::shared_ptr<Op> > pending;
  std::list<std::shared_ptr<Op> > graveyard;
  std::list<std::pair<std::unique_ptr<UnboundBuffer>, std::string> > control_graveyard;
  // Control messages sent without waiting (queries and replies): kept until the connections
  // close, like the graveyard (only timeouts make them).
  std::list<std::pair<std::unique_ptr<UnboundBuffer>, std::string> > control_sent;
  // Arrival queries of this worker in flight: (channel, step) -> per worker -1 (no answer),
  // 0 (not arrived) or 1 (arrived).
  std::map<std::pair<uint64_t, uint64_t>, std::vector<int> > queries;

  // Sends a control message to `peer` without waiting for it to leave.
  void send_control(int peer, std::string msg) {
    std::lock_guard<std::mutex> lock(mu);
    if (stopping) return;
    try {
      auto& entry = control_sent.emplace_back(nullptr, std::move(msg));
      entry.first = context->createUnboundBuffer(&entry.second[0], entry.second.size());
      entry.first->send(peer, kControlSlot, 0, entry.second.size());
    } catch (const std::exception&) {
      // That worker is gone: it is counted as missing.
      gone.insert(peer);
    }
  }

  // After a timeout at (channel, seq): the workers that had not entered that step, asked
  // directly (a worker waits for one peer a round, which may itself wait for the missing
  // one). A worker that does not answer within a second (or the timeout) counts as missing.
  std::vector<int> not_arrived(uint64_t channel, uint64_t seq) {
    const auto key = std::make_pair(channel, seq);
    {
      std::lock_guard<std::mutex> lock(mu);
      queries[key].assign(static_cast<size_t>(size), -1);
    }
    std::string step(8, '\0');
    put_u64(&step[0], seq);
    for (int p = 0; p < size; ++p)
      if (p != rank) send_control(p, control_message(kQuery, channel, 0, step));
    std::unique_lock<std::mutex> lock(mu);
    std::vector<int>& replies = queries[key];
    control_cv.wait_for(
        lock, std::min<std::chrono::milliseconds>(options.timeout, std::chrono::seconds(1)), [&] {
          for (int p = 0; p < size; ++p)
            if (p != rank && replies[static_cast<size_t>(p)] < 0) return false;
          return true;
        });
    std::vector<int> missing;
    for (int p = 0; p < size; ++p)
      if (p != rank && replies[static_cast<size_t>(p)] != 1) missing.push_back(p);
    queries.erase(key);
    return missing;
  }

  bool stopping = false;
  std::condition_variable timer_cv;    // a deadline changed, or stopping (also the control thread)
  std::condition_variable control_cv;  // an abort arrived (for lost())
  Thread timer;
  Thread control;
  UnboundBuffer* control_recv = nullptr;  // the control thread's current receive (under mu)

  bool no_deadline() const { return options.timeout.count() > kNoDeadlineMs; }

  // Whether step `seq` of `channel` fails because the channel was aborted (mu held).
  bool channel_aborted_at(uint64_t channel, uint64_t seq) const {
    if (aborted_channels.count(channel) == 0) return false;
    auto from = aborted_from.find(channel);
    return from == aborted_from.end() || seq >= from->second;
  }

  void throw_if_failed(uint64_t channel, uint64_t seq) {
    if (aborted) throw *aborted;
    if (broken) throw *broken;
    if (channel_aborted_at(channel, seq)) throw aborted_channels.at(channel);
  }

  // The first step of `channel` that this worker's abort makes fail: the one it is in, or
  // else the next it would take (mu held).
  uint64_t abort_step(uint64_t channel) const {
    auto next = next_seq.find(channel);
    uint64_t from = next == next_seq.end() ? 0 : next->second;
    for (const auto& op : pending)
      if (!op->control && op->channel == channel) from = std::min(from, op->seq);
    return from;
  }

  // Wakes the operations in flight (of `*channel` only, when given) that wait for the others;
  // under mu. Control broadcasts go on: each carries a reason the others have yet to get.
  // Two workers that both lost a third each broadcast why, and each one's message used to
  // cut the other's broadcast short; both then exited before telling a worker that had not
  // seen the loss itself, and that worker named one of them instead of the lost one.
  // With a channel, only its steps from `from` on (see aborted_from).
  void interrupt_operations(const uint64_t* channel, uint64_t from = 0) {
    for (const auto& op : pending)
      if (!op->control && (!channel || (op->channel == *channel && op->seq >= from)))
        op->interrupt();
  }

  // Applies an abort locally; true if it changed anything.
  bool apply_abort(const Error& error) {
    std::lock_guard<std::mutex> lock(mu);
    if (aborted) return false;
    aborted = error;
    interrupt_operations(nullptr);
    control_cv.notify_all();
    return true;
  }
  // Steps from `from` on fail on `channel` (see aborted_from); true if it changed anything.
  bool apply_abort_channel(uint64_t channel, uint64_t from, const Error& error) {
    std::lock_guard<std::mutex> lock(mu);
    if (!aborted_channels.emplace(channel, error).second) return false;  // the first stays
    aborted_from[channel] = from;
    interrupt_operations(&channel, from);
    control_cv.notify_all();
    return true;
  }
  void lost(int peer, const std::string& what, const Op& op) {
    std::unique_lock<std::mutex> lock(mu);
    gone.insert(peer);
    // A worker that aborts and then exits sent its reason before closing, on the same
    // connection, but the control thread may not have handed it over yet: wait for it (up to
    // a second: on a loaded machine 200 ms was not always enough), so that the reason, not
    // the closed connection, is what every worker reports.
    control_cv.wait_for(lock, std::chrono::seconds(1), [&] {
      return aborted || broken || stopping || channel_aborted_at(op.channel, op.seq);
    });
    if (aborted || channel_aborted_at(op.channel, op.seq) || broken) return;
    fail_for_lost_worker(lock, peer, str_cat(" at step ", op.seq, " of channel ", op.channel),
                         what);
  }

  // Fails this worker's collective for the lost worker `peer` (mu held by `lock`, released
  // here) and tells every other worker: only those exchanging with the lost one (or watching
  // it) see its connection close, and the others may be waiting for one of those.
  void fail_for_lost_worker(std::unique_lock<std::mutex>& lock, int peer, const std::string& where,
                            const std::string& what) {
    broken = Error(Code::kUnavailable,
                   str_cat("collective: worker ", rank, " lost its connection to worker ", peer,
                           where, " (", what,
                           "): that worker stopped, or the network between them failed; "
                           "every worker fails"));
    interrupt_operations(nullptr);
    const Error error = *broken;
    lock.unlock();
    broadcast(kAbortAll, 0, error);
  }

  // Sends a control message to every other worker. Waits for it to leave (each receiver's
  // control thread must have asked for it: a round trip), so that a worker which fails and
  // then exits still tells the others; at most kBroadcastWait (or the timeout), which only
  // a worker that is alive but not running (stopped, or its host frozen) makes it wait out.
  // A worker that is gone fails its send at once. A kAbortChannel message's text starts with
  // the first step that fails, 8 bytes.
  void broadcast(ControlKind kind, uint64_t channel, const Error& error, uint64_t from = 0) {
    if (size == 1) return;
    constexpr std::chrono::milliseconds kBroadcastWait{5000};
    std::string text = error.what();
    if (kind == kAbortChannel) {
      std::string step(8, '\0');
      put_u64(&step[0], from);
      text = step + text;
    }
    std::string msg = control_message(kind, channel, static_cast<int32_t>(error.code()), text);
    auto op = std::make_shared<Op>();
    op->control = true;
    std::string& out = op->send_msgs.emplace_back(std::move(msg));
    op->deadline = Clock::now() + std::min(options.timeout, kBroadcastWait);
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping) return;
      pending.insert(op);
    }
    timer_cv.notify_all();
    // Only the sends that were posted are waited for: a send refused at once (its worker is
    // gone) would never complete, and held every broadcast to its deadline.
    std::vector<UnboundBuffer*> posted;
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      try {
        UnboundBuffer* b = op->add(op->sends, context->createUnboundBuffer(&out[0], out.size()));
        b->send(p, kControlSlot, 0, out.size());
        posted.push_back(b);
      } catch (const std::exception&) {
        // That worker is gone: it needs no message.
        std::lock_guard<std::mutex> lock(mu);
        gone.insert(p);
      }
    }
    for (UnboundBuffer* b : posted) {
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
          op->interrupt();
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
      {
        std::lock_guard<std::mutex> lock(mu);
        for (int p = 0; p < size; ++p)
          if (p != rank && !gone.count(p) && !left.count(p)) peers.push_back(p);
      }
      if (peers.empty()) {  // nobody left to hear from
        std::unique_lock<std::mutex> lock(mu);
        timer_cv.wait(lock, [&] { return stopping; });
        return;
      }
      bool received = false;
      int source = -1;
      try {
        buffer = context->createUnboundBuffer(&memory[0], memory.size());
        {
          std::lock_guard<std::mutex> lock(mu);
          if (stopping) return;
          control_recv = buffer.get();
        }
        buffer->recv(peers, kControlSlot, 0, memory.size());
        received = buffer->waitRecv(&source, kForever);
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
      // A channel's abort carries its first failing step ahead of the reason.
      const bool has_step = kind == kAbortChannel && length >= 8;
      const uint64_t from = has_step ? get_u64(&memory[kControlHeader]) : 0;
      const Error error(static_cast<Code>(code), has_step
                                                     ? memory.substr(kControlHeader + 8, length - 8)
                                                     : memory.substr(kControlHeader, length));
      if (kind == kQuery && length == 8 && source >= 0) {
        bool arrived;
        {
          std::lock_guard<std::mutex> lock(mu);
          auto found = next_seq.find(channel);
          arrived = found != next_seq.end() && found->second > get_u64(&memory[kControlHeader]);
        }
        send_control(source, control_message(kReply, channel, arrived ? 1 : 0,
                                             memory.substr(kControlHeader, 8)));
        continue;
      }
      if (kind == kReply && length == 8 && source >= 0 && source < size) {
        std::lock_guard<std::mutex> lock(mu);
        auto found = queries.find({channel, get_u64(&memory[kControlHeader])});
        if (found != queries.end()) found->second[static_cast<size_t>(source)] = code == 1;
        control_cv.notify_all();
        continue;
      }
      if (kind == kLeaving && source >= 0 && source < size) {
        std::lock_guard<std::mutex> lock(mu);
        left.insert(source);
        control_cv.notify_all();
        continue;
      }
      if (kind == kAbortAll)
        apply_abort(error);
      else if (kind == kAbortChannel)
        apply_abort_channel(channel, from, error);
    }
  }

  // Liveness for iterators that exchange nothing per step (infinite pipelines): a worker
  // killed meanwhile would otherwise go unnoticed, since only exchanges read the connections.
  // Each worker watches the next one (a ring: one message per worker and period, whatever the
  // number of workers): every half second it sends it a kPing, and once that connection has
  // failed the send fails at once. A worker that closed its collective normally said so
  // first (kLeaving) and is not a fault; one that did not is lost, as in lost().
  void probe() {
    if (size == 1) return;
    const int peer = (rank + 1) % size;
    std::unique_lock<std::mutex> lock(mu);
    const Clock::time_point now = Clock::now();
    if (stopping || aborted || broken || left.count(peer) || now < next_probe) return;
    next_probe = now + std::chrono::milliseconds(500);
    std::string what;
    try {
      if (ping) {
        // The previous ping has normally left long ago; one still queued is kept, as
        // control_sent's are, since Gloo may yet send it.
        try {
          ping->waitSend(nullptr, std::chrono::milliseconds(1));
        } catch (const std::exception&) {
        }
        control_graveyard.emplace_back(std::move(ping), std::move(ping_message));
      }
      ping_message = control_message(kPing, 0, 0, std::string());
      ping = context->createUnboundBuffer(&ping_message[0], ping_message.size());
      ping->send(peer, kControlSlot, 0, ping_message.size());
      return;
    } catch (const std::exception& e) {
      what = e.what();
    }
    // A worker that leaves sends kLeaving before it closes, but the control thread may hand
    // it over after the closed connection shows here: wait for it a little.
    control_cv.wait_for(lock, std::chrono::seconds(1),
                        [&] { return stopping || aborted || broken || left.count(peer) > 0; });
    if (stopping || aborted || broken || left.count(peer)) return;
    gone.insert(peer);
    fail_for_lost_worker(lock, peer, "", what);
  }

  std::vector<std::string> all_gather(uint64_t channel, std::string payload);
  // Stops the threads and closes the connections; the destructor's work, also done by a
  // constructor that fails after starting the threads.
  void shutdown();
  [[noreturn]] void fail(const std::shared_ptr<Op>& op);
  void wait_recv(UnboundBuffer& buffer, int peer);
  void wait_send(UnboundBuffer& buffer, int peer);
  // A malformed message: this worker cannot go on, nor can the others without it.
  [[noreturn]] void abort_and_rethrow(const std::shared_ptr<Op>& op) {
    {
      std::lock_guard<std::mutex> lock(mu);
      pending.erase(op);
      graveyard.push_back(op);
    }
    try {
      throw;
    } catch (const Error& e) {
      if (apply_abort(e)) broadcast(kAbortAll, 0, e);
      throw;
    }
  }
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

void GlooCollective::Impl::wait_recv(UnboundBuffer& buffer, int peer) {
  try {
    if (!buffer.waitRecv(nullptr, kForever)) throw Interrupted{};
  } catch (const std::exception& e) {
    throw Lost{peer, e.what()};
  }
}

void GlooCollective::Impl::wait_send(UnboundBuffer& buffer, int peer) {
  try {
    if (!buffer.waitSend(nullptr, kForever)) throw Interrupted{};
  } catch (const std::exception& e) {
    throw Lost{peer, e.what()};
  }
}

void GlooCollective::Impl::fail(const std::shared_ptr<Op>& op) {
  std::unique_lock<std::mutex> lock(mu);
  pending.erase(op);
  graveyard.push_back(op);
  if (aborted) throw *aborted;
  if (broken) throw *broken;
  if (channel_aborted_at(op->channel, op->seq)) throw aborted_channels.at(op->channel);
  // Timed out: this worker gives up on the step, and so must every other (one that already
  // completed it fails its next step on the channel), or the workers would go on out of
  // step. The message names the workers that had not entered the step.
  lock.unlock();
  const std::vector<int> missing = not_arrived(op->channel, op->seq);
  lock.lock();
  if (aborted) throw *aborted;  // what came meanwhile wins, as it does on the others
  if (broken) throw *broken;
  if (channel_aborted_at(op->channel, op->seq)) throw aborted_channels.at(op->channel);
  const Error error(
      Code::kDeadlineExceeded,
      str_cat("collective: worker ", rank, " waited ", options.timeout.count(), " ms for ",
              missing.empty() ? std::string("the other workers") : workers_list(missing),
              " at step ", op->seq, " of channel ", op->channel,
              "; they had not arrived: they may only be slow (raise the timeout), or have stopped "
              "iterating or never started. A worker that failed reports its own error; every "
              "worker fails this step"));
  // Any abort of the channel so far begins at a later step: this timeout is the first cause.
  aborted_channels.insert_or_assign(op->channel, error);
  aborted_from[op->channel] = op->seq;
  interrupt_operations(&op->channel, op->seq);
  lock.unlock();
  broadcast(kAbortChannel, op->channel, error, op->seq);
  throw error;
}

std::vector<std::string> GlooCollective::Impl::all_gather(uint64_t channel, std::string payload) {
  auto op = std::make_shared<Op>();
  op->channel = channel;
  const auto n = static_cast<size_t>(size);
  {
    std::lock_guard<std::mutex> lock(mu);
    throw_if_failed(channel, next_seq[channel]);
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
  // Bruck's all-gather: in round k (d = 2^k) each worker sends the blocks it holds to the
  // worker d before it and receives as many from the worker d after it, so after
  // ceil(log2 W) rounds of one message each way it holds every block — in log-depth, where
  // sending to every worker would cost W - 1 messages a step. Blocks are held by offset:
  // offset i is worker (rank + i) mod W. A block is a payload's length and its first
  // kInline bytes.
  std::vector<uint64_t> lengths(n);
  std::vector<std::string> heads(n);
  lengths[0] = payload.size();
  heads[0] = payload.substr(0, kInline);
  size_t have = 1;
  int peer = -1;
  try {
    // Every round's receive is posted first: posting one tells its sender that it is ready,
    // and a send whose receive is announced leaves at once from the caller's thread; one
    // posted before that notice waits for it, and then leaves from Gloo's event loop (a
    // notice, a thread wake-up and a write more). Announced together, the later rounds'
    // notices travel while the first round runs.
    std::vector<UnboundBuffer*> round_recvs;
    for (size_t d = 1, round = 0; d < n; d *= 2, ++round) {
      const size_t count = std::min(d, n - d);
      const int from = static_cast<int>((static_cast<size_t>(rank) + d) % n);
      std::string& in = op->recv_msg.emplace_back(count * kMessage, '\0');
      peer = from;
      round_recvs.push_back(op->add(op->recvs, context->createUnboundBuffer(&in[0], in.size())));
      round_recvs.back()->recv(from, data_slot(channel, op->seq, round), 0, in.size());
    }
    auto in_msg = op->recv_msg.begin();
    for (size_t d = 1, round = 0; d < n; d *= 2, ++round, ++in_msg) {
      const size_t count = std::min(d, n - d);
      const int to = static_cast<int>((static_cast<size_t>(rank) + n - d) % n);
      const int from = static_cast<int>((static_cast<size_t>(rank) + d) % n);
      const uint64_t slot = data_slot(channel, op->seq, round);
      const std::string& in = *in_msg;
      std::string& out = op->send_msgs.emplace_back();
      out.resize(count * kLengthBytes);
      for (size_t i = 0; i < count; ++i) {
        put_u64(&out[i * kLengthBytes], lengths[i]);
        out += heads[i];
      }
      peer = to;
      op->add(op->sends, context->createUnboundBuffer(&out[0], out.size()))
          ->send(to, slot, 0, out.size());
      op->send_peers.push_back(to);
      wait_recv(*round_recvs[round], from);
      size_t at = count * kLengthBytes;
      for (size_t i = 0; i < count; ++i) {
        const uint64_t length = get_u64(&in[i * kLengthBytes]);
        const size_t head = static_cast<size_t>(std::min<uint64_t>(length, kInline));
        if (at + head > in.size())
          raise(Code::kInternal, "collective: worker ", from, " sent a malformed message at step ",
                op->seq, " of channel ", channel);
        lengths[have + i] = length;
        heads[have + i] = in.substr(at, head);
        at += head;
      }
      have += count;
    }
    // Long payloads: the rest of each, straight from its worker, now that every worker knows
    // every length.
    const bool any_long = std::any_of(lengths.begin(), lengths.end(),
                                      [](uint64_t length) { return length > kInline; });
    std::vector<std::string> rests(n);
    std::vector<std::pair<UnboundBuffer*, int> > rest_recvs;
    if (any_long) {
      const uint64_t rest_slot = data_slot(channel, op->seq, kRestExchange);
      for (size_t i = 1; i < n; ++i) {
        if (lengths[i] <= kInline) continue;
        const int p = static_cast<int>((static_cast<size_t>(rank) + i) % n);
        rests[i].assign(lengths[i] - kInline, '\0');
        peer = p;
        auto* b = op->add(op->recvs, context->createUnboundBuffer(&rests[i][0], rests[i].size()));
        b->recv(p, rest_slot, 0, rests[i].size());
        rest_recvs.emplace_back(b, p);
      }
      if (payload.size() > kInline) {
        std::string& rest = op->send_msgs.emplace_back(payload.substr(kInline));
        for (int p = 0; p < size; ++p) {
          if (p == rank) continue;
          peer = p;
          op->add(op->sends, context->createUnboundBuffer(&rest[0], rest.size()))
              ->send(p, rest_slot, 0, rest.size());
          op->send_peers.push_back(p);
        }
      }
      for (const auto& [b, p] : rest_recvs) wait_recv(*b, p);
    }
    for (size_t i = 0; i < op->sends.size(); ++i) wait_send(*op->sends[i], op->send_peers[i]);
    result[static_cast<size_t>(rank)] = std::move(payload);
    for (size_t i = 1; i < n; ++i) {
      std::string& out = result[(static_cast<size_t>(rank) + i) % n];
      out = std::move(heads[i]);
      if (lengths[i] > kInline) out += rests[i];
    }
  } catch (const Interrupted&) {
    fail(op);
  } catch (const Lost& lost_peer) {
    lost(lost_peer.peer, lost_peer.what, *op);
    fail(op);
  } catch (const Error&) {
    abort_and_rethrow(op);
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
  // The threads started here (Gloo's event loop, which does most of the writing, and ours)
  // inherit this thread's signal mask: with SIGPIPE blocked, a write to a worker that died
  // fails with EPIPE instead of killing the process.
  const BlockSigpipe block_sigpipe;
  Impl& s = *impl_;
  s.rank = rank;
  s.size = world_size;
  s.options = options;
  // Gloo's connect retries for up to 5 times its timeout, so it gets a fifth of ours: a peer
  // address that nobody serves any more (a store that kept a finished job's keys under the
  // same job id) then fails within the timeout. The rendezvous already waited for every
  // worker to publish its address, so live peers answer at once; still, a connection (and
  // its handshake, on a loaded machine) gets at least half a second, or the whole timeout
  // where that is shorter.
  const auto capped = std::min<std::chrono::milliseconds>(options.timeout, std::chrono::hours(1));
  const auto gloo_timeout = std::max<std::chrono::milliseconds>(
      capped / 5, std::min<std::chrono::milliseconds>(capped, std::chrono::milliseconds(500)));
  // Where to listen: the interface, else the address, of the options, else of the
  // environment, else this host's name. Gloo is given the numeric address, chosen here: it
  // crashes (SIGSEGV in CreateDeviceAttr) on a name with no address of this host.
  std::string iface_source = "interface", host_source = "address";
  if (options.iface.empty() && options.address.empty()) {
    if (const char* env = std::getenv("DINPUT_GLOO_IFACE"); env && *env) {
      options.iface = env;
      iface_source = "DINPUT_GLOO_IFACE";
    } else if (const char* env = std::getenv("DINPUT_GLOO_ADDRESS"); env && *env) {
      options.address = env;
      host_source = "DINPUT_GLOO_ADDRESS";
    }
  }
  std::string host = options.address;
  if (!options.iface.empty()) {
    host = interface_address(options.iface, str_cat("collective: ", iface_source));
    host_source = str_cat("network interface '", options.iface, "', whose address is");
  } else if (host.empty()) {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    host = name;
    host_source = "this host's name";
  }
  std::string why;
  bool loopback = false;
  const std::string address = listen_address(host, &why, &loopback);
  if (address.empty())
    raise(Code::kInvalidArgument, "collective: cannot listen on ", host_source, " '", host,
          "': ", why,
          host_source == "this host's name"
              ? " (set DINPUT_GLOO_IFACE, or the interface or address to listen on)"
              : "");
  // Workers on other hosts cannot reach a loopback address: they would fail to connect, or
  // reach a process of their own host, long after this one published it.
  if (loopback && world_size > 1 && options.refuse_loopback)
    raise(Code::kFailedPrecondition, "collective: worker ", rank, " of ", world_size,
          " would listen on the loopback address ", address, " (from ", host_source, " '", host,
          "'), which workers on other hosts cannot reach, and nothing shows that all ", world_size,
          " workers run on this host; set the network interface or address the others reach "
          "this host by (the collective's options, DINPUT_GLOO_IFACE or DINPUT_GLOO_ADDRESS), "
          "or allow loopback (the option, or DINPUT_GLOO_ALLOW_LOOPBACK=1) when every worker "
          "does run here");
  gloo::transport::tcp::attr attr;
  attr.hostname = address;
  try {
    s.device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    raise(Code::kInvalidArgument, "collective: cannot listen on ", host_source, " '", host,
          "': ", e.what());
  }
  s.context = std::make_shared<gloo::rendezvous::Context>(rank, world_size);
  s.context->setTimeout(gloo_timeout);
  s.store = store;
  auto keys = make_prefix_store(make_prefix_store(std::move(store), options.job_id), "gloo");
  // A timeout past kNoDeadlineMs means none; the store is given the longest that the clock
  // can hold (a longer one overflowed into an immediate timeout).
  GlooStoreAdapter adapter(keys, std::min<std::chrono::milliseconds>(
                                     options.timeout, std::chrono::milliseconds(kNoDeadlineMs)));
  try {
    // Each worker publishes its addresses under its rank, then connects to every other.
    s.context->connectFullMesh(adapter, s.device);
  } catch (const Error& e) {
    if (e.code() != Code::kDeadlineExceeded) throw;
    // Gloo waits for the workers one by one: name all those still missing. Each worker sets
    // two keys, its rank ("2") and "rank_2".
    std::vector<int> missing;
    for (int r = 0; r < world_size; ++r)
      if (r != rank && !keys->check({std::to_string(r), "rank_" + std::to_string(r)}))
        missing.push_back(r);
    raise(Code::kDeadlineExceeded, "collective: worker ", rank, " of ", world_size, " waited ",
          options.timeout.count(), " ms at the rendezvous for ",
          missing.empty() ? std::string("the other workers") : workers_list(missing),
          " to publish their addresses (", e.what(),
          "): they were not started, or use another rendezvous or job id");
  } catch (const gloo::Exception& e) {
    raise(Code::kUnavailable, "collective: worker ", rank, " of ", world_size,
          " could not connect to the other workers: ", e.what());
  } catch (const std::exception& e) {
    // Gloo's own checks (gloo::EnforceNotMet) fail this way, for one: workers of two jobs of
    // different sizes that share a job id on one store read each other's addresses.
    raise(Code::kFailedPrecondition, "collective: worker ", rank, " of ", world_size,
          " could not connect to the other workers (", e.what(),
          "): is another job using the same job id on this rendezvous store?");
  }
  s.timer = Thread([&s] { s.timer_loop(); });
  s.control = Thread([&s] { s.control_loop(); });
  // Connected is not yet joined: a worker that returned now, failed at once and closed its
  // connections would make a peer still connecting to it fail with "connection closed"
  // instead of hearing why. Every worker returns once every worker is connected.
  try {
    s.all_gather(kJoinChannel, std::string());
  } catch (...) {
    s.shutdown();
    throw;
  }
}

void GlooCollective::Impl::shutdown() {
  Impl& s = *this;
  // A normal close: the others' probes must not take the closed connections for a fault.
  bool healthy;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    healthy = !s.stopping && !s.aborted && !s.broken;
  }
  if (healthy && s.context) s.broadcast(kLeaving, 0, Error(Code::kOk, "leaving"));
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stopping = true;
    for (const auto& op : s.pending) op->interrupt();
    if (s.control_recv) s.control_recv->abortWaitRecv();
  }
  s.timer_cv.notify_all();
  if (s.timer.joinable()) s.timer.join();
  if (s.control.joinable()) s.control.join();
  // Connections first: only then can no Gloo thread touch the buffers left behind. Every
  // Gloo buffer holds the transport's context, which owns the connections (pairs), so
  // dropping the context would close nothing while a buffer lives: the event loop could
  // still complete a send or fail a receive (signalling the buffer's condition variable)
  // while the buffer is destroyed. Gloo guards that with a spin on a weak pointer, which is
  // enough on x86 but orders nothing that ThreadSanitizer can see. Destroying each pair
  // instead closes its socket under the pair's lock, the lock the event loop holds whenever
  // it touches one of our buffers, and waits for the loop to drop the socket: after that no
  // Gloo thread reaches the buffers, and all it did to them happened before. It is a soft
  // close (a FIN after what was already written), as the context's own destruction was.
  for (int p = 0; p < s.size; ++p)
    if (s.context) s.context->getPair(p).reset();
  // Every buffer holds the transport's context (and through it the device), so the buffers
  // go before the memory they point into, and only then are the messages freed.
  s.context.reset();
  s.device.reset();
  for (auto* sent : {&s.control_graveyard, &s.control_sent})
    for (auto& entry : *sent) entry.first.reset();
  for (auto& op : s.graveyard) {
    op->sends.clear();
    op->recvs.clear();
  }
  s.graveyard.clear();
  s.control_graveyard.clear();
  s.control_sent.clear();
}

GlooCollective::~GlooCollective() { impl_->shutdown(); }

int GlooCollective::num_workers() const { return impl_->size; }

std::chrono::milliseconds GlooCollective::timeout() const { return impl_->options.timeout; }

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
  uint64_t from;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    from = impl_->abort_step(channel);
  }
  if (impl_->apply_abort_channel(channel, from, error))
    impl_->broadcast(kAbortChannel, channel, error, from);
}

void GlooCollective::raise_if_failed(uint64_t channel) {
  impl_->probe();
  std::lock_guard<std::mutex> lock(impl_->mu);
  // As for the step this worker would take next: an abort of the channel by a worker that
  // left it later than that does not concern it.
  auto next = impl_->next_seq.find(channel);
  impl_->throw_if_failed(channel, next == impl_->next_seq.end() ? 0 : next->second);
}

std::shared_ptr<Collective> make_gloo_collective(int rank, int world_size,
                                                 std::shared_ptr<Store> store,
                                                 const GlooOptions& options) {
  return std::make_shared<GlooCollective>(rank, world_size, std::move(store), options);
}

}  // namespace dinput

#endif  // DINPUT_HAVE_GLOO
