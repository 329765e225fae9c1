// Collectives made from a cluster: the worker processes of a job joined over TCP (Gloo),
// meeting through the cluster's rendezvous store, and their options. docs/multi-process.md.
#include <arpa/inet.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "capi/cluster_handle.h"
#include "capi/collective_handle.h"
#include "capi/firewall.h"
#include "capi/handles.h"
#include "collective/in_process.h"
#include "collective/store_url.h"

#ifdef DINPUT_HAVE_GLOO
#include "collective/gloo.h"
#endif

using namespace dinput;

struct dinput_collective_options {
  int64_t timeout_ms = 0;  // 0: the default
  std::string job_id;
  std::string interface;
  std::string address;
  int allow_loopback = -1;  // -1: unset, DINPUT_GLOO_ALLOW_LOOPBACK decides
};

namespace {

constexpr int64_t kDefaultTimeoutMs = 60000;

const dinput_collective_options& options_or_default(const dinput_collective_options_t* o) {
  static const dinput_collective_options defaults;
  return o ? *o : defaults;
}

// "localhost", or an IPv4 address in 127.0.0.0/8, or ::1: a name every host takes for itself,
// so a job that meets there runs on one host. A name that merely resolves to loopback here
// says nothing: Debian maps a host's own name to 127.0.1.1 on that host alone.
bool loopback_literal(const std::string& host) {
  if (host == "localhost" || host == "ip6-localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

// Whether `dir` (or, while it does not exist yet, its nearest existing parent) is on a file
// system that only this host mounts (ext4, xfs, btrfs, f2fs, tmpfs, ramfs, overlay): workers
// of other hosts cannot meet in it. Shared ones (NFS, Lustre, GPFS, CephFS, FUSE, ...) and any
// that cannot be told say nothing.
bool on_local_file_system(std::string dir) {
  struct statfs fs;
  for (;;) {
    if (statfs(dir.c_str(), &fs) == 0) break;
    if ((errno != ENOENT && errno != ENOTDIR) || dir == "/" || dir == ".") return false;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
  }
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2 and ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

// Whether this worker may listen on a loopback address: the option (else
// DINPUT_GLOO_ALLOW_LOOPBACK) allows it, the launcher says every worker runs on this host,
// or they meet where only workers of this host can: a loopback address, or a directory on a
// file system of this host alone.
bool loopback_allowed(const dinput_collective_options& o, const ClusterSpec& spec) {
  if (o.allow_loopback >= 0) {
    if (o.allow_loopback) return true;
  } else if (const char* env = std::getenv("DINPUT_GLOO_ALLOW_LOOPBACK"); env && *env) {
    if (std::strcmp(env, "1") == 0) return true;
    DINPUT_CHECK_ARG(std::strcmp(env, "0") == 0, "DINPUT_GLOO_ALLOW_LOOPBACK='", env,
                     "' is neither 1 nor 0");
  }
  if (spec.world_size <= 1 || spec.local_world_size == spec.world_size) return true;
  const StoreUrl url = parse_store_url(spec.rdzv_url);
  if (url.scheme == "file") return on_local_file_system(url.path);
  return loopback_literal(url.host);
}

}  // namespace

extern "C" {

DINPUT_API dinput_status_t dinput_collective_options_new(dinput_collective_options_t** out) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_collective_options>();
  });
}

DINPUT_API void dinput_collective_options_free(dinput_collective_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t
dinput_collective_options_set_timeout_ms(dinput_collective_options_t* options, int64_t timeout_ms) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    DINPUT_CHECK_ARG(timeout_ms >= 0,
                     "dinput_collective_options_set_timeout_ms: timeout_ms must be >= 0, got ",
                     timeout_ms);
    options->timeout_ms = timeout_ms;
  });
}

DINPUT_API int64_t
dinput_collective_options_timeout_ms(const dinput_collective_options_t* options) {
  const int64_t ms = options_or_default(options).timeout_ms;
  return ms == 0 ? kDefaultTimeoutMs : ms;
}

DINPUT_API dinput_status_t
dinput_collective_options_set_job_id(dinput_collective_options_t* options, const char* job_id) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->job_id = job_id ? job_id : "";
  });
}

DINPUT_API const char* dinput_collective_options_job_id(
    const dinput_collective_options_t* options) {
  return options_or_default(options).job_id.c_str();
}

DINPUT_API dinput_status_t
dinput_collective_options_set_interface(dinput_collective_options_t* options, const char* name) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->interface = name ? name : "";
  });
}

DINPUT_API const char* dinput_collective_options_interface(
    const dinput_collective_options_t* options) {
  return options_or_default(options).interface.c_str();
}

DINPUT_API dinput_status_t
dinput_collective_options_set_address(dinput_collective_options_t* options, const char* address) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->address = address ? address : "";
  });
}

DINPUT_API const char* dinput_collective_options_address(
    const dinput_collective_options_t* options) {
  return options_or_default(options).address.c_str();
}

DINPUT_API dinput_status_t
dinput_collective_options_set_allow_loopback(dinput_collective_options_t* options, int allow) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->allow_loopback = allow != 0 ? 1 : 0;
  });
}

DINPUT_API int dinput_collective_options_allow_loopback(
    const dinput_collective_options_t* options) {
  return options_or_default(options).allow_loopback == 1 ? 1 : 0;
}

DINPUT_API dinput_status_t
dinput_collective_new_from_cluster(dinput_collective_t** out, const dinput_cluster_t* cluster,
                                   const dinput_collective_options_t* options) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(cluster);
    const ClusterSpec& spec = cluster->spec;
    const dinput_collective_options& o = options_or_default(options);
    require_input_worker(spec, "dinput_collective_new_from_cluster");
    DINPUT_CHECK_ARG(!spec.rdzv_url.empty(),
                     "dinput_collective_new_from_cluster: the cluster (from ", spec.source,
                     ") has no rendezvous URL; set DINPUT_RDZV_URL, or DINPUT_RDZV_PORT for a "
                     "tcp:// store on the coordinator host");
    DINPUT_CHECK_ARG(o.interface.empty() || o.address.empty(),
                     "dinput_collective_new_from_cluster: the options name both an interface ('",
                     o.interface, "') and an address ('", o.address, "') to listen on; set one");
#ifdef DINPUT_HAVE_GLOO
    const std::chrono::milliseconds timeout(dinput_collective_options_timeout_ms(options));
    const std::string job = !o.job_id.empty()     ? o.job_id
                            : spec.job_id.empty() ? std::string("dinput")
                                                  : spec.job_id;
    StoreOptions store_options;
    store_options.job_id = job;
    store_options.connect_timeout =
        std::min<std::chrono::milliseconds>(timeout, std::chrono::milliseconds(kNoDeadlineMs));
    GlooOptions gloo_options;
    gloo_options.timeout = timeout;
    gloo_options.job_id = job;
    gloo_options.iface = o.interface;
    gloo_options.address = o.address;
    gloo_options.refuse_loopback = !loopback_allowed(o, spec);
    std::shared_ptr<Store> store =
        make_store(spec.rdzv_url, spec.rank, spec.world_size, store_options);
    // The collective keeps the store (and rank 0's tcp:// server) as long as it lives.
    *out = capi::new_handle<dinput_collective>(
        make_gloo_collective(spec.rank, spec.world_size, std::move(store), gloo_options));
#else
    (void)loopback_allowed;
    raise(Code::kUnimplemented,
          "dinput_collective_new_from_cluster: this build of dinput has no Gloo (see "
          "dinput_build_info); workers can only be threads of one process "
          "(dinput_collective_new_in_process)");
#endif
  });
}

}  // extern "C"
