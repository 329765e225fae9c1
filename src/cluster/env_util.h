// Small pieces shared by the cluster resolvers: reading variables and checking their values.
// Each failure is INVALID_ARGUMENT naming the variable and the value it had.
#pragma once

#include <optional>
#include <string>

#include "cluster/cluster.h"

namespace dinput::cluster_detail {

// The variable's value; nullopt when unset or "".
std::optional<std::string> get(const Environment& env, const std::string& name);

// `value` of variable `name` as an integer >= min (decimal digits only: a sign, spaces or a
// suffix are refused, since a launcher never writes them and a typo should not read as 0).
int parse_int(const std::string& name, const std::string& value, int min);
// The variable as an integer >= min; nullopt when unset.
std::optional<int> get_int(const Environment& env, const std::string& name, int min);
// Like get_int, but INVALID_ARGUMENT ("`source`: NAME is not set") when unset.
int require_int(const Environment& env, const std::string& name, int min,
                const std::string& source);
// A TCP port, 1..65535.
int parse_port(const std::string& name, const std::string& value);

// "HOST:PORT", with brackets around an IPv6 host.
std::string host_port(const std::string& host, int port);
// Checks a rendezvous URL (tcp://HOST:PORT, file://DIR, redis://HOST:PORT) read from `name`
// and returns the host of a tcp:// URL ("" for the other schemes).
std::string check_rdzv_url(const std::string& name, const std::string& url);

// Checks rank < world_size and local_rank < local_world_size <= world_size where known;
// the names are those of the variables the values came from.
void check_ranks(const ClusterSpec& spec, const std::string& rank_name,
                 const std::string& size_name, const std::string& local_rank_name,
                 const std::string& local_size_name);

// A value for a message: quoted, and cut after 200 bytes.
std::string shown(const std::string& value);

}  // namespace dinput::cluster_detail
