// TF_CONFIG, mapped to workers as TensorFlow's multi-worker strategies map it: the chief and
// the workers read input (the chief is worker 0, worker i is i + the number of chiefs); ps
// and evaluator tasks may be in the cluster but read none.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/env_util.h"
#include "core/quote.h"
#include "core/status.h"

namespace dinput {

using cluster_detail::shown;
using json = nlohmann::json;

namespace {

const char* const kJobs[] = {"chief", "worker", "ps", "evaluator"};

bool known_job(const std::string& name) {
  for (const char* job : kJobs)
    if (name == job) return true;
  return false;
}

// The JSON type of `v` with its article, for messages: "an object", "a string", "null".
std::string type_name(const json& v) {
  const std::string name = v.type_name();
  if (v.is_null()) return name;
  return (name[0] == 'a' || name[0] == 'o' ? "an " : "a ") + name;
}

}  // namespace

ClusterSpec parse_tf_config(const std::string& value, int port) {
  auto fail = [&](auto&&... why) {
    raise(Code::kInvalidArgument, "TF_CONFIG=", shown(value), ": ",
          std::forward<decltype(why)>(why)...);
  };
  json config;
  try {
    config = json::parse(value);
  } catch (const json::parse_error& e) {
    // nlohmann's message starts with its own tag; e.byte counts the bytes read, so the byte
    // at fault is at offset e.byte - 1.
    std::string what = e.what();
    if (size_t tag = what.find("] "); tag != std::string::npos) what = what.substr(tag + 2);
    fail("not valid JSON at offset ", e.byte > 0 ? e.byte - 1 : 0, " (", what, ")");
  } catch (const json::exception& e) {
    // Valid syntax the parser still refuses, such as a number too large for a double.
    std::string what = e.what();
    if (size_t tag = what.find("] "); tag != std::string::npos) what = what.substr(tag + 2);
    fail("not usable JSON (", what, ")");
  }
  if (!config.is_object()) fail("expected a JSON object, got ", type_name(config));

  auto cluster_it = config.find("cluster");
  if (cluster_it == config.end()) fail("no \"cluster\"");
  const json& cluster = *cluster_it;
  if (!cluster.is_object()) fail("\"cluster\" is ", type_name(cluster), ", not an object");
  std::vector<std::string> jobs[4];  // indexed like kJobs
  for (auto it = cluster.begin(); it != cluster.end(); ++it) {
    if (!known_job(it.key()))
      fail("cluster job ", quoted(it.key()), " is none of chief, worker, ps and evaluator");
    if (!it.value().is_array())
      fail("cluster.", it.key(), " is ", type_name(it.value()),
           ", not a list of \"host:port\" addresses");
    std::vector<std::string> addresses;
    for (size_t i = 0; i < it.value().size(); ++i) {
      const json& a = it.value()[i];
      if (!a.is_string())
        fail("cluster.", it.key(), "[", i, "] is ", type_name(a), ", not a \"host:port\" string");
      addresses.push_back(a.get<std::string>());
    }
    for (size_t j = 0; j < 4; ++j)
      if (it.key() == kJobs[j]) jobs[j] = std::move(addresses);
  }
  const auto& chiefs = jobs[0];
  const auto& workers = jobs[1];
  if (chiefs.size() > 1) fail("cluster.chief has ", chiefs.size(), " tasks; at most 1 is allowed");
  if (jobs[3].size() > 1)
    fail("cluster.evaluator has ", jobs[3].size(), " tasks; at most 1 is allowed");

  auto task_it = config.find("task");
  if (task_it == config.end() || !task_it->is_object())
    fail("no \"task\" object saying which task this process is");
  const json& task = *task_it;
  auto type_it = task.find("type");
  if (type_it == task.end() || !type_it->is_string()) fail("task.type is missing or not a string");
  const std::string type = type_it->get<std::string>();
  if (!known_job(type))
    fail("task.type ", quoted(type), " is none of chief, worker, ps and evaluator");
  int index = 0;  // TensorFlow's default
  if (auto index_it = task.find("index"); index_it != task.end()) {
    if (!index_it->is_number_integer() || index_it->get<long long>() < 0 ||
        index_it->get<long long>() > 1 << 30)
      fail("task.index ", index_it->dump(), " is not a non-negative integer");
    index = index_it->get<int>();
  }
  size_t job = 0;
  while (type != kJobs[job]) ++job;
  // An evaluator usually runs beside the cluster rather than in it, so TensorFlow accepts
  // one that the cluster does not list; every other task must be listed.
  if (!cluster.contains(type) && type != "evaluator")
    fail("task.type ", quoted(type), " is not a job of the cluster");
  if (cluster.contains(type) && static_cast<size_t>(index) >= jobs[job].size())
    fail("task.index ", index, " is out of range: cluster.", type, " has ", jobs[job].size(),
         " task", jobs[job].size() == 1 ? "" : "s");

  ClusterSpec spec;
  spec.source = "tf_config";
  spec.task_type = type;
  spec.task_index = index;
  spec.world_size = static_cast<int>(chiefs.size() + workers.size());
  if (spec.world_size == 0) fail("the cluster has no chief or worker task to read input");
  if (type == "chief") {
    spec.rank = 0;
  } else if (type == "worker") {
    spec.rank = index + static_cast<int>(chiefs.size());
  } else {
    spec.rank = -1;
    spec.input_worker = false;
  }
  const bool from_chief = !chiefs.empty();
  const std::string& address = from_chief ? chiefs[0] : workers[0];
  const std::string field = from_chief ? "cluster.chief[0]" : "cluster.worker[0]";
  // The coordinator is the chief, or worker 0 without one: the worker of rank 0.
  std::string host = cluster_detail::check_rdzv_url("TF_CONFIG " + field, "tcp://" + address);
  spec.coordinator_host = host;
  spec.rdzv_url = port != 0 ? "tcp://" + cluster_detail::host_port(host, port) : "tcp://" + address;
  return spec;
}

}  // namespace dinput
