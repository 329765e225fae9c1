// Cluster handles: resolving a worker process's place in a job from the environment, or
// building it explicitly, and reading its fields.
#include "capi/cluster_handle.h"
#include "capi/firewall.h"
#include "capi/handles.h"

using namespace dinput;

namespace {

// Names the exported function in a resolver's error, which names only the variable.
template <typename Body>
ClusterSpec with_function_name(Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    throw Error(e.code(), str_cat(capi::current_function(), ": ", e.what()));
  }
}

}  // namespace

extern "C" {

DINPUT_API dinput_status_t dinput_cluster_resolve(dinput_cluster_t** out, const char* source) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    ClusterSpec spec = with_function_name(
        [&] { return resolve_cluster(source ? source : "auto", process_environment()); });
    *out = capi::new_handle<dinput_cluster>(std::move(spec));
  });
}

DINPUT_API dinput_status_t dinput_cluster_new(dinput_cluster_t** out, int rank, int world_size,
                                              const char* rdzv_url) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    ClusterSpec spec = with_function_name(
        [&] { return make_cluster(rank, world_size, rdzv_url ? rdzv_url : ""); });
    *out = capi::new_handle<dinput_cluster>(std::move(spec));
  });
}

DINPUT_API void dinput_cluster_free(dinput_cluster_t* c) { capi::free_handle(c); }

DINPUT_API int dinput_cluster_rank(const dinput_cluster_t* c) { return c ? c->spec.rank : -1; }
DINPUT_API int dinput_cluster_world_size(const dinput_cluster_t* c) {
  return c ? c->spec.world_size : 0;
}
DINPUT_API int dinput_cluster_local_rank(const dinput_cluster_t* c) {
  return c ? c->spec.local_rank : -1;
}
DINPUT_API int dinput_cluster_local_world_size(const dinput_cluster_t* c) {
  return c ? c->spec.local_world_size : -1;
}
DINPUT_API const char* dinput_cluster_rdzv_url(const dinput_cluster_t* c) {
  return c ? c->spec.rdzv_url.c_str() : "";
}
DINPUT_API const char* dinput_cluster_coordinator_host(const dinput_cluster_t* c) {
  return c ? c->spec.coordinator_host.c_str() : "";
}
DINPUT_API const char* dinput_cluster_job_id(const dinput_cluster_t* c) {
  return c ? c->spec.job_id.c_str() : "";
}
DINPUT_API const char* dinput_cluster_source(const dinput_cluster_t* c) {
  return c ? c->spec.source.c_str() : "";
}
DINPUT_API const char* dinput_cluster_task_type(const dinput_cluster_t* c) {
  return c ? c->spec.task_type.c_str() : "";
}
DINPUT_API int dinput_cluster_task_index(const dinput_cluster_t* c) {
  return c ? c->spec.task_index : -1;
}
DINPUT_API int dinput_cluster_is_input_worker(const dinput_cluster_t* c) {
  return c && c->spec.input_worker ? 1 : 0;
}

}  // extern "C"
