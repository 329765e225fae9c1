// Cluster resolvers: where a worker process learns its place in a multi-process job (its rank,
// the number of workers, the rendezvous address) from what the launcher that started it
// already set: TF_CONFIG, SLURM's srun, torchrun, Open MPI's mpirun, or dinput's own DINPUT_*
// variables. docs/multi-process.md ("Cluster resolvers") describes every variable read.
//
// Resolvers read an Environment rather than the process environment directly, so that tests
// can give them any set of variables without touching (or racing on) the real one. Every
// malformed or missing variable is INVALID_ARGUMENT naming the variable and its value.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dinput {

// One process's place in a job. Immutable once resolved.
struct ClusterSpec {
  // This process's worker index in 0..world_size-1; -1 for a TF_CONFIG task that is not an
  // input worker (ps, evaluator).
  int rank = 0;
  // The number of input workers in the job.
  int world_size = 1;
  // The process's index among the workers on its host, and their number; -1 when the
  // launcher does not say.
  int local_rank = -1;
  int local_world_size = -1;
  // tcp://HOST:PORT, file://DIR or redis://HOST:PORT; "" when nothing names one (a SLURM job
  // without a port, say).
  std::string rdzv_url;
  // The host of the worker of rank 0 (TF_CONFIG's chief, SLURM's first node, MASTER_ADDR);
  // "" when unknown. Without brackets for an IPv6 address.
  std::string coordinator_host;
  // The launcher's name of the job ("" when it has none), which namespaces the rendezvous
  // keys: DINPUT_JOB_ID, SLURM_JOB_ID[.SLURM_STEP_ID], TORCHELASTIC_RUN_ID, ...
  std::string job_id;
  // "explicit", "tf_config", "torchrun", "mpi" or "slurm".
  std::string source;
  // TF_CONFIG's task type ("chief", "worker", "ps", "evaluator") and index; "" and -1 for
  // the other sources.
  std::string task_type;
  int task_index = -1;
  // false for a TF_CONFIG ps or evaluator task: it may read the cluster, but it reads no
  // input, so joining the input job from it is refused (require_input_worker).
  bool input_worker = true;
};

// Reads one environment variable: nullopt when it is unset. The resolvers treat a variable
// set to "" as unset, as launchers never set an empty one and shells often clear one so.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;

// The environment of this process (getenv).
Environment process_environment();
// A fixed set of variables (for tests).
Environment map_environment(std::map<std::string, std::string> variables);

// What a resolver may be told besides the environment.
struct ResolveOptions {
  // The rendezvous port where the launcher gives a host but no port (SLURM); 0: take it
  // from DINPUT_RDZV_PORT, then MASTER_PORT.
  int port = 0;
};

// The source names accepted by resolve_cluster, in the order "auto" tries them (after
// "explicit"): {"explicit", "tf_config", "torchrun", "mpi", "slurm"}.
const std::vector<std::string>& cluster_sources();

// Resolves from one source ("explicit" reads DINPUT_RANK, DINPUT_WORLD_SIZE, ...), or with
// "auto" from the first source whose variables are present, in cluster_sources() order.
// INVALID_ARGUMENT for an unknown source or a malformed or missing variable; NOT_FOUND, naming
// every variable looked for, when "auto" finds no source at all.
ClusterSpec resolve_cluster(const std::string& source, const Environment& env,
                            const ResolveOptions& options = {});

// A spec given explicitly (dinput_cluster_new): source "explicit"; rdzv_url may be "".
ClusterSpec make_cluster(int rank, int world_size, const std::string& rdzv_url);

// FAILED_PRECONDITION naming `what` and the task when the spec is not an input worker.
void require_input_worker(const ClusterSpec& spec, const std::string& what);

// ---- parsers, exposed for tests ----

// Expands a SLURM host list in its compressed form: "n[1-3,7],m5" -> n1 n2 n3 n7 m5;
// "node[001-012]" keeps the width of the lower bound; several bracket groups in one name
// ("r[1-2]n[1-2]") give every combination, the last group varying fastest. INVALID_ARGUMENT
// naming `variable`, the value and the offset for text that does not parse, and for lists of
// more than max_hosts hosts.
std::vector<std::string> expand_slurm_nodelist(const std::string& value,
                                               const std::string& variable,
                                               size_t max_hosts = 1 << 20);

// Expands SLURM's tasks-per-node form "2(x3),1" -> 2 2 2 1.
std::vector<int> expand_slurm_tasks_per_node(const std::string& value, const std::string& variable);

// Resolves one TF_CONFIG value (JSON) the way TensorFlow maps it. The rendezvous is the
// coordinator's address as the cluster lists it, or that host with `port` when it is not 0.
ClusterSpec parse_tf_config(const std::string& value, int port = 0);

}  // namespace dinput
