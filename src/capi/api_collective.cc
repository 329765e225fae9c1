// Collectives made from a cluster: the worker processes of a job joined over TCP (Gloo),
// meeting through the cluster's rendezvous store. docs/multi-process.md.
#include <chrono>
#include <memory>
#include <string>

#include "capi/cluster_handle.h"
#include "capi/collective_handle.h"
#include "capi/firewall.h"
#include "capi/handles.h"
#include "collective/store_url.h"

#ifdef DINPUT_HAVE_GLOO
#include "collective/gloo.h"
#endif

using namespace dinput;

extern "C" {

DINPUT_API dinput_status_t dinput_collective_new_from_cluster(dinput_collective_t** out,
                                                              const dinput_cluster_t* cluster,
                                                              int64_t timeout_ms,
                                                              const char* job_id) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(cluster);
    const ClusterSpec& spec = cluster->spec;
    require_input_worker(spec, "dinput_collective_new_from_cluster");
    DINPUT_CHECK_ARG(timeout_ms >= 0,
                     "dinput_collective_new_from_cluster: timeout_ms must be >= 0, got ",
                     timeout_ms);
    DINPUT_CHECK_ARG(!spec.rdzv_url.empty(),
                     "dinput_collective_new_from_cluster: the cluster (from ", spec.source,
                     ") has no rendezvous URL; set DINPUT_RDZV_URL, or DINPUT_RDZV_PORT for a "
                     "tcp:// store on the coordinator host");
#ifdef DINPUT_HAVE_GLOO
    const std::chrono::milliseconds timeout(timeout_ms == 0 ? 60000 : timeout_ms);
    const std::string job = job_id && *job_id     ? job_id
                            : spec.job_id.empty() ? std::string("dinput")
                                                  : spec.job_id;
    StoreOptions store_options;
    store_options.job_id = job;
    store_options.connect_timeout = timeout;
    std::shared_ptr<Store> store =
        make_store(spec.rdzv_url, spec.rank, spec.world_size, store_options);
    GlooOptions gloo_options;
    gloo_options.timeout = timeout;
    gloo_options.job_id = job;
    // The collective keeps the store (and rank 0's tcp:// server) as long as it lives.
    *out = capi::new_handle<dinput_collective>(
        make_gloo_collective(spec.rank, spec.world_size, std::move(store), gloo_options));
#else
    (void)job_id;
    raise(Code::kUnimplemented,
          "dinput_collective_new_from_cluster: this build of dinput has no Gloo (see "
          "dinput_build_info); workers can only be threads of one process "
          "(dinput_collective_new_in_process)");
#endif
  });
}

}  // extern "C"
