// Each cluster resolver starting a real job: worker processes started with the variables
// their launcher sets (TF_CONFIG with a chief, workers, a ps and an evaluator; torchrun; srun;
// mpirun; dinput's own DINPUT_*), resolved by name and in the automatic mode, join through
// the C API alone (dinput_cluster_resolve, a collective from the cluster,
// dinput_strategy_new_multi_worker) and read range(N).batch(G) on two replicas each: every
// worker must get its share (the steps the same worker gets among threads of one process),
// and the workers together every element exactly once. Then two jobs at once on one store
// (file://, redis://), and the faults a job of processes meets: workers that never arrive,
// a port already in use, a worker killed mid-epoch.
//
// Each child's environment is this process's without any launcher's variables, plus those
// of its launcher, given to exec: the test process never changes its own environment.
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "collective/redis_store.h"
#include "collective/store_url.h"
#include "dinput.h"
#include "process_harness.h"

namespace dinput::testing {
namespace {

using Env = std::map<std::string, std::string>;

constexpr int kReplicas = 2;
const char* const kDevices[kReplicas] = {"CPU:0", "CPU:1"};

// The one place these tests make a collective from a cluster.
dinput_status_t collective_from_cluster(dinput_collective_t** out, const dinput_cluster_t* cluster,
                                        int64_t timeout_ms) {
  dinput_collective_options_t* options = nullptr;
  if (dinput_status_t code = dinput_collective_options_new(&options); code != DINPUT_OK)
    return code;
  dinput_status_t code = dinput_collective_options_set_timeout_ms(options, timeout_ms);
  if (code == DINPUT_OK) code = dinput_collective_new_from_cluster(out, cluster, options);
  dinput_collective_options_free(options);
  return code;
}

// Every variable a resolver reads, or a launcher sets beside them: none reaches a child
// unless its launcher sets it. (The network choices, DINPUT_GLOO_IFACE and the like, are
// passed on: they describe this machine, not a launcher.)
const std::vector<std::string> kLauncherVariables = {"DINPUT_RANK",
                                                     "DINPUT_WORLD_SIZE",
                                                     "DINPUT_LOCAL_RANK",
                                                     "DINPUT_LOCAL_WORLD_SIZE",
                                                     "DINPUT_RDZV_URL",
                                                     "DINPUT_RDZV_PORT",
                                                     "DINPUT_JOB_ID",
                                                     "TF_CONFIG",
                                                     "RANK",
                                                     "WORLD_SIZE",
                                                     "LOCAL_RANK",
                                                     "LOCAL_WORLD_SIZE",
                                                     "GROUP_RANK",
                                                     "GROUP_WORLD_SIZE",
                                                     "ROLE_RANK",
                                                     "ROLE_WORLD_SIZE",
                                                     "ROLE_NAME",
                                                     "MASTER_ADDR",
                                                     "MASTER_PORT",
                                                     "TORCHELASTIC_RUN_ID",
                                                     "TORCHELASTIC_RESTART_COUNT",
                                                     "TORCHELASTIC_MAX_RESTARTS",
                                                     "TORCHELASTIC_USE_AGENT_STORE",
                                                     "OMPI_COMM_WORLD_RANK",
                                                     "OMPI_COMM_WORLD_SIZE",
                                                     "OMPI_COMM_WORLD_LOCAL_RANK",
                                                     "OMPI_COMM_WORLD_LOCAL_SIZE",
                                                     "OMPI_COMM_WORLD_NODE_RANK",
                                                     "OMPI_UNIVERSE_SIZE",
                                                     "PMIX_RANK",
                                                     "PMIX_NAMESPACE",
                                                     "SLURM_PROCID",
                                                     "SLURM_NTASKS",
                                                     "SLURM_NPROCS",
                                                     "SLURM_STEP_NUM_TASKS",
                                                     "SLURM_STEP_NUM_NODES",
                                                     "SLURM_NNODES",
                                                     "SLURM_LOCALID",
                                                     "SLURM_NODEID",
                                                     "SLURMD_NODENAME",
                                                     "SLURM_NTASKS_PER_NODE",
                                                     "SLURM_STEP_TASKS_PER_NODE",
                                                     "SLURM_TASKS_PER_NODE",
                                                     "SLURM_STEP_NODELIST",
                                                     "SLURM_JOB_NODELIST",
                                                     "SLURM_NODELIST",
                                                     "SLURM_JOB_ID",
                                                     "SLURM_JOBID",
                                                     "SLURM_STEP_ID",
                                                     "SLURM_STEPID"};

// ---- the worker ----

std::string text(const char* s) { return s ? s : "(null)"; }

// --worker cluster SOURCE TIMEOUT_MS N G DIE_RANK DIE_STEP LINGER_MS: resolves its cluster
// from SOURCE ("auto", a source's name, or "NULL"), prints its fields, joins the job and
// reads range(N).batch(G) on CPU:0 and CPU:1. The worker of rank DIE_RANK kills itself
// (SIGKILL) when it has taken DIE_STEP steps; a worker that fails waits LINGER_MS before it
// exits, so that the others hear of the failure itself rather than of its exit.
const RegisterWorker cluster_worker("cluster", [](const std::vector<std::string>& args) {
  const std::string source = args.at(0);
  const int64_t timeout_ms = std::stoll(args.at(1)), n = std::stoll(args.at(2)),
                g = std::stoll(args.at(3));
  const int die_rank = std::stoi(args.at(4)), die_step = std::stoi(args.at(5));
  const int linger_ms = std::stoi(args.at(6));
  auto fail = [&](const char* what, dinput_status_t st) {
    std::printf("ERROR %s: %s: %s\n", what, dinput_status_name(st), dinput_last_error_message());
    std::fflush(stdout);
    std::this_thread::sleep_for(milliseconds(linger_ms));
    return 0;
  };
  dinput_cluster_t* cluster = nullptr;
  dinput_status_t st =
      dinput_cluster_resolve(&cluster, source == "NULL" ? nullptr : source.c_str());
  if (st != DINPUT_OK) return fail("resolve", st);
  const int rank = dinput_cluster_rank(cluster);
  std::printf(
      "CLUSTER rank=%d world_size=%d local_rank=%d local_world_size=%d url=%s coordinator=%s "
      "job=%s source=%s task=%s:%d input=%d\n",
      rank, dinput_cluster_world_size(cluster), dinput_cluster_local_rank(cluster),
      dinput_cluster_local_world_size(cluster), text(dinput_cluster_rdzv_url(cluster)).c_str(),
      text(dinput_cluster_coordinator_host(cluster)).c_str(),
      text(dinput_cluster_job_id(cluster)).c_str(), text(dinput_cluster_source(cluster)).c_str(),
      text(dinput_cluster_task_type(cluster)).c_str(), dinput_cluster_task_index(cluster),
      dinput_cluster_is_input_worker(cluster));
  std::fflush(stdout);
  dinput_collective_t* collective = nullptr;
  st = collective_from_cluster(&collective, cluster, timeout_ms);
  dinput_cluster_free(cluster);
  if (st != DINPUT_OK) return fail("collective", st);
  dinput_strategy_t* strategy = nullptr;
  dinput_dataset_t *range = nullptr, *batched = nullptr;
  dinput_dist_dataset_t* dist = nullptr;
  dinput_dist_iterator_t* it = nullptr;
  if ((st = dinput_strategy_new_multi_worker(&strategy, collective, rank, kDevices, kReplicas)) !=
          DINPUT_OK ||
      (st = dinput_dataset_range(&range, 0, n, 1)) != DINPUT_OK ||
      (st = dinput_dataset_batch(&batched, range, g, nullptr)) != DINPUT_OK ||
      (st = dinput_strategy_distribute_dataset(&dist, strategy, batched, nullptr)) != DINPUT_OK ||
      (st = dinput_dist_dataset_iterator(&it, dist)) != DINPUT_OK)
    return fail("setup", st);
  WorkerRun run;
  dinput_per_replica_t* step = nullptr;
  while ((st = dinput_dist_iterator_get_next(&step, it)) == DINPUT_OK) {
    if (rank == die_rank && static_cast<int>(run.steps.size()) == die_step) kill(getpid(), SIGKILL);
    std::vector<std::vector<int64_t>> replicas;
    for (int r = 0; r < dinput_per_replica_size(step); ++r) {
      const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, r), 0);
      const auto* values = static_cast<const int64_t*>(dinput_tensor_data(t));
      replicas.emplace_back(values, values + dinput_tensor_dim(t, 0));
    }
    run.steps.push_back(std::move(replicas));
    dinput_per_replica_free(step);
  }
  if (st != DINPUT_OUT_OF_RANGE)
    run.error = std::string(dinput_status_name(st)) + ": " + dinput_last_error_message();
  std::fputs(report_run("job", run).c_str(), stdout);
  std::fflush(stdout);
  if (!run.error.empty()) std::this_thread::sleep_for(milliseconds(linger_ms));
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(batched);
  dinput_dataset_free(range);
  dinput_strategy_free(strategy);
  dinput_collective_free(collective);
  return 0;
});

// ---- the test side ----

struct Job {
  std::vector<Env> env;  // one process each, with its launcher's variables
  std::string source;
  int64_t timeout_ms = 20000, n = 22, g = 4;
  int die_rank = -1, die_step = -1, linger_ms = 0;
};

// The worker processes of a job.
std::vector<ChildSpec> job_children(const Job& job) {
  std::vector<ChildSpec> children;
  for (const Env& env : job.env) {
    ChildSpec spec;
    spec.args = {"cluster",
                 job.source,
                 std::to_string(job.timeout_ms),
                 std::to_string(job.n),
                 std::to_string(job.g),
                 std::to_string(job.die_rank),
                 std::to_string(job.die_step),
                 std::to_string(job.linger_ms)};
    spec.inherit_env = false;
    spec.env = environment_with(kLauncherVariables, env);
    children.push_back(std::move(spec));
  }
  return children;
}

std::vector<ChildResult> run_job(const Job& job) {
  return run_children(job_children(job), milliseconds(90000));
}

bool port_was_taken(const std::vector<ChildResult>& results) {
  for (const auto& r : results)
    if (r.out.find("cannot listen on") != std::string::npos &&
        r.out.find("in use") != std::string::npos)
      return true;
  return false;
}

// Runs the job make_job(port) gives for a port nothing listens on; again with another
// port when a program took that one before the job's rank 0 could.
std::vector<ChildResult> run_job_on_free_port(const std::function<Job(int port)>& make_job) {
  std::vector<ChildResult> results;
  for (int attempt = 0; attempt < 3; ++attempt) {
    results = run_job(make_job(free_port()));
    if (!port_was_taken(results)) break;
  }
  return results;
}

// "CLUSTER a=1 b=x ..." as a map.
Env cluster_fields(const std::string& out) {
  Env fields;
  const size_t at = out.find("CLUSTER ");
  if (at == std::string::npos) return fields;
  std::istringstream line(out.substr(at + 8, out.find('\n', at) - at - 8));
  std::string word;
  while (line >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return fields;
}

std::string error_of(const std::string& out) {
  const size_t at = out.find("ERROR ");
  return at == std::string::npos ? "" : out.substr(at + 6, out.find('\n', at) - at - 6);
}

// Checks a finished job: child i reported the cluster fields expected[i] (those named) and,
// when it is an input worker, the steps of worker `rank` in process with no error; the
// input workers together got range(n) exactly once.
void expect_job(const Job& job, const std::vector<ChildResult>& results,
                const std::vector<Env>& expected) {
  ASSERT_EQ(results.size(), expected.size());
  int W = 0;
  for (const Env& e : expected) W += e.at("input") == "1";
  const auto in_process = run_workers(W, kReplicas, [&](auto s) {
    return distribute_dataset(s, make_batch(make_range(0, job.n, 1), job.g, false), {});
  });
  std::multiset<int64_t> all;
  for (size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE("process " + std::to_string(i) + ":\n" + results[i].out + results[i].err);
    EXPECT_TRUE(results[i].exited_ok());
    const Env fields = cluster_fields(results[i].out);
    for (const auto& [key, value] : expected[i])
      EXPECT_EQ(fields.count(key) ? fields.at(key) : "(none)", value) << key;
    if (expected[i].at("input") != "1") continue;
    const auto runs = parse_report(results[i].out);
    ASSERT_EQ(runs.count("job"), 1u);
    const WorkerRun& run = runs.at("job");
    EXPECT_EQ(run.error, "");
    const int rank = std::stoi(expected[i].at("rank"));
    EXPECT_EQ(notation(run), notation(in_process.at(static_cast<size_t>(rank))));
    for (const auto& step : run.steps)
      for (const auto& piece : step) all.insert(piece.begin(), piece.end());
  }
  std::multiset<int64_t> want;
  for (int64_t v = 0; v < job.n; ++v) want.insert(v);
  EXPECT_EQ(all, want) << "the workers together did not get every element exactly once";
}

std::string ip_port(int port) { return "127.0.0.1:" + std::to_string(port); }

// ---- TF_CONFIG ----

// A cluster with a chief, two workers, a ps and an evaluator; the chief's address is the
// rendezvous. Processes: chief, worker 0, worker 1 (ranks 0, 1, 2), then the ps and the
// evaluator, which resolve but cannot join.
TEST(ProcessCluster, TfConfigChiefAndWorkersJoinWhilePsAndEvaluatorCannot) {
  const std::vector<std::pair<std::string, int>> tasks = {
      {"chief", 0}, {"worker", 0}, {"worker", 1}, {"ps", 0}, {"evaluator", 0}};
  for (const std::string source : {"tf_config", "auto"}) {
    SCOPED_TRACE(source);
    int chief_port = 0;
    const auto results = run_job_on_free_port([&](int port) {
      chief_port = port;
      const std::string cluster = "{\"cluster\": {\"chief\": [\"" + ip_port(port) +
                                  "\"], \"worker\": [\"" + ip_port(free_port()) + "\", \"" +
                                  ip_port(free_port()) + "\"], \"ps\": [\"" + ip_port(free_port()) +
                                  "\"], \"evaluator\": [\"" + ip_port(free_port()) + "\"]}, ";
      Job job;
      job.source = source;
      for (const auto& [type, index] : tasks)
        job.env.push_back({{"TF_CONFIG", cluster + "\"task\": {\"type\": \"" + type +
                                             "\", \"index\": " + std::to_string(index) + "}}"}});
      return job;
    });
    std::vector<Env> expected;
    for (const auto& [type, index] : tasks) {
      const bool input = type == "chief" || type == "worker";
      expected.push_back({{"rank", std::to_string(!input            ? -1
                                                  : type == "chief" ? 0
                                                                    : index + 1)},
                          {"world_size", "3"},
                          {"local_rank", "-1"},
                          {"url", "tcp://" + ip_port(chief_port)},
                          {"coordinator", "127.0.0.1"},
                          {"job", ""},
                          {"source", "tf_config"},
                          {"task", type + ":" + std::to_string(index)},
                          {"input", input ? "1" : "0"}});
    }
    Job job;
    expect_job(job, results, expected);
    for (size_t i = 3; i < results.size(); ++i) {
      const std::string error = error_of(results[i].out);
      EXPECT_EQ(error.rfind("collective: FAILED_PRECONDITION: ", 0), 0u) << error;
      EXPECT_NE(error.find("this process is TF_CONFIG task " + tasks[i].first +
                           ":0, which reads no input"),
                std::string::npos)
          << error;
    }
  }
  expect_no_children();
}

// ---- torchrun ----

// What `torchrun --nnodes 2 --nproc-per-node 2 --rdzv-id ...` gives its four workers (both
// "nodes" being this machine).
TEST(ProcessCluster, TorchrunVariables) {
  for (const std::string source : {"torchrun", "auto"}) {
    SCOPED_TRACE(source);
    int master_port = 0;
    const auto results = run_job_on_free_port([&](int port) {
      master_port = port;
      Job job;
      job.source = source;
      for (int r = 0; r < 4; ++r)
        job.env.push_back({{"RANK", std::to_string(r)},
                           {"WORLD_SIZE", "4"},
                           {"LOCAL_RANK", std::to_string(r % 2)},
                           {"LOCAL_WORLD_SIZE", "2"},
                           {"GROUP_RANK", std::to_string(r / 2)},
                           {"GROUP_WORLD_SIZE", "2"},
                           {"ROLE_RANK", std::to_string(r)},
                           {"ROLE_WORLD_SIZE", "4"},
                           {"ROLE_NAME", "default"},
                           {"MASTER_ADDR", "127.0.0.1"},
                           {"MASTER_PORT", std::to_string(port)},
                           {"TORCHELASTIC_RUN_ID", "run-42"},
                           {"TORCHELASTIC_RESTART_COUNT", "0"},
                           {"TORCHELASTIC_MAX_RESTARTS", "0"},
                           {"TORCHELASTIC_USE_AGENT_STORE", "False"}});
      return job;
    });
    std::vector<Env> expected;
    for (int r = 0; r < 4; ++r)
      expected.push_back({{"rank", std::to_string(r)},
                          {"world_size", "4"},
                          {"local_rank", std::to_string(r % 2)},
                          {"local_world_size", "2"},
                          {"url", "tcp://127.0.0.1:" + std::to_string(master_port)},
                          {"coordinator", "127.0.0.1"},
                          {"job", "run-42"},
                          {"source", "torchrun"},
                          {"input", "1"}});
    expect_job(Job{}, results, expected);
  }
  expect_no_children();
}

// ---- SLURM ----

// What `srun -N 2 -n 4` gives its tasks, two on each of the nodes 127.0.0.1 and 127.0.0.2
// (both this machine's loopback), in job 4242 whose allocation has a third node; the port
// comes from DINPUT_RDZV_PORT.
TEST(ProcessCluster, SlurmVariables) {
  for (const std::string source : {"slurm", "auto"}) {
    SCOPED_TRACE(source);
    int rdzv_port = 0;
    const auto results = run_job_on_free_port([&](int port) {
      rdzv_port = port;
      Job job;
      job.source = source;
      for (int r = 0; r < 4; ++r)
        job.env.push_back({{"SLURM_PROCID", std::to_string(r)},
                           {"SLURM_NTASKS", "4"},
                           {"SLURM_NPROCS", "4"},
                           {"SLURM_STEP_NUM_TASKS", "4"},
                           {"SLURM_STEP_NUM_NODES", "2"},
                           {"SLURM_NNODES", "3"},
                           {"SLURM_LOCALID", std::to_string(r % 2)},
                           {"SLURM_NODEID", std::to_string(r / 2)},
                           {"SLURMD_NODENAME", "127.0.0." + std::to_string(r / 2 + 1)},
                           {"SLURM_STEP_NODELIST", "127.0.0.[1-2]"},
                           {"SLURM_JOB_NODELIST", "127.0.0.[1-3]"},
                           {"SLURM_NODELIST", "127.0.0.[1-3]"},
                           {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
                           {"SLURM_TASKS_PER_NODE", "2(x2),1"},
                           {"SLURM_JOB_ID", "4242"},
                           {"SLURM_JOBID", "4242"},
                           {"SLURM_STEP_ID", "0"},
                           {"SLURM_STEPID", "0"},
                           {"DINPUT_RDZV_PORT", std::to_string(port)}});
      return job;
    });
    std::vector<Env> expected;
    for (int r = 0; r < 4; ++r)
      expected.push_back({{"rank", std::to_string(r)},
                          {"world_size", "4"},
                          {"local_rank", std::to_string(r % 2)},
                          {"local_world_size", "2"},
                          {"url", "tcp://127.0.0.1:" + std::to_string(rdzv_port)},
                          {"coordinator", "127.0.0.1"},
                          {"job", "4242.0"},
                          {"source", "slurm"},
                          {"input", "1"}});
    expect_job(Job{}, results, expected);
  }
  expect_no_children();
}

// ---- Open MPI ----

// What `mpirun -np 3` gives its processes, with the rendezvous from MASTER_ADDR and
// MASTER_PORT, then from DINPUT_RDZV_URL.
TEST(ProcessCluster, OpenMpiVariables) {
  for (const bool master : {true, false})
    for (const std::string source : {"mpi", "auto"}) {
      SCOPED_TRACE(source + (master ? " with MASTER_ADDR" : " with DINPUT_RDZV_URL"));
      int rdzv_port = 0;
      const auto results = run_job_on_free_port([&](int port) {
        rdzv_port = port;
        Job job;
        job.source = source;
        for (int r = 0; r < 3; ++r) {
          Env env = {{"OMPI_COMM_WORLD_RANK", std::to_string(r)},
                     {"OMPI_COMM_WORLD_SIZE", "3"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r)},
                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "3"},
                     {"OMPI_COMM_WORLD_NODE_RANK", std::to_string(r)},
                     {"OMPI_UNIVERSE_SIZE", "3"},
                     {"PMIX_RANK", std::to_string(r)},
                     {"PMIX_NAMESPACE", "prterun-host-4711@1"}};
          if (master) {
            env["MASTER_ADDR"] = "127.0.0.1";
            env["MASTER_PORT"] = std::to_string(port);
          } else {
            env["DINPUT_RDZV_URL"] = "tcp://127.0.0.1:" + std::to_string(port);
          }
          job.env.push_back(env);
        }
        return job;
      });
      std::vector<Env> expected;
      for (int r = 0; r < 3; ++r)
        expected.push_back({{"rank", std::to_string(r)},
                            {"world_size", "3"},
                            {"local_rank", std::to_string(r)},
                            {"local_world_size", "3"},
                            {"url", "tcp://127.0.0.1:" + std::to_string(rdzv_port)},
                            {"job", "prterun-host-4711@1"},
                            {"source", "mpi"},
                            {"input", "1"}});
      expect_job(Job{}, results, expected);
    }
  expect_no_children();
}

// ---- explicit ----

// dinput's own variables, with a tcp:// and a file:// rendezvous; the source named, "auto", and
// NULL (which means "auto").
TEST(ProcessCluster, ExplicitVariables) {
  const ScratchDir scratch("process_cluster");
  const std::string& dir = scratch.path();
  for (const bool file : {false, true})
    for (const std::string source : {"explicit", "auto", "NULL"}) {
      SCOPED_TRACE(source + (file ? " file://" : " tcp://"));
      std::string url;
      const auto results = run_job_on_free_port([&](int port) {
        url = file ? "file://" + dir : "tcp://127.0.0.1:" + std::to_string(port);
        Job job;
        job.source = source;
        for (int r = 0; r < 3; ++r)
          job.env.push_back({{"DINPUT_RANK", std::to_string(r)},
                             {"DINPUT_WORLD_SIZE", "3"},
                             {"DINPUT_LOCAL_RANK", std::to_string(r)},
                             {"DINPUT_LOCAL_WORLD_SIZE", "3"},
                             {"DINPUT_RDZV_URL", url},
                             // Keys stay in a file:// store: a job id of its own per run.
                             {"DINPUT_JOB_ID", "explicit-" + source}});
        return job;
      });
      std::vector<Env> expected;
      for (int r = 0; r < 3; ++r)
        expected.push_back({{"rank", std::to_string(r)},
                            {"world_size", "3"},
                            {"local_rank", std::to_string(r)},
                            {"local_world_size", "3"},
                            {"url", url},
                            {"job", "explicit-" + source},
                            {"source", "explicit"},
                            {"input", "1"}});
      expect_job(Job{}, results, expected);
    }
  expect_no_children();
}

// ---- two jobs on one store ----

// A redis-server of the test's own on a free port, stopped (and reaped) with the object.
class RedisServer {
 public:
  RedisServer() {
    port_ = free_port();
    const std::string port = std::to_string(port_);
    std::vector<std::string> all = {"redis-server", "--port", port,           "--bind", "127.0.0.1",
                                    "--save",       "",       "--appendonly", "no"};
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(4);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      execvp(argv[0], argv.data());
      _exit(5);
    }
    // Ready once it answers (make_store retries connecting until then).
    StoreOptions options;
    options.connect_timeout = milliseconds(10000);
    make_store(url(), 0, 1, options)->set("ready", "1");
  }
  ~RedisServer() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
};

// Two jobs of the same size run at once on one file:// directory, then on one Redis server,
// kept apart by their DINPUT_JOB_IDs alone: each worker gets its own job's data (the jobs
// read different ranges), which a mix of the jobs' addresses would not give.
TEST(ProcessCluster, TwoJobsAtOnceOnOneStoreKeptApartByTheirJobIds) {
  const ScratchDir scratch("process_cluster");
  const std::string& dir = scratch.path();
  const bool redis =
      redis_store_available() && std::system("command -v redis-server >/dev/null 2>&1") == 0;
  for (const std::string kind : {"file", "redis"}) {
    if (kind == "redis" && !redis) {
      std::cerr << "redis:// not run: "
                << (redis_store_available() ? "no redis-server" : "no Redis support") << "\n";
      continue;
    }
    SCOPED_TRACE(kind);
    std::unique_ptr<RedisServer> server;
    if (kind == "redis") server = std::make_unique<RedisServer>();
    const std::string url = kind == "redis" ? server->url() : "file://" + dir;
    std::vector<Job> jobs(2);
    std::vector<ChildSpec> children;
    std::vector<std::vector<Env>> expected(2);
    for (int j = 0; j < 2; ++j) {
      Job& job = jobs[static_cast<size_t>(j)];
      job.source = "auto";
      job.n = j == 0 ? 22 : 37;
      job.g = j == 0 ? 4 : 6;
      const std::string id = kind + "-job-" + std::to_string(j);
      for (int r = 0; r < 3; ++r) {
        job.env.push_back({{"DINPUT_RANK", std::to_string(r)},
                           {"DINPUT_WORLD_SIZE", "3"},
                           {"DINPUT_RDZV_URL", url},
                           {"DINPUT_JOB_ID", id}});
        expected[static_cast<size_t>(j)].push_back(
            {{"rank", std::to_string(r)}, {"job", id}, {"url", url}, {"input", "1"}});
      }
      for (auto& child : job_children(job)) children.push_back(std::move(child));
    }
    const auto results = run_children(children, milliseconds(90000));
    ASSERT_EQ(results.size(), 6u);
    for (int j = 0; j < 2; ++j) {
      SCOPED_TRACE("job " + std::to_string(j));
      expect_job(jobs[static_cast<size_t>(j)],
                 std::vector<ChildResult>(results.begin() + 3 * j, results.begin() + 3 * j + 3),
                 expected[static_cast<size_t>(j)]);
    }
  }
  expect_no_children();
}

// ---- faults ----

Env explicit_env(int rank, int world_size, const std::string& url) {
  return {{"DINPUT_RANK", std::to_string(rank)},
          {"DINPUT_WORLD_SIZE", std::to_string(world_size)},
          {"DINPUT_RDZV_URL", url}};
}

// Two workers of four start: both fail the rendezvous within its timeout, naming the two
// that never came, and exit. Over file:// each worker names them. Over tcp:// the worker
// of rank 0 names them, but its timeout closes the store it serves, and a worker that was
// still waiting in it (its timeout started a little later) reports the store's server gone:
// a limitation of the tcp:// rendezvous that this test records.
TEST(ProcessCluster, WorkersThatNeverArriveAreNamedWhenTheRendezvousTimesOut) {
  const ScratchDir scratch("process_cluster");
  const std::string& dir = scratch.path();
  for (const bool tcp : {false, true}) {
    SCOPED_TRACE(tcp ? "tcp://" : "file://");
    const auto start = Clock::now();
    const auto results = run_job_on_free_port([&](int port) {
      Job job;
      job.source = "auto";
      job.timeout_ms = 1500;
      const std::string url = tcp ? "tcp://127.0.0.1:" + std::to_string(port) : "file://" + dir;
      job.env = {explicit_env(0, 4, url), explicit_env(1, 4, url)};
      return job;
    });
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_TRUE(results[i].exited_ok()) << results[i].err;
      const std::string error = error_of(results[i].out);
      if (tcp && i == 1 &&
          error.find("(the store is served by the worker of rank 0: has it exited or failed?)") !=
              std::string::npos) {
        EXPECT_EQ(error.rfind("collective: UNAVAILABLE: rendezvous store tcp://", 0), 0u) << error;
        continue;
      }
      EXPECT_EQ(error.rfind("collective: DEADLINE_EXCEEDED: ", 0), 0u) << error;
      EXPECT_NE(error.find("at the rendezvous for workers 2, 3 "), std::string::npos) << error;
    }
  }
  expect_no_children();
}

// Rank 0 cannot serve the rendezvous on a port another program listens on: it fails at
// once naming the address, and its peer fails within the timeout instead of waiting on.
TEST(ProcessCluster, PortInUseNamesTheAddress) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));
  Job job;
  job.source = "torchrun";
  job.timeout_ms = 1500;
  for (int r = 0; r < 2; ++r)
    job.env.push_back({{"RANK", std::to_string(r)},
                       {"WORLD_SIZE", "2"},
                       {"MASTER_ADDR", "127.0.0.1"},
                       {"MASTER_PORT", port}});
  const auto start = Clock::now();
  const auto results = run_job(job);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  close(fd);
  const std::string error = error_of(results.at(0).out);
  EXPECT_EQ(error.rfind("collective: UNAVAILABLE: ", 0), 0u) << error;
  EXPECT_NE(error.find("tcp://127.0.0.1:" + port), std::string::npos) << error;
  EXPECT_NE(error.find("cannot listen on"), std::string::npos) << error;
  EXPECT_NE(error.find("in use"), std::string::npos) << error;
  // Rank 1 reached something at the address that is no dinput store, or nothing in time.
  EXPECT_NE(error_of(results.at(1).out), "") << results.at(1).out;
  for (const auto& r : results) EXPECT_TRUE(r.exited_ok()) << r.err;
  expect_no_children();
}

// The worker of rank 2 of 3 dies (SIGKILL) in the middle of the epoch: the others' get_next
// fails well within the timeout with UNAVAILABLE naming it, and every process ends.
TEST(ProcessCluster, WorkerKilledMidEpochFailsTheOthersNamingIt) {
  const auto start = Clock::now();
  const auto results = run_job_on_free_port([&](int port) {
    Job job;
    job.source = "auto";
    job.timeout_ms = 30000;
    job.n = 100000;
    job.g = 4;
    job.die_rank = 2;
    job.die_step = 3;
    job.linger_ms = 2000;
    const std::string url = "tcp://127.0.0.1:" + std::to_string(port);
    for (int r = 0; r < 3; ++r) job.env.push_back(explicit_env(r, 3, url));
    return job;
  });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(25));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(WIFSIGNALED(results[2].status) && WTERMSIG(results[2].status) == SIGKILL);
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(results[static_cast<size_t>(r)].exited_ok()) << results[static_cast<size_t>(r)].err;
    const auto runs = parse_report(results[static_cast<size_t>(r)].out);
    ASSERT_EQ(runs.count("job"), 1u) << results[static_cast<size_t>(r)].out;
    const std::string& error = runs.at("job").error;
    EXPECT_EQ(error.rfind("UNAVAILABLE: ", 0), 0u) << error;
    EXPECT_NE(error.find("lost its connection to worker 2"), std::string::npos) << error;
    EXPECT_GE(runs.at("job").steps.size(), 3u);
  }
  expect_no_children();
}

}  // namespace
}  // namespace dinput::testing
