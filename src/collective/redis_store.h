// The redis://HOST:PORT rendezvous store, through Gloo's gloo::rendezvous::RedisStore (which
// polls EXISTS every 10 ms while it waits). Keys stay on the Redis server after the job: give
// every job run its own job id.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "collective/store.h"

namespace dinput {

// Whether this build has the redis:// store (Gloo was found at build time).
bool redis_store_available();

// A client of database `db` of the Redis server at host:port. Connecting retries until
// `connect_timeout`, then UNAVAILABLE naming the address; UNIMPLEMENTED in a build without
// Gloo.
std::shared_ptr<Store> make_redis_store(const std::string& host, int port, int db,
                                        std::chrono::milliseconds connect_timeout);

}  // namespace dinput
