// GPU tests of dinput through its C API. Each case exits 77 (CTest: SKIP) when no usable GPU
// is present, 0 when it passes, 1 with a message when it fails.
#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dinput.h"
#include "dinput_cuda.h"

namespace {

#define REQUIRE(cond, ...)                                   \
  do {                                                       \
    if (!(cond)) {                                           \
      std::fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                     \
      std::fprintf(stderr, "\n");                            \
      std::exit(1);                                          \
    }                                                        \
  } while (0)

void ok(dinput_status_t st) {
  REQUIRE(st == DINPUT_OK, "%s: %s", dinput_status_name(st), dinput_last_error_message());
}

void cuda(cudaError_t err) { REQUIRE(err == cudaSuccess, "CUDA: %s", cudaGetErrorString(err)); }

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

struct Pipeline {
  dinput_strategy_t* strategy = nullptr;
  dinput_dataset_t* dataset = nullptr;
  dinput_dist_dataset_t* dist = nullptr;
  ~Pipeline() {
    dinput_dist_dataset_free(dist);
    dinput_dataset_free(dataset);
    dinput_strategy_free(strategy);
  }
};

// range(n).batch(g) distributed over `devices`, fetched to the device or kept on the host.
void make_range_pipeline(Pipeline& p, const std::vector<const char*>& devices, int64_t n, int64_t g, bool fetch) {
  dinput_dataset_t* range = nullptr;
  ok(dinput_strategy_new(&p.strategy, devices.data(), devices.size()));
  ok(dinput_dataset_range(&range, 0, n, 1));
  ok(dinput_dataset_batch(&p.dataset, range, g, nullptr));
  dinput_dataset_free(range);
  dinput_input_options_t* o = nullptr;
  ok(dinput_input_options_new(&o));
  ok(dinput_input_options_set_fetch_to_device(o, fetch ? 1 : 0));
  ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, o));
  dinput_input_options_free(o);
}

// Every replica's values of one epoch, read back to the host.
std::vector<std::vector<int64_t>> drain(const Pipeline& p) {
  std::vector<std::vector<int64_t>> out;
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  dinput_per_replica_t* step = nullptr;
  while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
    for (size_t r = 0; r < dinput_per_replica_size(step); ++r) {
      const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, r), 0);
      dinput_tensor_t* host = nullptr;
      ok(dinput_tensor_to_host(&host, t));
      const int64_t* v = static_cast<const int64_t*>(dinput_tensor_data(host));
      out.emplace_back(v, v + dinput_tensor_dim(host, 0));
      dinput_tensor_free(host);
    }
    dinput_per_replica_free(step);
  }
  dinput_dist_iterator_free(it);
  return out;
}

// Values delivered to GPUs equal those of the host path, piece for piece.
int test_values() {
  std::vector<const char*> devices = {"GPU:0"};
  if (gpu_count() > 1) devices.push_back("GPU:1");
  devices.push_back("CPU:0");
  Pipeline on_gpu, on_host;
  make_range_pipeline(on_gpu, devices, 1000, 96, true);
  make_range_pipeline(on_host, devices, 1000, 96, false);
  auto a = drain(on_gpu);
  // Device types per replica: GPU replicas get CUDA tensors, the CPU replica host ones.
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, on_gpu.dist));
  dinput_per_replica_t* step = nullptr;
  ok(dinput_dist_iterator_get_next(&step, it));
  for (size_t r = 0; r < devices.size(); ++r) {
    const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, r), 0);
    bool gpu = std::strncmp(devices[r], "GPU", 3) == 0;
    REQUIRE((dinput_tensor_device_type(t) == DINPUT_DEVICE_CUDA) == gpu, "replica %zu has device type %d", r,
            dinput_tensor_device_type(t));
    if (gpu) REQUIRE(dinput_tensor_device_index(t) == devices[r][4] - '0', "wrong device index");
  }
  dinput_per_replica_free(step);
  dinput_dist_iterator_free(it);
  REQUIRE(a == drain(on_host), "GPU and host paths delivered different values");
  std::puts("values: identical to the host path");
  return 0;
}

__global__ void spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Copies overlap compute: with a kernel of a few ms per step, the time the compute stream
// waits for its input (between asking for the step and the kernel start) is <= 5 %.
int test_overlap() {
  const int64_t rows = 4 << 20;  // 4 Mi float32 rows of 1 = 16 MiB per batch
  dinput_tensor_t* big = nullptr;
  const int64_t shape[1] = {rows};
  ok(dinput_tensor_new(&big, DINPUT_FLOAT32, shape, 1, nullptr, 0));
  const dinput_tensor_t* parts[1] = {big};
  dinput_element_t* e = nullptr;
  ok(dinput_element_new(&e, parts, 1));
  Pipeline p;
  const char* devices[1] = {"GPU:0"};
  ok(dinput_strategy_new(&p.strategy, devices, 1));
  dinput_dataset_t* one = nullptr;
  ok(dinput_dataset_from_tensors(&one, e));
  ok(dinput_dataset_repeat(&p.dataset, one, 60));
  ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, nullptr));
  cudaDeviceProp prop{};
  cuda(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  cuda(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const long long cycles = static_cast<long long>(clock_khz) * 4;  // about 4 ms
  cudaStream_t stream;
  cuda(cudaStreamCreate(&stream));
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  float waited_ms = 0, total_ms = 0;
  int steps = 0;
  dinput_per_replica_t* step = nullptr;
  std::vector<dinput_per_replica_t*> in_flight;
  cudaEvent_t begin, ready, end;
  cuda(cudaEventCreate(&begin));
  cuda(cudaEventCreate(&ready));
  cuda(cudaEventCreate(&end));
  while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
    cuda(cudaEventRecord(begin, stream));
    ok(dinput_element_cuda_wait(dinput_per_replica_get(step, 0), stream));
    cuda(cudaEventRecord(ready, stream));
    spin_kernel<<<1, 1, 0, stream>>>(cycles);
    cuda(cudaEventRecord(end, stream));
    cuda(cudaEventSynchronize(end));
    float w = 0, t = 0;
    cuda(cudaEventElapsedTime(&w, begin, ready));
    cuda(cudaEventElapsedTime(&t, begin, end));
    if (steps >= 5) {  // after warm-up
      waited_ms += w;
      total_ms += t;
    }
    ++steps;
    dinput_per_replica_free(step);
  }
  dinput_dist_iterator_free(it);
  double exposed = waited_ms / total_ms;
  std::printf("overlap: %d steps, exposed input wait %.3f ms of %.1f ms (%.2f %%)\n", steps, waited_ms, total_ms,
              100 * exposed);
  REQUIRE(steps == 60, "expected 60 steps, got %d", steps);
  REQUIRE(exposed <= 0.05, "exposed input wait %.2f %% > 5 %%", 100 * exposed);
  dinput_dataset_free(one);
  dinput_element_free(e);
  dinput_tensor_free(big);
  return 0;
}

// Creating and destroying 1000 iterators leaves device memory at its baseline.
int test_iterators() {
  Pipeline p;
  make_range_pipeline(p, {"GPU:0"}, 1 << 16, 4096, true);
  auto one_epoch_step = [&] {
    dinput_dist_iterator_t* it = nullptr;
    ok(dinput_dist_dataset_iterator(&it, p.dist));
    dinput_per_replica_t* step = nullptr;
    ok(dinput_dist_iterator_get_next(&step, it));
    dinput_per_replica_free(step);
    dinput_dist_iterator_free(it);
  };
  one_epoch_step();
  cuda(cudaDeviceSynchronize());
  size_t free0 = 0, total = 0;
  cuda(cudaMemGetInfo(&free0, &total));
  for (int i = 0; i < 1000; ++i) one_epoch_step();
  cuda(cudaDeviceSynchronize());
  size_t free1 = 0;
  cuda(cudaMemGetInfo(&free1, &total));
  std::printf("iterators: free device memory %zu -> %zu bytes after 1000 iterators\n", free0, free1);
  REQUIRE(free1 + (2u << 20) >= free0, "device memory grew by %zu bytes", free0 - free1);
  return 0;
}

// DLPack export of a device tensor says kDLCUDA and its device, and keeps the data alive.
int test_dlpack() {
  Pipeline p;
  make_range_pipeline(p, {"GPU:0"}, 64, 64, true);
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  dinput_per_replica_t* step = nullptr;
  ok(dinput_dist_iterator_get_next(&step, it));
  DLManagedTensor* dl = nullptr;
  ok(dinput_tensor_to_dlpack(&dl, dinput_element_get(dinput_per_replica_get(step, 0), 0)));
  dinput_per_replica_free(step);
  dinput_dist_iterator_free(it);
  REQUIRE(dl->dl_tensor.device.device_type == kDLCUDA && dl->dl_tensor.device.device_id == 0, "wrong DLPack device");
  std::vector<int64_t> host(64);
  cuda(cudaDeviceSynchronize());
  cuda(cudaMemcpy(host.data(), dl->dl_tensor.data, 64 * sizeof(int64_t), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 64; ++i) REQUIRE(host[i] == i, "value %d is %lld", i, static_cast<long long>(host[i]));
  dl->deleter(dl);
  std::puts("dlpack: kDLCUDA export holds its data");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (gpu_count() == 0) {
    std::puts("SKIP: no usable CUDA device");
    return 77;
  }
  std::string which = argc > 1 ? argv[1] : "values";
  if (which == "values") return test_values();
  if (which == "overlap") return test_overlap();
  if (which == "iterators") return test_iterators();
  if (which == "dlpack") return test_dlpack();
  std::fprintf(stderr, "unknown case %s\n", which.c_str());
  return 2;
}
