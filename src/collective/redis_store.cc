#include "collective/redis_store.h"

#include "core/status.h"

#ifdef DINPUT_HAVE_GLOO_REDIS
// Debian installs hiredis.h under hiredis/; Gloo's header includes it either way.
#ifndef HIREDIS_NESTED_INCLUDE
#define HIREDIS_NESTED_INCLUDE 1
#endif
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/rendezvous/redis_store.h>

#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>
#endif

namespace dinput {

#ifndef DINPUT_HAVE_GLOO_REDIS

bool redis_store_available() { return false; }

std::shared_ptr<Store> make_redis_store(const std::string& host, int port, int,
                                        std::chrono::milliseconds) {
  raise(Code::kUnimplemented, "rendezvous store redis://", host, ":", port,
        ": this dinput was built without Gloo, or with a Gloo without Redis (the redis:// "
        "store uses Gloo's RedisStore; install libgloo-dev and rebuild, or use tcp:// or "
        "file://)");
}

#else

bool redis_store_available() { return true; }

namespace {

using Clock = std::chrono::steady_clock;

// Gloo's store, with its hiredis connection reachable for the two commands it lacks: a set
// that replaces (Gloo's refuses a key already set) and an atomic add (INCRBY).
class Connection final : public gloo::rendezvous::RedisStore {
 public:
  using RedisStore::RedisStore;
  redisContext* context() { return redis_; }
};

// Frees a hiredis reply on every path.
struct ReplyGuard {
  redisReply* reply;
  ~ReplyGuard() {
    if (reply) freeReplyObject(reply);
  }
};

class RedisStore final : public Store {
 public:
  RedisStore(std::string host, int port, int db, std::chrono::milliseconds connect_timeout)
      : host_(std::move(host)),
        port_(port),
        db_(db),
        url_(db == 0 ? str_cat("redis://", host_, ":", port_)
                     : str_cat("redis://", host_, ":", port_, "/", db)),
        connect_timeout_(connect_timeout) {
    idle_.push_back(connect(connect_timeout_));
  }

  void set(const std::string& key, const std::string& value) override {
    with_connection([&](Connection& c) {
      ReplyGuard r{static_cast<redisReply*>(redisCommand(c.context(), "SET %b %b", key.data(),
                                                         key.size(), value.data(), value.size()))};
      expect(c, r.reply, "set of key '" + key + "'");
    });
  }

  std::vector<std::string> get(const std::vector<std::string>& keys,
                               std::chrono::milliseconds timeout) override {
    std::vector<std::string> values;
    with_connection([&](Connection& c) {
      if (keys.empty()) return;
      bool present = false;
      if (timeout.count() <= 0) {
        // Gloo reads a zero timeout as "wait forever": look once instead.
        present = c.check(keys);
      } else {
        try {
          c.wait(keys, timeout);
          present = true;
        } catch (const gloo::IoException&) {
          // Gloo's wait timed out.
        }
      }
      if (!present) {
        std::string missing;
        for (const auto& k : keys)
          if (!c.check({k})) missing += (missing.empty() ? "" : ", ") + k;
        raise(Code::kDeadlineExceeded, "rendezvous store ", url_, ": keys not set within ",
              timeout.count(), " ms: ", missing);
      }
      for (const auto& k : keys) {
        std::vector<char> v = c.RedisStore::get(k);
        values.emplace_back(v.begin(), v.end());
      }
    });
    return values;
  }

  int64_t add(const std::string& key, int64_t delta) override {
    int64_t now = 0;
    with_connection([&](Connection& c) {
      ReplyGuard r{static_cast<redisReply*>(redisCommand(
          c.context(), "INCRBY %b %lld", key.data(), key.size(), static_cast<long long>(delta)))};
      expect(c, r.reply, "add to key '" + key + "'");
      if (r.reply->type != REDIS_REPLY_INTEGER)
        raise(Code::kUnavailable, "rendezvous store ", url_, ": unexpected reply to INCRBY");
      now = r.reply->integer;
    });
    return now;
  }

  bool check(const std::vector<std::string>& keys) override {
    if (keys.empty()) return true;
    bool all = false;
    with_connection([&](Connection& c) { all = c.check(keys); });
    return all;
  }

 private:
  // Runs `fn` on a connection of its own (hiredis connections are not thread-safe, and a long
  // wait must not hold up other threads). Gloo's errors become dinput's: a connection that
  // failed is dropped, the next operation opens another.
  template <typename Fn>
  void with_connection(Fn&& fn) {
    std::unique_ptr<Connection> c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        c = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!c) c = connect(std::min(connect_timeout_, std::chrono::milliseconds(5000)));
    try {
      fn(*c);
    } catch (const Error& e) {
      if (e.code() == Code::kUnavailable) throw;
      std::lock_guard<std::mutex> lock(mu_);
      idle_.push_back(std::move(c));
      throw;
    } catch (const gloo::EnforceNotMet& e) {
      raise(Code::kUnavailable, "rendezvous store ", url_, ": ", e.what());
    } catch (const gloo::Exception& e) {
      raise(Code::kUnavailable, "rendezvous store ", url_, ": ", e.what());
    }
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(c));
  }

  void expect(Connection& c, redisReply* reply, const std::string& what) {
    if (!reply) {
      raise(Code::kUnavailable, "rendezvous store ", url_, ": ", what, ": ",
            c.context()->errstr[0] ? c.context()->errstr : "connection lost");
    }
    if (reply->type == REDIS_REPLY_ERROR)
      raise(Code::kFailedPrecondition, "rendezvous store ", url_, ": ", what, ": ",
            std::string(reply->str, reply->len));
  }

  // A connection, retrying with a growing pause for `patience`. Each try first connects with
  // hiredis alone: Gloo's constructor throws on failure without freeing its context.
  std::unique_ptr<Connection> connect(std::chrono::milliseconds patience) {
    auto start = Clock::now();
    auto deadline = start + patience;
    auto pause = std::chrono::milliseconds(10);
    std::string last;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      left = std::max(left, std::chrono::milliseconds(100));
      timeval tv{static_cast<time_t>(left.count() / 1000),
                 static_cast<suseconds_t>((left.count() % 1000) * 1000)};
      redisContext* probe = redisConnectWithTimeout(host_.c_str(), port_, tv);
      if (probe && probe->err == 0) {
        redisFree(probe);
        try {
          auto c = std::make_unique<Connection>(host_, port_);
          if (db_ != 0) select_db(*c);
          return c;
        } catch (const gloo::EnforceNotMet& e) {
          last = e.what();
        }
      } else {
        last = probe ? probe->errstr : "cannot allocate a hiredis context";
        if (probe) redisFree(probe);
      }
      auto now = Clock::now();
      if (now >= deadline) break;
      std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    }
    auto tried =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    raise(Code::kUnavailable, "rendezvous store ", url_, ": cannot connect (tried for ", tried,
          " ms): ", last);
  }

  // Gloo's commands then run on database db_ of the connection.
  void select_db(Connection& c) {
    ReplyGuard r{static_cast<redisReply*>(redisCommand(c.context(), "SELECT %d", db_))};
    expect(c, r.reply, str_cat("select of database ", db_));
  }

  std::string host_;
  int port_;
  int db_;
  std::string url_;
  std::chrono::milliseconds connect_timeout_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection> > idle_;
};

}  // namespace

std::shared_ptr<Store> make_redis_store(const std::string& host, int port, int db,
                                        std::chrono::milliseconds connect_timeout) {
  return std::make_shared<RedisStore>(host, port, db, connect_timeout);
}

#endif

}  // namespace dinput
