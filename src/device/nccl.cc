#include "device/nccl.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "core/status.h"
#include "device/gpu.h"

#if defined(DINPUT_HAVE_CUDA) && defined(DINPUT_HAVE_NCCL_HEADER)
#include <nccl.h>

#include "device/gpu_runtime.h"
#define DINPUT_NCCL 1
#endif

namespace dinput::gpu {

#ifdef DINPUT_NCCL

namespace {

// The NCCL entry points dinput uses, looked up in the library opened at run time.
struct NcclApi {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
};

NcclApi& api() {
  static NcclApi a;
  return a;
}

template <typename F>
bool find(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) raise(Code::kInternal, what, " failed: ", api().error_string(r));
}

ncclDataType_t nccl_type(DType d) {
  switch (d) {
    case DType::kInt8:
      return ncclInt8;
    case DType::kUInt8:
      return ncclUint8;
    case DType::kInt32:
      return ncclInt32;
    case DType::kUInt32:
      return ncclUint32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kUInt64:
      return ncclUint64;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    default:
      raise(Code::kUnimplemented, "NCCL has no type for ", dtype_name(d));
  }
}

// One communicator clique per set of devices, made on first use and kept for the process.
std::vector<ncclComm_t>& communicators(const std::vector<int>& devices) {
  static std::mutex mu;
  static std::map<std::vector<int>, std::vector<ncclComm_t>> cliques;
  std::lock_guard<std::mutex> lock(mu);
  auto& comms = cliques[devices];
  if (comms.empty()) {
    comms.resize(devices.size());
    check_nccl(api().comm_init_all(comms.data(), static_cast<int>(devices.size()), devices.data()),
               "ncclCommInitAll");
  }
  return comms;
}

}  // namespace

const NcclAvailability& nccl() {
  static const NcclAvailability probed = [] {
    NcclAvailability a;
    a.compiled = true;
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      a.reason = std::string("libnccl.so.2 could not be opened: ") + dlerror();
      return a;
    }
    NcclApi& f = api();
    if (!find(lib, "ncclGetVersion", f.get_version) ||
        !find(lib, "ncclCommInitAll", f.comm_init_all) ||
        !find(lib, "ncclAllReduce", f.all_reduce) || !find(lib, "ncclGroupStart", f.group_start) ||
        !find(lib, "ncclGroupEnd", f.group_end) ||
        !find(lib, "ncclGetErrorString", f.error_string)) {
      a.reason = "libnccl.so.2 lacks a function dinput needs";
      return a;
    }
    f.get_version(&a.version);
    a.loaded = true;
    return a;
  }();
  return probed;
}

bool nccl_supports(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return true;
    default:
      return false;
  }
}

Tensor nccl_sum_to_host(const std::vector<Tensor>& per_replica, const std::vector<int>& devices) {
  if (!nccl().loaded) raise(Code::kUnavailable, "NCCL: ", nccl().reason);
  const Tensor& first = per_replica.at(0);
  ncclDataType_t type = nccl_type(first.dtype());
  const size_t count = static_cast<size_t>(first.num_elements());
  std::vector<ncclComm_t>& comms = communicators(devices);
  // Each replica sums into a fresh block of its device, after the copy that filled its input.
  std::vector<Tensor> sums;
  std::vector<cudaStream_t> streams(devices.size());
  for (size_t r = 0; r < devices.size(); ++r) {
    DeviceGuard guard(devices[r]);
    check_cuda(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking),
               "cudaStreamCreate for NCCL");
    stream_wait(per_replica[r], streams[r]);
    sums.emplace_back(first.dtype(), first.shape(),
                      allocate_device(devices[r], first.byte_size(), streams[r]), 0);
  }
  check_nccl(api().group_start(), "ncclGroupStart");
  for (size_t r = 0; r < devices.size(); ++r)
    check_nccl(api().all_reduce(per_replica[r].data(), sums[r].mutable_data(), count, type, ncclSum,
                                comms[r], streams[r]),
               "ncclAllReduce");
  check_nccl(api().group_end(), "ncclGroupEnd");
  for (size_t r = 0; r < devices.size(); ++r) {
    DeviceGuard guard(devices[r]);
    check_cuda(cudaStreamSynchronize(streams[r]), "cudaStreamSynchronize after ncclAllReduce");
    cudaStreamDestroy(streams[r]);
  }
  return copy_to_host(sums[0]);
}

#else  // no CUDA or no nccl.h at build time

const NcclAvailability& nccl() {
  static const NcclAvailability a = [] {
    NcclAvailability n;
    n.reason = "this build of dinput has no NCCL support";
    return n;
  }();
  return a;
}

bool nccl_supports(DType) { return false; }

Tensor nccl_sum_to_host(const std::vector<Tensor>&, const std::vector<int>&) {
  raise(Code::kUnavailable, "NCCL: ", nccl().reason);
}

#endif

}  // namespace dinput::gpu
