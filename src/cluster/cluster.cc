#include "cluster/cluster.h"

#include <cstdlib>
#include <limits>
#include <utility>

#include "cluster/env_util.h"
#include "core/quote.h"
#include "core/status.h"

namespace dinput {

namespace cluster_detail {

std::optional<std::string> get(const Environment& env, const std::string& name) {
  std::optional<std::string> value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::string shown(const std::string& value) {
  constexpr size_t kMax = 200;
  if (value.size() <= kMax) return quoted(value);
  return quoted(value.substr(0, kMax)) + "... (" + std::to_string(value.size()) + " bytes)";
}

int parse_int(const std::string& name, const std::string& value, int min) {
  // At most 10 digits, checked before any is read: more could overflow n.
  bool ok = !value.empty() && value.size() <= 10;
  long long n = 0;
  for (char c : ok ? value : std::string()) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    n = n * 10 + (c - '0');
  }
  if (!ok || n > std::numeric_limits<int>::max())
    raise(Code::kInvalidArgument, name, "=", shown(value), " is not a non-negative integer",
          min > 0 ? str_cat(" >= ", min) : std::string());
  if (n < min) raise(Code::kInvalidArgument, name, "=", shown(value), " must be >= ", min);
  return static_cast<int>(n);
}

std::optional<int> get_int(const Environment& env, const std::string& name, int min) {
  std::optional<std::string> value = get(env, name);
  if (!value) return std::nullopt;
  return parse_int(name, *value, min);
}

int require_int(const Environment& env, const std::string& name, int min,
                const std::string& source) {
  std::optional<int> value = get_int(env, name, min);
  if (!value) raise(Code::kInvalidArgument, source, ": ", name, " is not set");
  return *value;
}

int parse_port(const std::string& name, const std::string& value) {
  int port = parse_int(name, value, 1);
  if (port > 65535)
    raise(Code::kInvalidArgument, name, "=", shown(value), " is not a TCP port (1..65535)");
  return port;
}

std::string host_port(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return str_cat("[", host, "]:", port);
  return str_cat(host, ":", port);
}

namespace {

// Splits "HOST:PORT" or "[V6]:PORT"; INVALID_ARGUMENT naming `name` and `whole` otherwise.
std::pair<std::string, int> split_host_port(const std::string& name, const std::string& whole,
                                            const std::string& text) {
  std::string host;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      raise(Code::kInvalidArgument, name, "=", shown(whole), " is not HOST:PORT ([IPV6]:PORT)");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos)
      raise(Code::kInvalidArgument, name, "=", shown(whole), " has no port (HOST:PORT)");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos)
      raise(Code::kInvalidArgument, name, "=", shown(whole),
            ": an IPv6 address needs brackets ([ADDRESS]:PORT)");
  }
  if (host.empty()) raise(Code::kInvalidArgument, name, "=", shown(whole), " has no host");
  try {
    return {host, parse_port(name, port)};
  } catch (const Error&) {
    raise(Code::kInvalidArgument, name, "=", shown(whole), ": the port ", shown(port),
          " is not a TCP port (1..65535)");
  }
}

}  // namespace

std::string check_rdzv_url(const std::string& name, const std::string& url) {
  auto scheme_rest = [&](const char* scheme) -> std::optional<std::string> {
    std::string prefix = std::string(scheme) + "://";
    if (url.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
    return url.substr(prefix.size());
  };
  if (auto rest = scheme_rest("tcp")) return split_host_port(name, url, *rest).first;
  if (auto rest = scheme_rest("redis")) {
    // A database number or other path after the address is the store's business.
    split_host_port(name, url, rest->substr(0, rest->find('/')));
    return "";
  }
  if (auto rest = scheme_rest("file")) {
    if (rest->empty()) raise(Code::kInvalidArgument, name, "=", shown(url), " names no directory");
    return "";
  }
  raise(Code::kInvalidArgument, name, "=", shown(url),
        " is not a rendezvous URL (tcp://HOST:PORT, file://DIR or redis://HOST:PORT)");
}

void check_ranks(const ClusterSpec& spec, const std::string& rank_name,
                 const std::string& size_name, const std::string& local_rank_name,
                 const std::string& local_size_name) {
  if (spec.world_size < 1)
    raise(Code::kInvalidArgument, size_name, "=", spec.world_size, " must be >= 1");
  if (spec.rank >= spec.world_size)
    raise(Code::kInvalidArgument, rank_name, "=", spec.rank, " is not below ", size_name, "=",
          spec.world_size);
  if (spec.local_world_size >= 0 && spec.local_world_size > spec.world_size)
    raise(Code::kInvalidArgument, local_size_name, "=", spec.local_world_size, " is above ",
          size_name, "=", spec.world_size);
  if (spec.local_rank >= 0 && spec.local_world_size >= 0 &&
      spec.local_rank >= spec.local_world_size)
    raise(Code::kInvalidArgument, local_rank_name, "=", spec.local_rank, " is not below ",
          local_size_name, "=", spec.local_world_size);
}

// The four numbers a launcher names the same way every time (SLURM, which falls back between
// variables, reads its own): rank and world size required, the local pair optional. Errors
// name spec.source, set before.
void read_ranks(ClusterSpec& spec, const Environment& env, const std::string& rank_name,
                const std::string& size_name, const std::string& local_rank_name,
                const std::string& local_size_name) {
  spec.rank = require_int(env, rank_name, 0, spec.source);
  spec.world_size = require_int(env, size_name, 1, spec.source);
  spec.local_rank = get_int(env, local_rank_name, 0).value_or(-1);
  spec.local_world_size = get_int(env, local_size_name, 1).value_or(-1);
  check_ranks(spec, rank_name, size_name, local_rank_name, local_size_name);
}

}  // namespace cluster_detail

using namespace cluster_detail;

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    // getenv is safe beside other readers; the library never writes the environment.
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

Environment map_environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

namespace {

// The port for a launcher that names a host but no port: the caller's, DINPUT_RDZV_PORT,
// then MASTER_PORT; 0 when none.
int rendezvous_port(const Environment& env, const ResolveOptions& options) {
  if (options.port != 0) {
    if (options.port < 1 || options.port > 65535)
      raise(Code::kInvalidArgument, "the rendezvous port ", options.port,
            " is not a TCP port (1..65535)");
    return options.port;
  }
  for (const char* name : {"DINPUT_RDZV_PORT", "MASTER_PORT"})
    if (auto value = get(env, name)) return parse_port(name, *value);
  return 0;
}

// What every source shares: DINPUT_RDZV_URL replaces the launcher's rendezvous, and
// DINPUT_JOB_ID its job id, so that a job can pick a file:// or redis:// store or keep two
// jobs apart whatever started it.
void apply_overrides(ClusterSpec& spec, const Environment& env) {
  if (auto url = get(env, "DINPUT_RDZV_URL")) {
    std::string host = check_rdzv_url("DINPUT_RDZV_URL", *url);
    spec.rdzv_url = *url;
    if (spec.coordinator_host.empty()) spec.coordinator_host = host;
  }
  if (auto job = get(env, "DINPUT_JOB_ID")) spec.job_id = *job;
}

// tcp://HOST:PORT from a host and the port of rendezvous_port, or "" without either.
std::string tcp_url(const std::string& host, int port) {
  if (host.empty() || port == 0) return "";
  return "tcp://" + host_port(host, port);
}

ClusterSpec resolve_explicit(const Environment& env) {
  ClusterSpec spec;
  spec.source = "explicit";
  read_ranks(spec, env, "DINPUT_RANK", "DINPUT_WORLD_SIZE", "DINPUT_LOCAL_RANK",
             "DINPUT_LOCAL_WORLD_SIZE");
  apply_overrides(spec, env);
  return spec;
}

// MASTER_ADDR with the port of rendezvous_port; both or neither must be known.
void master_rendezvous(ClusterSpec& spec, const Environment& env, const ResolveOptions& options,
                       bool required, const std::string& source) {
  std::optional<std::string> addr = get(env, "MASTER_ADDR");
  int port = rendezvous_port(env, options);
  if (addr) {
    // An IPv6 address may come with brackets; the host is kept without them.
    std::string host = *addr;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    spec.coordinator_host = host;
  }
  if (get(env, "DINPUT_RDZV_URL")) return;  // apply_overrides sets the URL
  if (addr && port == 0)
    raise(Code::kInvalidArgument, source, ": MASTER_ADDR=", shown(*addr),
          " is set but no port is: set MASTER_PORT or DINPUT_RDZV_PORT");
  if (!addr && (port != 0 || required))
    raise(Code::kInvalidArgument, source, ": MASTER_ADDR is not set",
          port != 0 ? " (a port is)" : "", "; set it, or DINPUT_RDZV_URL");
  spec.rdzv_url = tcp_url(spec.coordinator_host, port);
}

ClusterSpec resolve_torchrun(const Environment& env, const ResolveOptions& options) {
  ClusterSpec spec;
  spec.source = "torchrun";
  read_ranks(spec, env, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  // torchrun always sets MASTER_ADDR and MASTER_PORT (its c10d store's address).
  master_rendezvous(spec, env, options, /*required=*/true, "torchrun");
  if (auto run_id = get(env, "TORCHELASTIC_RUN_ID")) spec.job_id = *run_id;
  apply_overrides(spec, env);
  return spec;
}

ClusterSpec resolve_mpi(const Environment& env, const ResolveOptions& options) {
  ClusterSpec spec;
  spec.source = "mpi";
  read_ranks(spec, env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
             "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE");
  // mpirun names no rendezvous address of its own: DINPUT_RDZV_URL or MASTER_ADDR/PORT.
  master_rendezvous(spec, env, options, /*required=*/false, "mpi");
  // The PMIx namespace is the job's name under Open MPI's launcher.
  if (auto ns = get(env, "PMIX_NAMESPACE")) spec.job_id = *ns;
  apply_overrides(spec, env);
  return spec;
}

// The first of `names` that is set, with its value.
std::optional<std::pair<std::string, std::string>> first_set(
    const Environment& env, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (auto value = get(env, name)) return std::make_pair(std::string(name), *value);
  return std::nullopt;
}

ClusterSpec resolve_slurm(const Environment& env, const ResolveOptions& options) {
  ClusterSpec spec;
  spec.source = "slurm";
  spec.rank = require_int(env, "SLURM_PROCID", 0, "slurm");
  // Inside srun the step's task count is the job's size; SLURM_NTASKS is the allocation's
  // when the step uses fewer tasks.
  auto ntasks = first_set(env, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"});
  if (!ntasks)
    raise(Code::kInvalidArgument,
          "slurm: neither SLURM_STEP_NUM_TASKS nor SLURM_NTASKS is set (start the workers "
          "with srun)");
  const std::string size_name = ntasks->first;
  spec.world_size = parse_int(size_name, ntasks->second, 1);
  spec.local_rank = get_int(env, "SLURM_LOCALID", 0).value_or(-1);

  std::vector<std::string> hosts;
  auto nodelist = first_set(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  if (nodelist) hosts = expand_slurm_nodelist(nodelist->second, nodelist->first);
  if (!hosts.empty()) spec.coordinator_host = hosts.front();

  // The tasks on this node: the step's per-node counts at this node's place in the step's
  // node list, else the user's --ntasks-per-node.
  std::string local_size_name = "SLURM_NTASKS_PER_NODE";
  auto per_node = get(env, "SLURM_STEP_TASKS_PER_NODE");
  auto node_name = get(env, "SLURMD_NODENAME");
  if (per_node && node_name && nodelist && nodelist->first == "SLURM_STEP_NODELIST") {
    std::vector<int> counts = expand_slurm_tasks_per_node(*per_node, "SLURM_STEP_TASKS_PER_NODE");
    for (size_t i = 0; i < hosts.size() && i < counts.size(); ++i)
      if (hosts[i] == *node_name) {
        spec.local_world_size = counts[i];
        local_size_name = "SLURM_STEP_TASKS_PER_NODE";
        break;
      }
  }
  if (spec.local_world_size < 0)
    spec.local_world_size = get_int(env, "SLURM_NTASKS_PER_NODE", 1).value_or(-1);
  check_ranks(spec, "SLURM_PROCID", size_name, "SLURM_LOCALID", local_size_name);

  // SLURM gives hosts but no port: the caller's, DINPUT_RDZV_PORT or MASTER_PORT.
  if (spec.coordinator_host.empty())
    if (auto addr = get(env, "MASTER_ADDR")) spec.coordinator_host = *addr;
  spec.rdzv_url = tcp_url(spec.coordinator_host, rendezvous_port(env, options));

  if (auto job = first_set(env, {"SLURM_JOB_ID", "SLURM_JOBID"})) {
    spec.job_id = job->second;
    if (auto step = first_set(env, {"SLURM_STEP_ID", "SLURM_STEPID"}))
      spec.job_id += "." + step->second;
  }
  apply_overrides(spec, env);
  return spec;
}

ClusterSpec resolve_tf_config(const Environment& env, const ResolveOptions& options) {
  std::optional<std::string> value = get(env, "TF_CONFIG");
  if (!value) raise(Code::kInvalidArgument, "tf_config: TF_CONFIG is not set");
  // The chief's address carries a port; only a port given on purpose replaces it (MASTER_PORT
  // belongs to torch jobs).
  int port = options.port;
  if (port == 0)
    if (auto p = get(env, "DINPUT_RDZV_PORT")) port = parse_port("DINPUT_RDZV_PORT", *p);
  if (port < 0 || port > 65535)
    raise(Code::kInvalidArgument, "the rendezvous port ", port, " is not a TCP port (1..65535)");
  ClusterSpec spec = parse_tf_config(*value, port);
  apply_overrides(spec, env);
  return spec;
}

// When "auto" picks a source: when any of its groups has every variable of the group set (a
// source is then resolved, and its errors are reported rather than skipped). torchrun needs
// RANK and WORLD_SIZE together: RANK alone is too common a name to mean torchrun.
struct Detector {
  const char* source;
  std::vector<std::vector<const char*>> any_of;
};
const std::vector<Detector>& detectors() {
  static const std::vector<Detector> kDetectors = {
      {"explicit", {{"DINPUT_RANK"}, {"DINPUT_WORLD_SIZE"}}},
      {"tf_config", {{"TF_CONFIG"}}},
      {"torchrun", {{"TORCHELASTIC_RUN_ID"}, {"RANK", "WORLD_SIZE"}}},
      {"mpi", {{"OMPI_COMM_WORLD_RANK"}, {"OMPI_COMM_WORLD_SIZE"}}},
      {"slurm", {{"SLURM_PROCID"}}},
  };
  return kDetectors;
}

}  // namespace

const std::vector<std::string>& cluster_sources() {
  static const std::vector<std::string> kSources = {"explicit", "tf_config", "torchrun", "mpi",
                                                    "slurm"};
  return kSources;
}

ClusterSpec resolve_cluster(const std::string& source, const Environment& env,
                            const ResolveOptions& options) {
  if (source == "explicit") return resolve_explicit(env);
  if (source == "tf_config") return resolve_tf_config(env, options);
  if (source == "torchrun") return resolve_torchrun(env, options);
  if (source == "mpi") return resolve_mpi(env, options);
  if (source == "slurm") return resolve_slurm(env, options);
  if (source != "auto")
    raise(Code::kInvalidArgument, "unknown cluster source ", quoted(source),
          " (expected auto, explicit, tf_config, torchrun, mpi or slurm)");
  std::string tried;
  for (const Detector& d : detectors()) {
    std::string names;
    for (const auto& group : d.any_of) {
      bool all = true;
      std::string group_names;
      for (const char* name : group) {
        all = all && get(env, name).has_value();
        group_names += group_names.empty() ? name : std::string("+") + name;
      }
      if (all) return resolve_cluster(d.source, env, options);
      names += names.empty() ? group_names : " or " + group_names;
    }
    tried += str_cat(tried.empty() ? "" : ", ", d.source, " (", names, ")");
  }
  raise(Code::kNotFound, "no cluster found in the environment; tried, in order: ", tried,
        ". Start the process with a launcher (torchrun, srun, mpirun), set TF_CONFIG, or set "
        "DINPUT_RANK, DINPUT_WORLD_SIZE and DINPUT_RDZV_URL");
}

ClusterSpec make_cluster(int rank, int world_size, const std::string& rdzv_url) {
  ClusterSpec spec;
  spec.source = "explicit";
  spec.rank = rank;
  spec.world_size = world_size;
  if (world_size < 1) raise(Code::kInvalidArgument, "world_size must be >= 1, got ", world_size);
  if (rank < 0 || rank >= world_size)
    raise(Code::kInvalidArgument, "rank must be in 0..world_size-1 = 0..", world_size - 1, ", got ",
          rank);
  if (!rdzv_url.empty()) spec.coordinator_host = check_rdzv_url("rdzv_url", rdzv_url);
  spec.rdzv_url = rdzv_url;
  return spec;
}

void require_input_worker(const ClusterSpec& spec, const std::string& what) {
  if (spec.input_worker) return;
  raise(Code::kFailedPrecondition, what, ": this process is TF_CONFIG task ", spec.task_type, ":",
        spec.task_index,
        ", which reads no input: only the chief and worker tasks join the input job (a ",
        spec.task_type, " task can still read the cluster's fields)");
}

}  // namespace dinput
