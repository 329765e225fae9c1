// The NCCL reduce (src/device/nccl.*) called directly, white-box: the C API hands it only
// two or more GPUs and falls back to the host path silently, so this program is what shows
// that NCCL itself runs and sums right. With one GPU the sum over a single rank is the
// input; with two or more, element-wise sums of distinct values per device. Exits 77 (SKIP)
// without a usable GPU or without libnccl.so.2, 0 when it passes, 1 with a message.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "device/gpu.h"
#include "device/nccl.h"

using namespace dinput;

namespace {

int failures = 0;

#define EXPECT(cond, ...)                                         \
  do {                                                            \
    if (!(cond)) {                                                \
      std::fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                          \
      std::fprintf(stderr, "\n");                                 \
      ++failures;                                                 \
    }                                                             \
  } while (0)

// A host tensor of `n` values base, base + step, ...
template <typename T>
Tensor host_values(DType dtype, int64_t n, T base, T step) {
  Tensor t = Tensor::allocate(dtype, Shape{n});
  T* v = t.mutable_data_as<T>();
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(base + step * static_cast<T>(i));
  return t;
}

// Sums, through NCCL, one tensor per device: device d holds base(d) + step * i. The sum
// must be sum_d base(d) + devices * step * i, exact for the values used.
template <typename T>
void check_sum(DType dtype, int devices, int64_t n) {
  std::vector<Tensor> per_replica;
  std::vector<int> ids;
  T base_sum = 0;
  for (int d = 0; d < devices; ++d) {
    T base = static_cast<T>(10 * (d + 1));
    base_sum += base;
    per_replica.push_back(
        gpu::copy_to_device(host_values<T>(dtype, n, base, static_cast<T>(1)), d));
    EXPECT(per_replica.back().buffer()->kind() == MemoryKind::kDevice,
           "copy_to_device left %s on the host", dtype_name(dtype));
    ids.push_back(d);
  }
  Tensor sum = gpu::nccl_sum_to_host(per_replica, ids);
  EXPECT(sum.buffer()->kind() != MemoryKind::kDevice, "the NCCL sum is not in host memory");
  EXPECT(sum.dtype() == dtype && sum.num_elements() == n,
         "the NCCL sum has dtype %s and %lld values", dtype_name(sum.dtype()),
         static_cast<long long>(sum.num_elements()));
  const T* got = sum.data_as<T>();
  for (int64_t i = 0; i < n && i < sum.num_elements(); ++i) {
    T want = static_cast<T>(base_sum + static_cast<T>(devices) * static_cast<T>(i));
    if (got[i] != want) {
      EXPECT(false, "%s over %d device(s): value %lld is %g, expected %g", dtype_name(dtype),
             devices, static_cast<long long>(i), static_cast<double>(got[i]),
             static_cast<double>(want));
      break;
    }
  }
}

}  // namespace

int main() {
  const gpu::Availability& cuda = gpu::availability();
  if (!cuda.usable) {
    std::printf("SKIP: no usable CUDA device: %s\n", cuda.reason.c_str());
    return 77;
  }
  if (!gpu::nccl().loaded) {
    std::printf("SKIP: NCCL is not available: %s\n", gpu::nccl().reason.c_str());
    return 77;
  }
  try {
    // One rank (any machine with a GPU), then every GPU of the machine.
    check_sum<float>(DType::kFloat32, 1, 4096);
    check_sum<int64_t>(DType::kInt64, 1, 4096);
    if (cuda.devices >= 2) {
      check_sum<float>(DType::kFloat32, cuda.devices, 1 << 20);
      check_sum<double>(DType::kFloat64, cuda.devices, 1000);
      check_sum<int64_t>(DType::kInt64, cuda.devices, 1000);
      check_sum<int32_t>(DType::kInt32, cuda.devices, 1000);
    }
    EXPECT(!gpu::nccl_supports(DType::kBool) && !gpu::nccl_supports(DType::kBytes),
           "NCCL claims to sum bool or bytes");
  } catch (const Error& e) {
    EXPECT(false, "%s: %s", code_name(e.code()), e.what());
  }
  std::printf("nccl: version %d, %d GPU(s): %s\n", gpu::nccl().version, cuda.devices,
              failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
