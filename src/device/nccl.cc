#include "device/nccl.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "collective/collective.h"
#include "core/immortal.h"
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
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  // Across worker processes (nccl_sum_across_workers); NCCL 2.14 and later have both.
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) comm_init_rank_config = nullptr;
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

std::string device_list(const std::vector<int>& devices) {
  std::string s;
  for (int d : devices) s += (s.empty() ? "GPU:" : ", GPU:") + std::to_string(d);
  return s;
}

// The test hook's rank (testing::fail_next_all_reduce), or -1.
std::atomic<int> injected_failure_rank{-1};

// One lock per GPU, never freed. An operation holds the locks of all its GPUs, taken in
// ascending order, from its first stream wait until its sum is complete: collectives are
// then queued on every GPU in one order (two orders on two GPUs deadlock), also between
// cliques that share a GPU, and two threads never queue into one clique at once.
std::mutex& device_lock(int device) {
  struct Locks {
    std::mutex mu;
    std::map<int, std::unique_ptr<std::mutex>> by_device;
  };
  static Immortal<Locks> locks;
  std::lock_guard<std::mutex> lock(locks->mu);
  std::unique_ptr<std::mutex>& m = locks->by_device[device];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

class DeviceLocks {
 public:
  explicit DeviceLocks(std::vector<int> devices) {
    std::sort(devices.begin(), devices.end());
    for (int d : devices) held_.emplace_back(device_lock(d));
  }

 private:
  std::vector<std::unique_lock<std::mutex>> held_;
};

// The communicators of one list of devices (rank r on devices[r]) and a stream per rank,
// made on first use and kept until an error aborts them.
struct Clique {
  std::vector<int> devices;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
};

std::mutex& cliques_mutex() {
  static std::mutex mu;
  return mu;
}

// Immortal: tensors and threads may still reduce while static destructors run at exit.
std::map<std::vector<int>, std::shared_ptr<Clique>>& cliques() {
  static Immortal<std::map<std::vector<int>, std::shared_ptr<Clique>>> m;
  return *m;
}

// Aborts the communicators (ending whatever they still run) and forgets the clique, so the
// next operation on these devices starts from new ones. Never throws.
void drop(const std::shared_ptr<Clique>& clique) {
  {
    std::lock_guard<std::mutex> lock(cliques_mutex());
    auto it = cliques().find(clique->devices);
    if (it != cliques().end() && it->second == clique) cliques().erase(it);
  }
  for (ncclComm_t c : clique->comms)
    if (c) api().comm_abort(c);
  for (size_t r = 0; r < clique->streams.size(); ++r) {
    if (!clique->streams[r]) continue;
    try {
      DeviceGuard guard(clique->devices[r]);
      cudaStreamSynchronize(clique->streams[r]);  // the aborted kernels have returned
      cudaStreamDestroy(clique->streams[r]);
    } catch (const Error&) {
      // No device to set: the stream goes with its context.
    }
  }
  cudaGetLastError();  // the abort's errors are reported by the caller, not by later calls
}

// The clique of `devices`; the caller holds their device locks, so no other thread makes
// the same clique meanwhile.
std::shared_ptr<Clique> clique_for(const std::vector<int>& devices) {
  {
    std::lock_guard<std::mutex> lock(cliques_mutex());
    auto it = cliques().find(devices);
    if (it != cliques().end()) return it->second;
  }
  auto clique = std::make_shared<Clique>();
  clique->devices = devices;
  clique->comms.assign(devices.size(), nullptr);
  clique->streams.assign(devices.size(), nullptr);
  try {
    check_nccl(
        api().comm_init_all(clique->comms.data(), static_cast<int>(devices.size()), devices.data()),
        "ncclCommInitAll");
    for (size_t r = 0; r < devices.size(); ++r) {
      DeviceGuard guard(devices[r]);
      check_cuda(cudaStreamCreateWithFlags(&clique->streams[r], cudaStreamNonBlocking),
                 "cudaStreamCreate for NCCL");
    }
  } catch (...) {
    drop(clique);
    throw;
  }
  std::lock_guard<std::mutex> lock(cliques_mutex());
  cliques()[devices] = clique;
  return clique;
}

// An NCCL group that is ended however its scope is left: a group left open keeps every
// later NCCL call of the thread from launching. After an error inside the group NCCL
// cancels the group's operations at its end.
class Group {
 public:
  Group() { check_nccl(api().group_start(), "ncclGroupStart"); }
  ~Group() {
    if (open_) api().group_end();
  }
  void end() {
    open_ = false;
    check_nccl(api().group_end(), "ncclGroupEnd");
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  bool open_ = true;
};

// Waits for rank r's operation by polling its stream and its communicator's asynchronous
// error: a collective that fails on a peer never completes, so a plain stream synchronize
// would wait forever.
void wait_for(const Clique& clique, size_t r) {
  DeviceGuard guard(clique.devices[r]);
  for (int polls = 0;; ++polls) {
    cudaError_t q = cudaStreamQuery(clique.streams[r]);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) check_cuda(q, "cudaStreamQuery after ncclAllReduce");
    ncclResult_t async = ncclSuccess;
    check_nccl(api().comm_get_async_error(clique.comms[r], &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress)
      raise(Code::kUnavailable, "NCCL all-reduce over ", device_list(clique.devices),
            " failed on GPU:", clique.devices[r], ": ", api().error_string(async),
            "; its communicators were aborted and the next reduce makes new ones");
    // Most sums finish within microseconds; after that, back off to spare the CPU.
    if (polls < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

namespace testing {
void fail_next_all_reduce(int rank) { injected_failure_rank.store(rank); }
}  // namespace testing

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
        !find(lib, "ncclCommAbort", f.comm_abort) ||
        !find(lib, "ncclCommGetAsyncError", f.comm_get_async_error) ||
        !find(lib, "ncclAllReduce", f.all_reduce) || !find(lib, "ncclGroupStart", f.group_start) ||
        !find(lib, "ncclGroupEnd", f.group_end) ||
        !find(lib, "ncclGetErrorString", f.error_string)) {
      a.reason = "libnccl.so.2 lacks a function dinput needs";
      return a;
    }
    f.get_version(&a.version);
    a.loaded = true;
    // Optional: without them, reduce across workers stays on the host.
    a.across_workers = find(lib, "ncclGetUniqueId", f.get_unique_id) &&
                       find(lib, "ncclCommInitRankConfig", f.comm_init_rank_config);
    return a;
  }();
  return probed;
}

namespace {

using Clock = std::chrono::steady_clock;

// The communicator of one worker of a collective's job, on its GPU, with a stream of its own;
// kept as an attachment of the collective (Collective::attachment) until an error aborts it.
struct WorkerComm {
  int device = -1;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  std::mutex mu;  // one sum at a time: NCCL calls on a communicator must not interleave
  ~WorkerComm() {
    if (comm) api().comm_abort(comm);
    if (stream) {
      try {
        DeviceGuard guard(device);
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(stream);
      } catch (const Error&) {
      }
    }
    cudaGetLastError();
  }
};

Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  // A timeout past ~31 years means none (as for the collectives).
  if (timeout.count() > 1000000000000LL) return Clock::time_point::max();
  return Clock::now() + timeout;
}

// Polls a non-blocking communicator until its pending call (forming, or queueing an
// operation) is done. Past the deadline, or on NCCL's error, the caller aborts it.
void wait_in_progress(ncclComm_t comm, Clock::time_point deadline, const std::string& what) {
  for (int polls = 0;; ++polls) {
    ncclResult_t state = ncclSuccess;
    check_nccl(api().comm_get_async_error(comm, &state), "ncclCommGetAsyncError");
    if (state == ncclSuccess) return;
    if (state != ncclInProgress)
      raise(Code::kUnavailable, what, " failed: ", api().error_string(state));
    if (Clock::now() >= deadline)
      raise(Code::kDeadlineExceeded, what,
            " did not complete within the collective's timeout: another worker is missing, "
            "stopped or slow");
    if (polls < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

std::shared_ptr<WorkerComm> worker_comm(Collective& collective, int worker, int device) {
  const std::string name = "nccl.worker_comm";
  if (auto made = std::static_pointer_cast<WorkerComm>(collective.attachment(name))) {
    if (made->device != device)
      raise(Code::kFailedPrecondition, "NCCL across workers: worker ", worker,
            " reduced on GPU:", made->device, " before and on GPU:", device,
            " now; one communicator serves one GPU per worker");
    return made;
  }
  const int workers = collective.num_workers();
  // Worker 0 makes NCCL's unique id; the job's collective carries it to the others.
  const std::string id_bytes = collective.share_from_worker0(worker, 0, [] {
    ncclUniqueId id;
    check_nccl(api().get_unique_id(&id), "ncclGetUniqueId");
    return std::string(id.internal, sizeof id.internal);
  });
  if (id_bytes.size() != sizeof(ncclUniqueId))
    raise(Code::kInternal, "NCCL across workers: worker 0 sent an id of ", id_bytes.size(),
          " bytes");
  ncclUniqueId id;
  std::memcpy(id.internal, id_bytes.data(), sizeof id.internal);
  auto made = std::make_shared<WorkerComm>();
  made->device = device;
  DeviceGuard guard(device);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every wait is polled against the deadline instead
  const std::string what = str_cat("forming the NCCL communicator of the ", workers,
                                   " workers (this is worker ", worker, ", on GPU:", device, ")");
  const ncclResult_t r = api().comm_init_rank_config(&made->comm, workers, id, worker, &config);
  if (r != ncclSuccess && r != ncclInProgress)
    raise(Code::kUnavailable, what, " failed: ", api().error_string(r));
  wait_in_progress(made->comm, deadline_after(collective.timeout()), what);
  check_cuda(cudaStreamCreateWithFlags(&made->stream, cudaStreamNonBlocking),
             "cudaStreamCreate for NCCL");
  collective.set_attachment(name, made);
  return made;
}

}  // namespace

bool nccl_across_workers_available() { return nccl().loaded && nccl().across_workers; }

Tensor nccl_sum_across_workers(Collective& collective, int worker, const Tensor& local,
                               int device) {
  if (!nccl_across_workers_available())
    raise(Code::kUnavailable, "NCCL across workers: ",
          nccl().loaded ? "this libnccl has no non-blocking communicators" : nccl().reason);
  const ncclDataType_t type = nccl_type(local.dtype());
  const size_t count = static_cast<size_t>(local.num_elements());
  std::shared_ptr<WorkerComm> wc = worker_comm(collective, worker, device);
  std::lock_guard<std::mutex> lock(wc->mu);
  DeviceGuard guard(device);
  try {
    stream_wait(local, wc->stream);
    Tensor sum(local.dtype(), local.shape(), allocate_device(device, local.byte_size(), wc->stream),
               0);
    const std::string what =
        str_cat("NCCL all-reduce over the ", collective.num_workers(), " workers");
    const Clock::time_point deadline = deadline_after(collective.timeout());
    const ncclResult_t r = api().all_reduce(local.data(), sum.mutable_data(), count, type, ncclSum,
                                            wc->comm, wc->stream);
    if (r != ncclSuccess && r != ncclInProgress)
      raise(Code::kUnavailable, what, " failed: ", api().error_string(r));
    wait_in_progress(wc->comm, deadline, what);  // queued
    for (int polls = 0;; ++polls) {              // and run
      const cudaError_t q = cudaStreamQuery(wc->stream);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) check_cuda(q, "cudaStreamQuery after ncclAllReduce");
      wait_in_progress(wc->comm, deadline, what);  // raises on NCCL's error or the deadline
      if (polls < 1000)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return copy_to_host(sum);
  } catch (...) {
    // A peer gone or stalled: only an abort ends what the communicator still runs. The next
    // call forms a new one (every worker fails this call the same way, or by its timeout).
    collective.set_attachment("nccl.worker_comm", nullptr);
    throw;
  }
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
  if (devices.empty() || per_replica.size() != devices.size())
    raise(Code::kInvalidArgument, "NCCL sum: ", per_replica.size(), " tensor(s) for ",
          devices.size(), " device(s)");
  for (size_t r = 0; r < devices.size(); ++r)
    for (size_t q = 0; q < r; ++q)
      if (devices[q] == devices[r])
        raise(Code::kFailedPrecondition, "NCCL sum: GPU:", devices[r],
              " is listed twice; NCCL needs one rank per GPU");
  const Tensor& first = per_replica.at(0);
  const ncclDataType_t type = nccl_type(first.dtype());
  const size_t count = static_cast<size_t>(first.num_elements());
  const int fail_rank = injected_failure_rank.exchange(-1);
  DeviceLocks locks(devices);
  std::shared_ptr<Clique> clique = clique_for(devices);
  // Each replica sums into a fresh block of its device, after the copy that filled its input.
  std::vector<Tensor> sums;
  for (size_t r = 0; r < devices.size(); ++r) {
    DeviceGuard guard(devices[r]);
    stream_wait(per_replica[r], clique->streams[r]);
    sums.emplace_back(first.dtype(), first.shape(),
                      allocate_device(devices[r], first.byte_size(), clique->streams[r]), 0);
  }
  try {
    {
      Group group;
      for (size_t r = 0; r < devices.size(); ++r) {
        // The hook hands NCCL a type it does not have: a real NCCL failure inside the group.
        const ncclDataType_t t =
            static_cast<int>(r) == fail_rank ? static_cast<ncclDataType_t>(ncclNumTypes) : type;
        check_nccl(api().all_reduce(per_replica[r].data(), sums[r].mutable_data(), count, t,
                                    ncclSum, clique->comms[r], clique->streams[r]),
                   "ncclAllReduce");
      }
      group.end();
    }
    for (size_t r = 0; r < devices.size(); ++r) wait_for(*clique, r);
  } catch (...) {
    // The group may have launched part of the collective; only an abort ends it for sure.
    drop(clique);
    throw;
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

bool nccl_across_workers_available() { return false; }

Tensor nccl_sum_across_workers(Collective&, int, const Tensor&, int) {
  raise(Code::kUnavailable, "NCCL: ", nccl().reason);
}

namespace testing {
void fail_next_all_reduce(int) {}
}  // namespace testing

#endif

}  // namespace dinput::gpu
