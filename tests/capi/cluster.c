/* Cluster handles: each resolver reading the process environment as its launcher sets it
 * (torchrun, srun, mpirun, TF_CONFIG, DINPUT_*), the automatic order, the errors naming the
 * variable and its value, explicit clusters, and the getters' values for NULL. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "dinput.h"

/* Every variable any resolver reads, cleared before each case so that cases (and the
 * environment ctest runs in) cannot leak into each other. */
static const char* const kVariables[] = {"DINPUT_RANK",
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
                                         "MASTER_ADDR",
                                         "MASTER_PORT",
                                         "TORCHELASTIC_RUN_ID",
                                         "OMPI_COMM_WORLD_RANK",
                                         "OMPI_COMM_WORLD_SIZE",
                                         "OMPI_COMM_WORLD_LOCAL_RANK",
                                         "OMPI_COMM_WORLD_LOCAL_SIZE",
                                         "PMIX_NAMESPACE",
                                         "SLURM_PROCID",
                                         "SLURM_NTASKS",
                                         "SLURM_NPROCS",
                                         "SLURM_STEP_NUM_TASKS",
                                         "SLURM_LOCALID",
                                         "SLURM_NODEID",
                                         "SLURMD_NODENAME",
                                         "SLURM_NTASKS_PER_NODE",
                                         "SLURM_STEP_TASKS_PER_NODE",
                                         "SLURM_STEP_NODELIST",
                                         "SLURM_JOB_NODELIST",
                                         "SLURM_NODELIST",
                                         "SLURM_JOB_ID",
                                         "SLURM_JOBID",
                                         "SLURM_STEP_ID",
                                         "SLURM_STEPID",
                                         "DINPUT_GLOO_IFACE",
                                         "DINPUT_GLOO_ADDRESS",
                                         "DINPUT_GLOO_ALLOW_LOOPBACK"};

static void clear_environment(void) {
  size_t i;
  for (i = 0; i < sizeof kVariables / sizeof kVariables[0]; ++i) unsetenv(kVariables[i]);
}

#define CHECK_STR(got, want) CHECK(strcmp((got), (want)) == 0)

static void test_torchrun(void) {
  dinput_cluster_t* c = NULL;
  clear_environment();
  /* What `torchrun --nnodes 2 --nproc-per-node 4 --rdzv-id job7 ...` gives its sixth worker. */
  setenv("RANK", "5", 1);
  setenv("WORLD_SIZE", "8", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("LOCAL_WORLD_SIZE", "4", 1);
  setenv("GROUP_RANK", "1", 1);
  setenv("MASTER_ADDR", "10.0.0.1", 1);
  setenv("MASTER_PORT", "29500", 1);
  setenv("TORCHELASTIC_RUN_ID", "job7", 1);
  CHECK_OK(dinput_cluster_resolve(&c, "torchrun"));
  CHECK(dinput_cluster_rank(c) == 5);
  CHECK(dinput_cluster_world_size(c) == 8);
  CHECK(dinput_cluster_local_rank(c) == 1);
  CHECK(dinput_cluster_local_world_size(c) == 4);
  CHECK_STR(dinput_cluster_rdzv_url(c), "tcp://10.0.0.1:29500");
  CHECK_STR(dinput_cluster_coordinator_host(c), "10.0.0.1");
  CHECK_STR(dinput_cluster_job_id(c), "job7");
  CHECK_STR(dinput_cluster_source(c), "torchrun");
  CHECK_STR(dinput_cluster_task_type(c), "");
  CHECK(dinput_cluster_task_index(c) == -1);
  CHECK(dinput_cluster_is_input_worker(c) == 1);
  dinput_cluster_free(c);
  c = NULL;
  /* auto finds the same; NULL means auto. */
  CHECK_OK(dinput_cluster_resolve(&c, NULL));
  CHECK_STR(dinput_cluster_source(c), "torchrun");
  dinput_cluster_free(c);
  c = NULL;

  setenv("RANK", "8", 1);
  CHECK_STATUS(dinput_cluster_resolve(&c, "torchrun"), DINPUT_INVALID_ARGUMENT);
  CHECK(c == NULL);
  CHECK_MSG("dinput_cluster_resolve: RANK=8 is not below WORLD_SIZE=8");
  setenv("RANK", "five", 1);
  CHECK_STATUS(dinput_cluster_resolve(&c, "auto"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("RANK='five' is not a non-negative integer");
  setenv("RANK", "0", 1);
  setenv("MASTER_PORT", "port", 1);
  CHECK_STATUS(dinput_cluster_resolve(&c, "torchrun"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("MASTER_PORT='port'");
}

static void test_slurm(void) {
  dinput_cluster_t* c = NULL;
  clear_environment();
  /* What `srun -N 2 --ntasks-per-node 2` in job 4711 gives task 2, the first on node002. */
  setenv("SLURM_PROCID", "2", 1);
  setenv("SLURM_NTASKS", "4", 1);
  setenv("SLURM_NPROCS", "4", 1);
  setenv("SLURM_STEP_NUM_TASKS", "4", 1);
  setenv("SLURM_LOCALID", "0", 1);
  setenv("SLURM_NODEID", "1", 1);
  setenv("SLURMD_NODENAME", "node002", 1);
  setenv("SLURM_NTASKS_PER_NODE", "2", 1);
  setenv("SLURM_STEP_TASKS_PER_NODE", "2(x2)", 1);
  setenv("SLURM_STEP_NODELIST", "node[001-002]", 1);
  setenv("SLURM_JOB_NODELIST", "node[001-002]", 1);
  setenv("SLURM_JOB_ID", "4711", 1);
  setenv("SLURM_STEP_ID", "0", 1);
  CHECK_OK(dinput_cluster_resolve(&c, "slurm"));
  CHECK(dinput_cluster_rank(c) == 2);
  CHECK(dinput_cluster_world_size(c) == 4);
  CHECK(dinput_cluster_local_rank(c) == 0);
  CHECK(dinput_cluster_local_world_size(c) == 2);
  CHECK_STR(dinput_cluster_coordinator_host(c), "node001");
  CHECK_STR(dinput_cluster_job_id(c), "4711.0");
  CHECK_STR(dinput_cluster_source(c), "slurm");
  /* SLURM names no port: no rendezvous until one is given. */
  CHECK_STR(dinput_cluster_rdzv_url(c), "");
  dinput_cluster_free(c);
  c = NULL;
  setenv("DINPUT_RDZV_PORT", "29400", 1);
  CHECK_OK(dinput_cluster_resolve(&c, "auto"));
  CHECK_STR(dinput_cluster_source(c), "slurm");
  CHECK_STR(dinput_cluster_rdzv_url(c), "tcp://node001:29400");
  dinput_cluster_free(c);
  c = NULL;

  setenv("SLURM_STEP_NODELIST", "node[001-", 1);
  CHECK_STATUS(dinput_cluster_resolve(&c, "slurm"), DINPUT_INVALID_ARGUMENT);
  CHECK(c == NULL);
  CHECK_MSG("SLURM_STEP_NODELIST='node[001-'");
}

static void test_mpi(void) {
  dinput_cluster_t* c = NULL;
  clear_environment();
  /* `mpirun -np 4` with the rendezvous given by the user. */
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  setenv("DINPUT_RDZV_URL", "redis://127.0.0.1:6379", 1);
  setenv("DINPUT_JOB_ID", "train-1", 1);
  CHECK_OK(dinput_cluster_resolve(&c, "mpi"));
  CHECK(dinput_cluster_rank(c) == 3);
  CHECK(dinput_cluster_world_size(c) == 4);
  CHECK(dinput_cluster_local_rank(c) == 3);
  CHECK(dinput_cluster_local_world_size(c) == 4);
  CHECK_STR(dinput_cluster_rdzv_url(c), "redis://127.0.0.1:6379");
  CHECK_STR(dinput_cluster_job_id(c), "train-1");
  CHECK_STR(dinput_cluster_source(c), "mpi");
  dinput_cluster_free(c);
  c = NULL;
  setenv("OMPI_COMM_WORLD_SIZE", "", 1); /* empty counts as unset */
  CHECK_STATUS(dinput_cluster_resolve(&c, "mpi"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("OMPI_COMM_WORLD_SIZE is not set");
}

static void test_tf_config(void) {
  dinput_cluster_t* c = NULL;
  static const char* const kCluster =
      "{\"cluster\": {\"chief\": [\"host0:2222\"], \"worker\": [\"host1:2222\", "
      "\"host2:2222\"], \"ps\": [\"host3:2222\"]}, \"task\": {\"type\": \"%s\", \"index\": %d}}";
  char config[512];
  clear_environment();
  snprintf(config, sizeof config, kCluster, "worker", 1);
  setenv("TF_CONFIG", config, 1);
  CHECK_OK(dinput_cluster_resolve(&c, "tf_config"));
  CHECK(dinput_cluster_rank(c) == 2); /* worker 1 after the chief */
  CHECK(dinput_cluster_world_size(c) == 3);
  CHECK_STR(dinput_cluster_task_type(c), "worker");
  CHECK(dinput_cluster_task_index(c) == 1);
  CHECK(dinput_cluster_is_input_worker(c) == 1);
  CHECK_STR(dinput_cluster_coordinator_host(c), "host0");
  CHECK_STR(dinput_cluster_rdzv_url(c), "tcp://host0:2222");
  CHECK_STR(dinput_cluster_source(c), "tf_config");
  CHECK(dinput_cluster_local_rank(c) == -1);
  dinput_cluster_free(c);
  c = NULL;

  /* The ps task resolves and can read its task, but is no input worker. */
  snprintf(config, sizeof config, kCluster, "ps", 0);
  setenv("TF_CONFIG", config, 1);
  CHECK_OK(dinput_cluster_resolve(&c, "auto"));
  CHECK_STR(dinput_cluster_task_type(c), "ps");
  CHECK(dinput_cluster_task_index(c) == 0);
  CHECK(dinput_cluster_is_input_worker(c) == 0);
  CHECK(dinput_cluster_rank(c) == -1);
  dinput_cluster_free(c);
  c = NULL;

  snprintf(config, sizeof config, kCluster, "evaluator", 0);
  setenv("TF_CONFIG", config, 1);
  CHECK_OK(dinput_cluster_resolve(&c, "tf_config"));
  CHECK_STR(dinput_cluster_task_type(c), "evaluator");
  CHECK(dinput_cluster_is_input_worker(c) == 0);
  {
    /* An evaluator reads no input: it cannot join the input job. */
    dinput_collective_t* coll = NULL;
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, NULL), DINPUT_FAILED_PRECONDITION);
    CHECK_MSG("evaluator");
    CHECK(coll == NULL);
  }
  dinput_cluster_free(c);
  c = NULL;

  setenv("TF_CONFIG", "{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": ", 1);
  CHECK_STATUS(dinput_cluster_resolve(&c, "tf_config"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("not valid JSON at offset 41");
  snprintf(config, sizeof config, kCluster, "worker", 2);
  setenv("TF_CONFIG", config, 1);
  CHECK_STATUS(dinput_cluster_resolve(&c, "tf_config"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("task.index 2 is out of range");
  unsetenv("TF_CONFIG");
  CHECK_STATUS(dinput_cluster_resolve(&c, "tf_config"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("TF_CONFIG is not set");
}

static void test_explicit_and_auto(void) {
  dinput_cluster_t* c = NULL;
  clear_environment();
  CHECK_STATUS(dinput_cluster_resolve(&c, "auto"), DINPUT_NOT_FOUND);
  CHECK(c == NULL);
  CHECK_MSG("tried, in order: explicit (DINPUT_RANK or DINPUT_WORLD_SIZE), tf_config (TF_CONFIG)");
  CHECK_MSG("slurm (SLURM_PROCID)");
  CHECK_STATUS(dinput_cluster_resolve(&c, "yarn"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("unknown cluster source 'yarn'");
  CHECK_STATUS(dinput_cluster_resolve(NULL, "auto"), DINPUT_INVALID_ARGUMENT);

  /* DINPUT_* variables come before every launcher's. */
  setenv("SLURM_PROCID", "0", 1);
  setenv("SLURM_NTASKS", "1", 1);
  setenv("DINPUT_RANK", "1", 1);
  setenv("DINPUT_WORLD_SIZE", "2", 1);
  setenv("DINPUT_RDZV_URL", "file:///tmp/rdzv", 1);
  CHECK_OK(dinput_cluster_resolve(&c, "auto"));
  CHECK_STR(dinput_cluster_source(c), "explicit");
  CHECK(dinput_cluster_rank(c) == 1);
  CHECK(dinput_cluster_world_size(c) == 2);
  CHECK_STR(dinput_cluster_rdzv_url(c), "file:///tmp/rdzv");
  CHECK_STR(dinput_cluster_coordinator_host(c), "");
  dinput_cluster_free(c);
  c = NULL;

  CHECK_OK(dinput_cluster_new(&c, 1, 4, "tcp://127.0.0.1:5000"));
  CHECK(dinput_cluster_rank(c) == 1);
  CHECK(dinput_cluster_world_size(c) == 4);
  CHECK(dinput_cluster_local_rank(c) == -1);
  CHECK(dinput_cluster_local_world_size(c) == -1);
  CHECK_STR(dinput_cluster_rdzv_url(c), "tcp://127.0.0.1:5000");
  CHECK_STR(dinput_cluster_coordinator_host(c), "127.0.0.1");
  CHECK_STR(dinput_cluster_source(c), "explicit");
  CHECK_STR(dinput_cluster_job_id(c), "");
  CHECK(dinput_cluster_is_input_worker(c) == 1);
  dinput_cluster_free(c);
  c = NULL;
  CHECK_OK(dinput_cluster_new(&c, 0, 1, NULL));
  CHECK_STR(dinput_cluster_rdzv_url(c), "");
  dinput_cluster_free(c);
  c = NULL;
  CHECK_STATUS(dinput_cluster_new(&c, 4, 4, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK(c == NULL);
  CHECK_MSG("dinput_cluster_new: rank must be in 0..world_size-1 = 0..3, got 4");
  CHECK_STATUS(dinput_cluster_new(&c, 0, 0, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("world_size must be >= 1");
  CHECK_STATUS(dinput_cluster_new(&c, 0, 2, "udp://h:1"), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("rdzv_url='udp://h:1' is not a rendezvous URL");
  CHECK_STATUS(dinput_cluster_new(NULL, 0, 1, NULL), DINPUT_INVALID_ARGUMENT);

  /* The getters of NULL, and free of NULL. */
  CHECK(dinput_cluster_rank(NULL) == -1);
  CHECK(dinput_cluster_world_size(NULL) == 0);
  CHECK(dinput_cluster_local_rank(NULL) == -1);
  CHECK(dinput_cluster_local_world_size(NULL) == -1);
  CHECK_STR(dinput_cluster_rdzv_url(NULL), "");
  CHECK_STR(dinput_cluster_coordinator_host(NULL), "");
  CHECK_STR(dinput_cluster_job_id(NULL), "");
  CHECK_STR(dinput_cluster_source(NULL), "");
  CHECK_STR(dinput_cluster_task_type(NULL), "");
  CHECK(dinput_cluster_task_index(NULL) == -1);
  CHECK(dinput_cluster_is_input_worker(NULL) == 0);
  dinput_cluster_free(NULL);
}

/* A collective from a cluster: the arguments are checked, a cluster without a rendezvous URL
 * is refused naming what to set, and a one-worker job on a file:// store joins at once. A build
 * without Gloo refuses every one with UNIMPLEMENTED. */
static void test_collective_from_cluster(void) {
  dinput_cluster_t* c = NULL;
  dinput_collective_t* coll = NULL;
  dinput_status_t st;
  dinput_collective_options_t* o = NULL;
  CHECK_STATUS(dinput_collective_new_from_cluster(NULL, NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_collective_new_from_cluster(&coll, NULL, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_OK(dinput_cluster_new(&c, 0, 2, NULL));
  CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("no rendezvous URL");
  dinput_cluster_free(c);
  c = NULL;
  {
    char dir[] = "/tmp/dinput-capi-cluster-XXXXXX";
    char url[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(url, sizeof url, "file://%s", dir);
    CHECK_OK(dinput_cluster_new(&c, 0, 1, url));
  }
  CHECK_OK(dinput_collective_options_new(&o));
  CHECK_OK(dinput_collective_options_set_timeout_ms(o, 10000));
  CHECK_OK(dinput_collective_options_set_job_id(o, "capi-cluster-test"));
  st = dinput_collective_new_from_cluster(&coll, c, o);
  dinput_collective_options_free(o);
  if (strstr(dinput_build_info(), "\"gloo\":{\"compiled\":true") != NULL) {
    CHECK(st == DINPUT_OK);
    CHECK(dinput_collective_num_workers(coll) == 1);
  } else {
    CHECK(st == DINPUT_UNIMPLEMENTED);
    CHECK_MSG("no Gloo");
  }
  dinput_collective_free(coll);
  dinput_cluster_free(c);
}

/* Collective options: defaults, setters and getters, NULL. */
static void test_collective_options(void) {
  dinput_collective_options_t* o = NULL;
  CHECK_STATUS(dinput_collective_options_new(NULL), DINPUT_INVALID_ARGUMENT);
  CHECK_OK(dinput_collective_options_new(&o));
  CHECK(dinput_collective_options_timeout_ms(o) == 60000);
  CHECK_STR(dinput_collective_options_job_id(o), "");
  CHECK_STR(dinput_collective_options_interface(o), "");
  CHECK_STR(dinput_collective_options_address(o), "");
  CHECK(dinput_collective_options_allow_loopback(o) == 0);
  CHECK_OK(dinput_collective_options_set_timeout_ms(o, 1500));
  CHECK(dinput_collective_options_timeout_ms(o) == 1500);
  CHECK_STATUS(dinput_collective_options_set_timeout_ms(o, -1), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("timeout_ms must be >= 0, got -1");
  CHECK(dinput_collective_options_timeout_ms(o) == 1500);
  CHECK_OK(dinput_collective_options_set_timeout_ms(o, 0));
  CHECK(dinput_collective_options_timeout_ms(o) == 60000);
  CHECK_OK(dinput_collective_options_set_job_id(o, "job-9"));
  CHECK_STR(dinput_collective_options_job_id(o), "job-9");
  CHECK_OK(dinput_collective_options_set_interface(o, "eth0"));
  CHECK_STR(dinput_collective_options_interface(o), "eth0");
  CHECK_OK(dinput_collective_options_set_interface(o, NULL));
  CHECK_STR(dinput_collective_options_interface(o), "");
  CHECK_OK(dinput_collective_options_set_address(o, "10.1.2.3"));
  CHECK_STR(dinput_collective_options_address(o), "10.1.2.3");
  CHECK_OK(dinput_collective_options_set_allow_loopback(o, 7));
  CHECK(dinput_collective_options_allow_loopback(o) == 1);
  CHECK_OK(dinput_collective_options_set_allow_loopback(o, 0));
  CHECK(dinput_collective_options_allow_loopback(o) == 0);
  CHECK_STATUS(dinput_collective_options_set_job_id(NULL, "x"), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_collective_options_set_interface(NULL, "x"), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_collective_options_set_address(NULL, "x"), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_collective_options_set_allow_loopback(NULL, 1), DINPUT_INVALID_ARGUMENT);
  CHECK_STATUS(dinput_collective_options_set_timeout_ms(NULL, 1), DINPUT_INVALID_ARGUMENT);
  CHECK(dinput_collective_options_timeout_ms(NULL) == 60000);
  CHECK_STR(dinput_collective_options_job_id(NULL), "");
  CHECK_STR(dinput_collective_options_interface(NULL), "");
  CHECK_STR(dinput_collective_options_address(NULL), "");
  CHECK(dinput_collective_options_allow_loopback(NULL) == 0);
  dinput_collective_options_free(o);
  dinput_collective_options_free(NULL);
}

/* A TCP port of 127.0.0.1 that was free a moment ago (the rendezvous server binds it). */
static int free_port(void) {
  struct sockaddr_in a;
  socklen_t length = sizeof a;
  int port = 0;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && bind(fd, (struct sockaddr*)&a, sizeof a) == 0 &&
      getsockname(fd, (struct sockaddr*)&a, &length) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

/* Where a worker listens, from the options and the environment: a bad interface names it and
 * this host's interfaces; a loopback address in a job of two workers is refused unless the
 * job shows it runs on this host. The job first meets at tcp://192.0.2.1 (a documentation
 * address: another host's, as far as the rule can tell; worker 0 serves the rendezvous on
 * every interface whatever the URL's host). Worker 1 never comes, so a worker that passes
 * the checks fails the rendezvous after the short timeout instead (DEADLINE_EXCEEDED naming
 * worker 1). */
static void test_collective_listen_address(void) {
  const int gloo = strstr(dinput_build_info(), "\"gloo\":{\"compiled\":true") != NULL;
  char dir[] = "/tmp/dinput-capi-listen-XXXXXX";
  char url[64];
  dinput_cluster_t* c = NULL;
  dinput_collective_t* coll = NULL;
  dinput_collective_options_t* o = NULL;
  clear_environment();
  CHECK(mkdtemp(dir) != NULL);
  snprintf(url, sizeof url, "tcp://192.0.2.1:%d", free_port());
  CHECK_OK(dinput_cluster_new(&c, 0, 2, url));
  CHECK_OK(dinput_collective_options_new(&o));
  CHECK_OK(dinput_collective_options_set_timeout_ms(o, 300));

  CHECK_OK(dinput_collective_options_set_interface(o, "lo"));
  CHECK_OK(dinput_collective_options_set_address(o, "127.0.0.1"));
  CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_INVALID_ARGUMENT);
  CHECK_MSG("both an interface ('lo') and an address ('127.0.0.1')");
  CHECK_OK(dinput_collective_options_set_address(o, NULL));
  if (!gloo) {
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_UNIMPLEMENTED);
  } else {
    /* The loopback interface, by the option: refused, naming the interface and address. */
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_FAILED_PRECONDITION);
    CHECK_MSG("worker 0 of 2 would listen on the loopback address 127.0.0.1");
    CHECK_MSG("network interface 'lo'");
    CHECK_MSG("DINPUT_GLOO_ALLOW_LOOPBACK=1");
    /* An interface this host lacks: named, with the interfaces there (lo among them). */
    CHECK_OK(dinput_collective_options_set_interface(o, "no-such-if0"));
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("interface=no-such-if0: no network interface of that name");
    CHECK_MSG("lo");
    /* The variable names the interface when the option does not; the option beats it. */
    CHECK_OK(dinput_collective_options_set_interface(o, NULL));
    setenv("DINPUT_GLOO_IFACE", "no-such-if1", 1);
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("DINPUT_GLOO_IFACE=no-such-if1");
    CHECK_OK(dinput_collective_options_set_address(o, "127.0.0.1"));
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_FAILED_PRECONDITION);
    CHECK_MSG("from address '127.0.0.1'");
    unsetenv("DINPUT_GLOO_IFACE");
    /* Allowed by the option, or else by the variable (which the option set to 0 beats). */
    CHECK_OK(dinput_collective_options_set_allow_loopback(o, 1));
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_DEADLINE_EXCEEDED);
    CHECK_MSG("for worker 1");
    CHECK_OK(dinput_collective_options_set_job_id(o, "by-variable"));
    CHECK_OK(dinput_collective_options_set_allow_loopback(o, 0));
    setenv("DINPUT_GLOO_ALLOW_LOOPBACK", "1", 1);
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_FAILED_PRECONDITION);
    dinput_collective_options_free(o);
    CHECK_OK(dinput_collective_options_new(&o));
    CHECK_OK(dinput_collective_options_set_timeout_ms(o, 300));
    CHECK_OK(dinput_collective_options_set_job_id(o, "by-variable"));
    CHECK_OK(dinput_collective_options_set_address(o, "127.0.0.1"));
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_DEADLINE_EXCEEDED);
    setenv("DINPUT_GLOO_ALLOW_LOOPBACK", "yes", 1);
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_INVALID_ARGUMENT);
    CHECK_MSG("DINPUT_GLOO_ALLOW_LOOPBACK='yes' is neither 1 nor 0");
    unsetenv("DINPUT_GLOO_ALLOW_LOOPBACK");
    dinput_cluster_free(c);
    c = NULL;
    /* A launcher that says both workers run on this host. */
    setenv("DINPUT_RANK", "0", 1);
    setenv("DINPUT_WORLD_SIZE", "2", 1);
    setenv("DINPUT_LOCAL_RANK", "0", 1);
    setenv("DINPUT_LOCAL_WORLD_SIZE", "2", 1);
    setenv("DINPUT_RDZV_URL", url, 1);
    CHECK_OK(dinput_cluster_resolve(&c, "explicit"));
    CHECK_OK(dinput_collective_options_set_job_id(o, "local-launcher"));
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_DEADLINE_EXCEEDED);
    dinput_cluster_free(c);
    c = NULL;
    clear_environment();
    /* Rank 0 serves a tcp:// rendezvous: a port that is taken names the URL. */
    {
      struct sockaddr_in a;
      socklen_t length = sizeof a;
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      memset(&a, 0, sizeof a);
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      CHECK(fd >= 0 && bind(fd, (struct sockaddr*)&a, sizeof a) == 0 && listen(fd, 1) == 0 &&
            getsockname(fd, (struct sockaddr*)&a, &length) == 0);
      snprintf(url, sizeof url, "tcp://127.0.0.1:%d", ntohs(a.sin_port));
      CHECK_OK(dinput_cluster_new(&c, 0, 2, url));
      CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_UNAVAILABLE);
      CHECK_MSG(url);
      CHECK_MSG("in use");
      dinput_cluster_free(c);
      c = NULL;
      if (fd >= 0) close(fd);
    }
    /* A rendezvous at a loopback address: only workers of this host can meet there. */
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", free_port());
    CHECK_OK(dinput_cluster_new(&c, 0, 2, url));
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_DEADLINE_EXCEEDED);
    CHECK_MSG("for worker 1");
    dinput_cluster_free(c);
    c = NULL;
    /* A file:// rendezvous in a directory of this host's own file system (/tmp: ext4, tmpfs
     * or overlay) cannot be shared with other hosts either. */
    snprintf(url, sizeof url, "file://%s", dir);
    CHECK_OK(dinput_cluster_new(&c, 0, 2, url));
    CHECK_OK(dinput_collective_options_set_job_id(o, "local-directory"));
    CHECK_STATUS(dinput_collective_new_from_cluster(&coll, c, o), DINPUT_DEADLINE_EXCEEDED);
    CHECK_MSG("for worker 1");
  }
  CHECK(coll == NULL);
  dinput_collective_options_free(o);
  dinput_cluster_free(c);
  {
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    CHECK(system(command) == 0);
  }
}

int main(void) {
  test_torchrun();
  test_slurm();
  test_mpi();
  test_tf_config();
  test_explicit_and_auto();
  test_collective_from_cluster();
  test_collective_options();
  test_collective_listen_address();
  clear_environment();
  return check_finish_();
}
