// CUDA tensors passed back into host-only calls. A distributed iterator on GPU:0 hands out
// tensors in device memory; each is then given to the calls that read tensor bytes on the
// CPU (dataset sources, typed copies, reduce) and returned from the callbacks whose results
// enter a host pipeline (map, generator). Each must deliver the same values as the host path,
// never read a device pointer with the CPU (which would crash this program). Exits 77 (CTest:
// SKIP) without a usable GPU, 0 when every case passes, 1 with a message on the first failure.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dinput.h"
#include "gpu_check.h"

namespace {

// The values of a host tensor of int64 (fails on a CUDA tensor: this must be a host copy).
std::vector<int64_t> host_values(const dinput_tensor_t* t) {
  REQUIRE(dinput_tensor_device_type(t) != DINPUT_DEVICE_CUDA,
          "a tensor that went through a host-only call is still on a GPU");
  const int64_t* v = static_cast<const int64_t*>(dinput_tensor_data(t));
  return std::vector<int64_t>(v, v + dinput_tensor_num_elements(t));
}

// Every element of `ds` (freed), component 0 of each, concatenated.
std::vector<int64_t> drain(dinput_dataset_t* ds) {
  std::vector<int64_t> all;
  dinput_iterator_t* it = nullptr;
  ok(dinput_dataset_iterator(&it, ds));
  dinput_element_t* e = nullptr;
  dinput_status_t st;
  while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
    std::vector<int64_t> v = host_values(dinput_element_get(e, 0));
    all.insert(all.end(), v.begin(), v.end());
    dinput_element_free(e);
  }
  REQUIRE(st == DINPUT_OUT_OF_RANGE, "%s: %s", dinput_status_name(st), dinput_last_error_message());
  dinput_iterator_free(it);
  dinput_dataset_free(ds);
  return all;
}

std::vector<int64_t> repeated(const std::vector<int64_t>& v, int times) {
  std::vector<int64_t> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), v.begin(), v.end());
  return out;
}

// The callbacks return the CUDA tensor they are given (in an element of their own).
dinput_status_t map_to_cuda(dinput_element_t** out, const dinput_element_t*, void* tensor) {
  const dinput_tensor_t* parts[] = {static_cast<const dinput_tensor_t*>(tensor)};
  return dinput_element_new(out, parts, 1);
}

struct GeneratorState {
  const dinput_tensor_t* tensor;
  int left;
};

dinput_status_t next_cuda(dinput_element_t** out, void* state) {
  GeneratorState* s = static_cast<GeneratorState*>(state);
  if (s->left-- == 0) return DINPUT_OUT_OF_RANGE;
  const dinput_tensor_t* parts[] = {s->tensor};
  return dinput_element_new(out, parts, 1);
}

}  // namespace

int main() {
  if (gpu_count() == 0) {
    std::puts("SKIP: no usable CUDA device");
    return 77;
  }
  // range(16).batch(4).batch(2) on GPU:0: the first step is [[0,1,2,3],[4,5,6,7]] in device
  // memory.
  const char* devices[] = {"GPU:0"};
  dinput_strategy_t* strategy = nullptr;
  ok(dinput_strategy_new(&strategy, devices, 1));
  dinput_dataset_t *range = nullptr, *rows = nullptr, *batches = nullptr;
  ok(dinput_dataset_range(&range, 0, 16, 1));
  ok(dinput_dataset_batch(&rows, range, 4, nullptr));
  ok(dinput_dataset_batch(&batches, rows, 2, nullptr));
  dinput_dist_dataset_t* dist = nullptr;
  ok(dinput_strategy_distribute_dataset(&dist, strategy, batches, nullptr));
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, dist));
  dinput_per_replica_t* step = nullptr;
  ok(dinput_dist_iterator_get_next(&step, it));
  const dinput_element_t* element = dinput_per_replica_get(step, 0);
  const dinput_tensor_t* cuda_tensor = dinput_element_get(element, 0);
  REQUIRE(dinput_tensor_device_type(cuda_tensor) == DINPUT_DEVICE_CUDA &&
              dinput_tensor_device_index(cuda_tensor) == 0,
          "the iterator did not deliver a CUDA tensor on GPU:0 (device type %d, index %d)",
          dinput_tensor_device_type(cuda_tensor), dinput_tensor_device_index(cuda_tensor));
  const std::vector<int64_t> expected = {0, 1, 2, 3, 4, 5, 6, 7};

  // dinput_tensor_copy_to: a host buffer filled from device memory.
  int64_t copied[8] = {};
  ok(dinput_tensor_copy_to(copied, sizeof copied, cuda_tensor, DINPUT_INT64));
  REQUIRE(std::vector<int64_t>(copied, copied + 8) == expected,
          "dinput_tensor_copy_to: wrong values");

  // The dataset sources copy their argument to the host: one element, then its rows (batched
  // again, so that the host batching code reads the copies).
  dinput_dataset_t* ds = nullptr;
  ok(dinput_dataset_from_tensors(&ds, element));
  REQUIRE(drain(ds) == expected, "dinput_dataset_from_tensors: wrong values");
  dinput_dataset_t* slices = nullptr;
  ok(dinput_dataset_from_tensor_slices(&slices, element));
  ok(dinput_dataset_batch(&ds, slices, 2, nullptr));
  dinput_dataset_free(slices);
  REQUIRE(drain(ds) == expected, "dinput_dataset_from_tensor_slices + batch: wrong values");

  // A map callback returning the CUDA tensor: three results, batched on the host.
  dinput_spec_t* spec = nullptr;
  ok(dinput_dataset_element_spec(&spec, batches));  // int64[?,4]
  dinput_map_options_t* mo = nullptr;
  ok(dinput_map_options_new(&mo));
  ok(dinput_map_options_set_out_spec(mo, spec));
  dinput_dataset_t *three = nullptr, *mapped = nullptr;
  ok(dinput_dataset_range(&three, 0, 3, 1));
  ok(dinput_dataset_map(&mapped, three, map_to_cuda, const_cast<dinput_tensor_t*>(cuda_tensor),
                        nullptr, mo));
  dinput_map_options_free(mo);
  ok(dinput_dataset_batch(&ds, mapped, 3, nullptr));
  dinput_dataset_free(mapped);
  dinput_dataset_free(three);
  REQUIRE(drain(ds) == repeated(expected, 3), "map returning a CUDA tensor: wrong values");

  // A generator yielding it twice.
  GeneratorState state{cuda_tensor, 2};
  ok(dinput_dataset_from_generator(&ds, spec, nullptr, next_cuda, nullptr, &state, nullptr));
  dinput_spec_free(spec);
  REQUIRE(drain(ds) == repeated(expected, 2), "generator yielding a CUDA tensor: wrong values");

  // reduce reads device values through its own copies.
  dinput_element_t* sum = nullptr;
  ok(dinput_strategy_reduce(&sum, strategy, DINPUT_REDUCE_SUM, step, DINPUT_AXIS_NONE));
  REQUIRE(host_values(dinput_element_get(sum, 0)) == expected, "reduce: wrong values");
  dinput_element_free(sum);

  // The CUDA tensor itself is untouched by all of this.
  REQUIRE(dinput_tensor_device_type(cuda_tensor) == DINPUT_DEVICE_CUDA, "the tensor moved");
  dinput_per_replica_free(step);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_dataset_free(batches);
  dinput_dataset_free(rows);
  dinput_dataset_free(range);
  dinput_strategy_free(strategy);
  std::puts("host_only: CUDA tensors passed to host-only calls arrived intact on the host");
  return 0;
}
