// White-box tests of src/cluster: SLURM host lists and task counts, TF_CONFIG as TensorFlow
// maps it, and each resolver with the variables its launcher sets (given as a map, so the
// process environment is never touched).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "core/status.h"

namespace dinput {
namespace {

using Hosts = std::vector<std::string>;
using Vars = std::map<std::string, std::string>;

// Runs `fn`, expecting an Error with `code` whose message holds every one of `parts`.
template <typename Fn>
void expect_error(Fn&& fn, Code code, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one holding " << *parts.begin();
  } catch (const Error& e) {
    EXPECT_EQ(code_name(e.code()), std::string(code_name(code))) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message lacks '" << p << "': " << e.what();
  }
}

ClusterSpec resolve(const std::string& source, Vars vars, ResolveOptions options = {}) {
  return resolve_cluster(source, map_environment(std::move(vars)), options);
}

// ---- SLURM host lists ----

TEST(Nodelist, PlainNames) {
  EXPECT_EQ(expand_slurm_nodelist("n1", "V"), Hosts({"n1"}));
  EXPECT_EQ(expand_slurm_nodelist("a,b.example.org,c-3", "V"),
            Hosts({"a", "b.example.org", "c-3"}));
}

TEST(Nodelist, RangesAndSingles) {
  EXPECT_EQ(expand_slurm_nodelist("n[1-3,7],m5", "V"), Hosts({"n1", "n2", "n3", "n7", "m5"}));
  EXPECT_EQ(expand_slurm_nodelist("n[4]", "V"), Hosts({"n4"}));
}

TEST(Nodelist, ZeroPaddedRangesKeepTheirWidth) {
  Hosts hosts = expand_slurm_nodelist("node[001-012]", "V");
  ASSERT_EQ(hosts.size(), 12u);
  EXPECT_EQ(hosts.front(), "node001");
  EXPECT_EQ(hosts[8], "node009");
  EXPECT_EQ(hosts.back(), "node012");
  // Without padding a range grows digits as it goes.
  EXPECT_EQ(expand_slurm_nodelist("n[9-11]", "V"), Hosts({"n9", "n10", "n11"}));
  EXPECT_EQ(expand_slurm_nodelist("gpu[08-10]", "V"), Hosts({"gpu08", "gpu09", "gpu10"}));
}

TEST(Nodelist, SeveralGroupsGiveEveryCombinationLastFastest) {
  EXPECT_EQ(expand_slurm_nodelist("r[1-2]n[01-02]", "V"),
            Hosts({"r1n01", "r1n02", "r2n01", "r2n02"}));
  EXPECT_EQ(
      expand_slurm_nodelist("rack[1-2]-node[3,5].ib,login", "V"),
      Hosts({"rack1-node3.ib", "rack1-node5.ib", "rack2-node3.ib", "rack2-node5.ib", "login"}));
}

TEST(Nodelist, MalformedListsNameVariableValueAndOffset) {
  const Code kInvalid = Code::kInvalidArgument;
  expect_error([] { expand_slurm_nodelist("n[1-3", "SLURM_STEP_NODELIST"); }, kInvalid,
               {"SLURM_STEP_NODELIST='n[1-3'", "never closed", "offset 1"});
  expect_error([] { expand_slurm_nodelist("n[3-1]", "V"); }, kInvalid, {"backwards", "offset 2"});
  expect_error([] { expand_slurm_nodelist("n[a]", "V"); }, kInvalid,
               {"expected a number", "offset 2"});
  expect_error([] { expand_slurm_nodelist("n1]", "V"); }, kInvalid, {"']' without '['"});
  expect_error([] { expand_slurm_nodelist("n1,,n2", "V"); }, kInvalid, {"missing", "offset 3"});
  expect_error([] { expand_slurm_nodelist("n1,", "V"); }, kInvalid, {"after the last ','"});
  expect_error([] { expand_slurm_nodelist("", "V"); }, kInvalid, {"empty"});
  expect_error([] { expand_slurm_nodelist("n 1", "V"); }, kInvalid, {"spaces", "offset 1"});
  expect_error([] { expand_slurm_nodelist("n[[1]]", "V"); }, kInvalid, {"offset 2"});
  expect_error([] { expand_slurm_nodelist("n[1-2:2]", "V"); }, kInvalid, {"offset 5"});
  expect_error([] { expand_slurm_nodelist("n[0-99999999]", "V", 1000); }, kInvalid,
               {"more than 1000 hosts"});
  expect_error([] { expand_slurm_nodelist("a[0-99]b[0-99]", "V", 1000); }, kInvalid,
               {"more than 1000 hosts"});
}

TEST(Nodelist, TasksPerNode) {
  EXPECT_EQ(expand_slurm_tasks_per_node("2(x3),1", "V"), std::vector<int>({2, 2, 2, 1}));
  EXPECT_EQ(expand_slurm_tasks_per_node("4", "V"), std::vector<int>({4}));
  expect_error([] { expand_slurm_tasks_per_node("2(3)", "T"); }, Code::kInvalidArgument,
               {"T='2(3)'", "expected '(x'", "offset 1"});
  expect_error([] { expand_slurm_tasks_per_node("2(x3", "T"); }, Code::kInvalidArgument,
               {"expected ')'"});
  expect_error([] { expand_slurm_tasks_per_node("2;1", "T"); }, Code::kInvalidArgument,
               {"offset 1"});
}

// ---- TF_CONFIG, with the clusters of TensorFlow's multi-worker documentation ----

const char* const kChiefTwoWorkersPs =
    R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                    "ps": ["host3:2222"]},
        "task": {"type": "%s", "index": %d}})";

std::string tf_config(const char* pattern, const char* type, int index) {
  char buf[512];
  std::snprintf(buf, sizeof buf, pattern, type, index);
  return buf;
}

TEST(TfConfig, ChiefIsWorkerZeroAndWorkersFollow) {
  ClusterSpec chief = parse_tf_config(tf_config(kChiefTwoWorkersPs, "chief", 0));
  EXPECT_EQ(chief.rank, 0);
  EXPECT_EQ(chief.world_size, 3);  // chief + 2 workers; ps reads no input
  EXPECT_TRUE(chief.input_worker);
  EXPECT_EQ(chief.task_type, "chief");
  EXPECT_EQ(chief.task_index, 0);
  EXPECT_EQ(chief.source, "tf_config");
  EXPECT_EQ(chief.coordinator_host, "host0");
  EXPECT_EQ(chief.rdzv_url, "tcp://host0:2222");
  for (int i = 0; i < 2; ++i) {
    ClusterSpec w = parse_tf_config(tf_config(kChiefTwoWorkersPs, "worker", i));
    EXPECT_EQ(w.rank, i + 1);
    EXPECT_EQ(w.world_size, 3);
    EXPECT_EQ(w.task_index, i);
    EXPECT_EQ(w.coordinator_host, "host0");
  }
}

TEST(TfConfig, PsTaskResolvesButIsNotAnInputWorker) {
  ClusterSpec ps = parse_tf_config(tf_config(kChiefTwoWorkersPs, "ps", 0));
  EXPECT_EQ(ps.task_type, "ps");
  EXPECT_EQ(ps.task_index, 0);
  EXPECT_FALSE(ps.input_worker);
  EXPECT_EQ(ps.rank, -1);
  EXPECT_EQ(ps.world_size, 3);
  expect_error([&] { require_input_worker(ps, "joining"); }, Code::kFailedPrecondition,
               {"joining", "ps:0", "chief and worker"});
  EXPECT_NO_THROW(
      require_input_worker(parse_tf_config(tf_config(kChiefTwoWorkersPs, "worker", 1)), "x"));
}

TEST(TfConfig, EvaluatorTaskInsideOrBesideTheCluster) {
  // Keras's side-car evaluation: the evaluator is a job of the cluster...
  ClusterSpec in = parse_tf_config(
      R"({"cluster": {"chief": ["c:1"], "worker": ["w:1"], "evaluator": ["e:1"]},
          "task": {"type": "evaluator", "index": 0}})");
  EXPECT_EQ(in.task_type, "evaluator");
  EXPECT_FALSE(in.input_worker);
  EXPECT_EQ(in.world_size, 2);
  // ... or runs beside a cluster that does not list it.
  ClusterSpec beside = parse_tf_config(
      R"({"cluster": {"chief": ["c:1"], "worker": ["w:1", "w:2"]},
          "task": {"type": "evaluator", "index": 0}})");
  EXPECT_FALSE(beside.input_worker);
  EXPECT_EQ(beside.world_size, 3);
}

TEST(TfConfig, WorkerOnlyClusterHasWorkerZeroAsCoordinator) {
  const char* cfg = R"({"cluster": {"worker": ["10.0.0.1:20000", "10.0.0.2:20000"]},
                        "task": {"type": "worker", "index": 1}})";
  ClusterSpec w = parse_tf_config(cfg);
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.world_size, 2);
  EXPECT_EQ(w.coordinator_host, "10.0.0.1");
  EXPECT_EQ(w.rdzv_url, "tcp://10.0.0.1:20000");
  EXPECT_EQ(parse_tf_config(cfg, 31000).rdzv_url, "tcp://10.0.0.1:31000");
  // The index defaults to 0, as in TensorFlow.
  EXPECT_EQ(
      parse_tf_config(R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker"}})")
          .rank,
      0);
  ClusterSpec v6 =
      parse_tf_config(R"({"cluster": {"worker": ["[fe80::1]:2222"]}, "task": {"type": "worker"}})");
  EXPECT_EQ(v6.coordinator_host, "fe80::1");
  EXPECT_EQ(parse_tf_config(R"({"cluster": {"worker": ["[fe80::1]:2222"]},
                                "task": {"type": "worker"}})",
                            3000)
                .rdzv_url,
            "tcp://[fe80::1]:3000");
}

TEST(TfConfig, ErrorsNameTheFieldAndTheValue) {
  const Code kInvalid = Code::kInvalidArgument;
  expect_error([] { parse_tf_config(R"({"cluster": {"worker": ["a:1"],})"); }, kInvalid,
               {"TF_CONFIG='{\"cluster\"", "not valid JSON at offset 31"});
  // Valid syntax with a number no double holds (found by fuzzing: it escaped as a JSON
  // library exception).
  expect_error([] { parse_tf_config(R"({"cluster": {"worker": [1e999999]}})"); }, kInvalid,
               {"TF_CONFIG=", "not usable JSON", "number overflow"});
  expect_error([] { parse_tf_config("[1]"); }, kInvalid, {"expected a JSON object"});
  expect_error([] { parse_tf_config(R"({"task": {"type": "worker"}})"); }, kInvalid,
               {"no \"cluster\""});
  expect_error(
      [] { parse_tf_config(R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "chief"}})"); },
      kInvalid, {"task.type 'chief' is not a job of the cluster"});
  expect_error(
      [] { parse_tf_config(R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "master"}})"); },
      kInvalid, {"task.type 'master' is none of"});
  expect_error(
      [] {
        parse_tf_config(
            R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}})");
      },
      kInvalid, {"task.index 1 is out of range", "cluster.worker has 1 task"});
  expect_error(
      [] {
        parse_tf_config(
            R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}})");
      },
      kInvalid, {"task.index \"0\""});
  expect_error(
      [] { parse_tf_config(R"({"cluster": {"worker": "a:1"}, "task": {"type": "worker"}})"); },
      kInvalid, {"cluster.worker is a string"});
  // TensorFlow's sparse form (a map of index to address) is not read.
  expect_error(
      [] {
        parse_tf_config(R"({"cluster": {"worker": {"0": "a:1"}}, "task": {"type": "worker"}})");
      },
      kInvalid, {"cluster.worker is an object, not a list"});
  expect_error([] { parse_tf_config(R"({"cluster": null, "task": {}})"); }, kInvalid,
               {"\"cluster\" is null, not an object"});
  expect_error(
      [] {
        parse_tf_config(R"({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief"}})");
      },
      kInvalid, {"at most 1"});
  expect_error([] { parse_tf_config(R"({"cluster": {"ps": ["a:1"]}, "task": {"type": "ps"}})"); },
               kInvalid, {"no chief or worker"});
  expect_error(
      [] { parse_tf_config(R"({"cluster": {"worker": ["a"]}, "task": {"type": "worker"}})"); },
      kInvalid, {"cluster.worker[0]", "no port"});
  expect_error([] { parse_tf_config(R"({"cluster": {"worker": ["a:1"]}})"); }, kInvalid,
               {"no \"task\""});
  expect_error(
      [] { parse_tf_config(R"({"cluster": {"trainer": ["a:1"]}, "task": {"type": "worker"}})"); },
      kInvalid, {"cluster job 'trainer'"});
}

// ---- the resolvers, with the variables their launchers set ----

TEST(Resolve, Torchrun) {
  // What `torchrun --nnodes 2 --nproc-per-node 2` gives its third process.
  ClusterSpec s = resolve("torchrun", {{"RANK", "2"},
                                       {"WORLD_SIZE", "4"},
                                       {"LOCAL_RANK", "0"},
                                       {"LOCAL_WORLD_SIZE", "2"},
                                       {"GROUP_RANK", "1"},
                                       {"MASTER_ADDR", "node-a"},
                                       {"MASTER_PORT", "29500"},
                                       {"TORCHELASTIC_RUN_ID", "job42"}});
  EXPECT_EQ(s.source, "torchrun");
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.world_size, 4);
  EXPECT_EQ(s.local_rank, 0);
  EXPECT_EQ(s.local_world_size, 2);
  EXPECT_EQ(s.rdzv_url, "tcp://node-a:29500");
  EXPECT_EQ(s.coordinator_host, "node-a");
  EXPECT_EQ(s.job_id, "job42");
  EXPECT_TRUE(s.input_worker);
  EXPECT_EQ(s.task_index, -1);
  EXPECT_EQ(s.task_type, "");
}

TEST(Resolve, TorchrunErrors) {
  const Code kInvalid = Code::kInvalidArgument;
  Vars ok = {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}};
  auto with = [&](const std::string& k, const std::string& v) {
    Vars vars = ok;
    if (v == "<unset>")
      vars.erase(k);
    else
      vars[k] = v;
    return vars;
  };
  expect_error([&] { resolve("torchrun", with("RANK", "2")); }, kInvalid,
               {"RANK=2 is not below WORLD_SIZE=2"});
  expect_error([&] { resolve("torchrun", with("RANK", "x1")); }, kInvalid,
               {"RANK='x1' is not a non-negative integer"});
  expect_error([&] { resolve("torchrun", with("RANK", "-1")); }, kInvalid, {"RANK='-1'"});
  // Far more digits than an int holds: refused before any arithmetic (found by fuzzing: the
  // digits were once summed first, overflowing).
  expect_error([&] { resolve("torchrun", with("RANK", "29999999999999999999999")); }, kInvalid,
               {"RANK='29999999999999999999999' is not a non-negative integer"});
  expect_error([&] { resolve("torchrun", with("WORLD_SIZE", "0")); }, kInvalid,
               {"WORLD_SIZE='0' must be >= 1"});
  expect_error([&] { resolve("torchrun", with("WORLD_SIZE", "99999999999")); }, kInvalid,
               {"WORLD_SIZE='99999999999'"});
  expect_error([&] { resolve("torchrun", with("WORLD_SIZE", "<unset>")); }, kInvalid,
               {"WORLD_SIZE is not set"});
  expect_error([&] { resolve("torchrun", with("MASTER_PORT", "70000")); }, kInvalid,
               {"MASTER_PORT='70000'", "1..65535"});
  expect_error([&] { resolve("torchrun", with("MASTER_PORT", "<unset>")); }, kInvalid,
               {"MASTER_ADDR='h' is set but no port"});
  expect_error([&] { resolve("torchrun", with("MASTER_ADDR", "<unset>")); }, kInvalid,
               {"MASTER_ADDR is not set"});
  Vars local = with("LOCAL_RANK", "3");
  local["LOCAL_WORLD_SIZE"] = "2";
  expect_error([&] { resolve("torchrun", local); }, kInvalid,
               {"LOCAL_RANK=3 is not below LOCAL_WORLD_SIZE=2"});
  // An empty variable counts as unset.
  expect_error([&] { resolve("torchrun", with("RANK", "")); }, kInvalid, {"RANK is not set"});
}

TEST(Resolve, OverridesApplyToEverySource) {
  ClusterSpec s = resolve("torchrun", {{"RANK", "1"},
                                       {"WORLD_SIZE", "2"},
                                       {"MASTER_ADDR", "h"},
                                       {"MASTER_PORT", "1234"},
                                       {"DINPUT_RDZV_URL", "file:///shared/rdzv"},
                                       {"DINPUT_JOB_ID", "mine"}});
  EXPECT_EQ(s.rdzv_url, "file:///shared/rdzv");
  EXPECT_EQ(s.coordinator_host, "h");
  EXPECT_EQ(s.job_id, "mine");
  expect_error(
      [] {
        resolve("torchrun",
                {{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"DINPUT_RDZV_URL", "http://h:1"}});
      },
      Code::kInvalidArgument, {"DINPUT_RDZV_URL='http://h:1' is not a rendezvous URL"});
}

TEST(Resolve, SlurmStep) {
  // What `srun -N 3 --ntasks-per-node 2` gives task 3 (the second on node n2).
  Vars vars = {{"SLURM_PROCID", "3"},
               {"SLURM_NTASKS", "8"},
               {"SLURM_STEP_NUM_TASKS", "6"},
               {"SLURM_LOCALID", "1"},
               {"SLURM_NODEID", "1"},
               {"SLURMD_NODENAME", "n2"},
               {"SLURM_STEP_NODELIST", "n[1-2,7]"},
               {"SLURM_JOB_NODELIST", "n[1-2,7-9]"},
               {"SLURM_STEP_TASKS_PER_NODE", "2(x3)"},
               {"SLURM_JOB_ID", "81234"},
               {"SLURM_STEP_ID", "0"}};
  ClusterSpec s = resolve("slurm", vars);
  EXPECT_EQ(s.source, "slurm");
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.world_size, 6);  // the step's tasks, not the allocation's
  EXPECT_EQ(s.local_rank, 1);
  EXPECT_EQ(s.local_world_size, 2);
  EXPECT_EQ(s.coordinator_host, "n1");
  EXPECT_EQ(s.job_id, "81234.0");
  EXPECT_EQ(s.rdzv_url, "");  // SLURM names no port
  vars["DINPUT_RDZV_PORT"] = "29400";
  EXPECT_EQ(resolve("slurm", vars).rdzv_url, "tcp://n1:29400");
  ResolveOptions port;
  port.port = 5000;
  EXPECT_EQ(resolve("slurm", vars, port).rdzv_url, "tcp://n1:5000");
  vars.erase("DINPUT_RDZV_PORT");
  vars["MASTER_PORT"] = "6000";
  EXPECT_EQ(resolve("slurm", vars).rdzv_url, "tcp://n1:6000");
}

TEST(Resolve, SlurmFallbacksAndErrors) {
  // sbatch-style variables only, with --ntasks-per-node.
  ClusterSpec s = resolve("slurm", {{"SLURM_PROCID", "0"},
                                    {"SLURM_NTASKS", "4"},
                                    {"SLURM_NTASKS_PER_NODE", "2"},
                                    {"SLURM_JOB_NODELIST", "gpu[003-004]"},
                                    {"SLURM_JOB_ID", "7"}});
  EXPECT_EQ(s.world_size, 4);
  EXPECT_EQ(s.local_world_size, 2);
  EXPECT_EQ(s.local_rank, -1);
  EXPECT_EQ(s.coordinator_host, "gpu003");
  EXPECT_EQ(s.job_id, "7");
  const Code kInvalid = Code::kInvalidArgument;
  expect_error(
      [] {
        resolve("slurm", {{"SLURM_PROCID", "0"}});
      },
      kInvalid, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"});
  expect_error(
      [] {
        resolve("slurm", {{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}});
      },
      kInvalid, {"SLURM_PROCID=4 is not below SLURM_NTASKS=4"});
  expect_error(
      [] {
        resolve("slurm",
                {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_NODELIST", "n[1-"}});
      },
      kInvalid, {"SLURM_STEP_NODELIST='n[1-'", "not a SLURM host list"});
  expect_error(
      [] {
        resolve("slurm", {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"MASTER_PORT", "x"}});
      },
      kInvalid, {"MASTER_PORT='x'"});
}

TEST(Resolve, OpenMpi) {
  ClusterSpec s = resolve("mpi", {{"OMPI_COMM_WORLD_RANK", "5"},
                                  {"OMPI_COMM_WORLD_SIZE", "8"},
                                  {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                  {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                  {"PMIX_NAMESPACE", "prterun-host-1234@1"},
                                  {"DINPUT_RDZV_URL", "tcp://head:4000"}});
  EXPECT_EQ(s.source, "mpi");
  EXPECT_EQ(s.rank, 5);
  EXPECT_EQ(s.world_size, 8);
  EXPECT_EQ(s.local_rank, 1);
  EXPECT_EQ(s.local_world_size, 4);
  EXPECT_EQ(s.rdzv_url, "tcp://head:4000");
  EXPECT_EQ(s.coordinator_host, "head");
  EXPECT_EQ(s.job_id, "prterun-host-1234@1");
  // MASTER_ADDR/PORT also work; with neither, no rendezvous is known.
  EXPECT_EQ(resolve("mpi", {{"OMPI_COMM_WORLD_RANK", "0"},
                            {"OMPI_COMM_WORLD_SIZE", "2"},
                            {"MASTER_ADDR", "::1"},
                            {"MASTER_PORT", "9"}})
                .rdzv_url,
            "tcp://[::1]:9");
  EXPECT_EQ(resolve("mpi", {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}).rdzv_url,
            "");
  expect_error(
      [] {
        resolve("mpi", {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
      },
      Code::kInvalidArgument, {"OMPI_COMM_WORLD_RANK=2 is not below OMPI_COMM_WORLD_SIZE=2"});
}

TEST(Resolve, ExplicitVariablesAndValues) {
  ClusterSpec s = resolve("explicit", {{"DINPUT_RANK", "1"},
                                       {"DINPUT_WORLD_SIZE", "3"},
                                       {"DINPUT_RDZV_URL", "tcp://10.1.2.3:7000"}});
  EXPECT_EQ(s.source, "explicit");
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.world_size, 3);
  EXPECT_EQ(s.coordinator_host, "10.1.2.3");
  EXPECT_EQ(s.rdzv_url, "tcp://10.1.2.3:7000");

  ClusterSpec m = make_cluster(2, 4, "redis://cache:6379");
  EXPECT_EQ(m.source, "explicit");
  EXPECT_EQ(m.rank, 2);
  EXPECT_EQ(m.world_size, 4);
  EXPECT_EQ(m.rdzv_url, "redis://cache:6379");
  EXPECT_EQ(m.coordinator_host, "");
  EXPECT_EQ(make_cluster(0, 1, "").rdzv_url, "");
  const Code kInvalid = Code::kInvalidArgument;
  expect_error([] { make_cluster(4, 4, ""); }, kInvalid, {"0..3, got 4"});
  expect_error([] { make_cluster(-1, 4, ""); }, kInvalid, {"got -1"});
  expect_error([] { make_cluster(0, 0, ""); }, kInvalid, {"world_size must be >= 1"});
  expect_error([] { make_cluster(0, 1, "tcp://host"); }, kInvalid, {"rdzv_url='tcp://host'"});
  expect_error([] { make_cluster(0, 1, "tcp://:80"); }, kInvalid, {"no host"});
  expect_error([] { make_cluster(0, 1, "tcp://::1:80"); }, kInvalid, {"brackets"});
  expect_error([] { make_cluster(0, 1, "file://"); }, kInvalid, {"names no directory"});
  EXPECT_EQ(make_cluster(0, 1, "tcp://[::1]:80").coordinator_host, "::1");
}

TEST(Resolve, AutoTriesSourcesInOrder) {
  Vars slurm = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_JOB_NODELIST", "n1"}};
  EXPECT_EQ(resolve("auto", slurm).source, "slurm");
  // torchrun inside a SLURM allocation: the inner launcher's variables win.
  Vars torch = slurm;
  torch.insert({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}});
  EXPECT_EQ(resolve("auto", torch).source, "torchrun");
  // RANK alone is not torchrun.
  Vars stray = slurm;
  stray["RANK"] = "3";
  EXPECT_EQ(resolve("auto", stray).source, "slurm");
  Vars mpi = slurm;
  mpi.insert({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_EQ(resolve("auto", mpi).source, "mpi");
  Vars tf = torch;
  tf["TF_CONFIG"] = R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker"}})";
  EXPECT_EQ(resolve("auto", tf).source, "tf_config");
  Vars mine = tf;
  mine.insert({{"DINPUT_RANK", "0"}, {"DINPUT_WORLD_SIZE", "1"}});
  EXPECT_EQ(resolve("auto", mine).source, "explicit");
  // A present but broken source is reported, not skipped.
  Vars broken = slurm;
  broken["TF_CONFIG"] = "{";
  expect_error([&] { resolve("auto", broken); }, Code::kInvalidArgument, {"TF_CONFIG='{'"});
}

TEST(Resolve, AutoWithNothingNamesWhatItTried) {
  expect_error(
      [] {
        resolve("auto", {{"HOME", "/root"}});
      },
      Code::kNotFound,
      {"explicit (DINPUT_RANK or DINPUT_WORLD_SIZE)", "tf_config (TF_CONFIG)",
       "torchrun (TORCHELASTIC_RUN_ID or RANK+WORLD_SIZE)",
       "mpi (OMPI_COMM_WORLD_RANK or OMPI_COMM_WORLD_SIZE)", "slurm (SLURM_PROCID)"});
  expect_error([] { resolve("kubernetes", {}); }, Code::kInvalidArgument,
               {"unknown cluster source 'kubernetes'"});
}

}  // namespace
}  // namespace dinput
