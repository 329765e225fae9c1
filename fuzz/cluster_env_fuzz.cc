// Fuzz target of the cluster resolvers (src/cluster/cluster.h): the variables a launcher sets
// are text from outside the program, and a resolver must turn any of them into either a
// consistent cluster or an error that names what is wrong.
//
// Input: the first line names the source ("auto", "explicit", "tf_config", "torchrun", "mpi",
// "slurm"; anything else is passed as it is), every further line is NAME=VALUE. Checked
// besides the sanitizers:
//   - success: world_size >= 1; an input worker has 0 <= rank < world_size, any other task
//     rank -1 (and only TF_CONFIG makes those); a known local rank is below a known local
//     world size; the source is the one asked for (or any for auto); the rendezvous URL is
//     empty or tcp://, file:// or redis://;
//   - failure: a dinput::Error, INVALID_ARGUMENT (NOT_FOUND only for auto), with a message;
//   - the SLURM node list and task-count parsers, run on the whole input, give non-empty
//     host names and at most the host cap, or INVALID_ARGUMENT.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "cluster/cluster.h"
#include "core/status.h"

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "cluster_env_fuzz: invariant violated: %s\ninput (%zu bytes)\n",
               what.c_str(), text.size());
  std::abort();
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

void check_error(const dinput::Error& e, bool not_found_allowed, const std::string& text) {
  if (std::string(e.what()).empty()) fail("an error without a message", text);
  if (e.code() == dinput::Code::kInvalidArgument) return;
  if (e.code() == dinput::Code::kNotFound && not_found_allowed) return;
  fail(std::string("an error with code ") + dinput::code_name(e.code()) + ": " + e.what(), text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  // The node list parsers on the raw text, with a small cap so that no input takes long.
  try {
    auto hosts = dinput::expand_slurm_nodelist(text, "V", 4096);
    if (hosts.empty() || hosts.size() > 4096) fail("a node list of no or too many hosts", text);
    for (const auto& h : hosts)
      if (h.empty()) fail("an empty host name", text);
  } catch (const dinput::Error& e) {
    check_error(e, false, text);
  }
  try {
    auto counts = dinput::expand_slurm_tasks_per_node(text, "V");
    if (counts.empty()) fail("a task-count list of no nodes", text);
    for (int c : counts)
      if (c < 0) fail("a negative task count", text);
  } catch (const dinput::Error& e) {
    check_error(e, false, text);
  }

  size_t eol = text.find('\n');
  const std::string source = text.substr(0, eol);
  std::map<std::string, std::string> vars;
  while (eol != std::string::npos) {
    size_t next = text.find('\n', eol + 1);
    std::string line = text.substr(eol + 1, next == std::string::npos ? next : next - eol - 1);
    size_t eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
    eol = next;
  }
  try {
    dinput::ClusterSpec spec = dinput::resolve_cluster(source, dinput::map_environment(vars));
    if (spec.world_size < 1) fail("a world size below 1", text);
    if (spec.input_worker && (spec.rank < 0 || spec.rank >= spec.world_size))
      fail("an input worker's rank outside 0..world_size-1", text);
    if (!spec.input_worker && (spec.rank != -1 || spec.source != "tf_config"))
      fail("a non-input worker with a rank, or not from TF_CONFIG", text);
    if (spec.local_rank >= 0 && spec.local_world_size >= 0 &&
        spec.local_rank >= spec.local_world_size)
      fail("a local rank not below the local world size", text);
    if (source != "auto" && spec.source != source) fail("a cluster from another source", text);
    const std::string& url = spec.rdzv_url;
    if (!url.empty() && !starts_with(url, "tcp://") && !starts_with(url, "file://") &&
        !starts_with(url, "redis://"))
      fail("a rendezvous URL of an unknown scheme", text);
    if (spec.source == "tf_config" && spec.task_type.empty())
      fail("TF_CONFIG without a task", text);
  } catch (const dinput::Error& e) {
    check_error(e, source == "auto", text);
  }
  return 0;
}
