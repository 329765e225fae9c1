// The NCCL reduce (src/device/nccl.*, reduce in src/distribute/replica_ops.cc), white-box.
//   - NCCL itself: a one-rank sum is its input; over two or more GPUs, element-wise sums.
//   - dinput_strategy_reduce on GPU replicas gives bit for bit what the same values give on
//     the host (fetch_to_device 0), for every dtype NCCL has, SUM and MEAN, with float16
//     60000s, subnormal halves, NaN and infinity among the values; over GPU:0 alone and,
//     where two GPUs exist, over GPU:0 and GPU:1 (the only case where NCCL is used).
//   - Over two GPUs, the real NCCL sum of finite values is accepted by finish_nccl_sum and
//     equals the host path: NCCL's one rounding is the host's.
//   - Two workers of one GPU each (threads over an in-process collective): reduce sums across
//     the workers with NCCL and gives the host's bits.
//   - Two threads summing at once, an NCCL failure injected inside the group (the next sum
//     must still work), and one GPU listed twice (an error, not NCCL's INTERNAL).
// Cases that need two GPUs say SKIP for themselves on one. Exits 77 (SKIP) without a usable
// GPU or without libnccl.so.2, 0 when it passes, 1 with a message.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "device/gpu.h"
#include "device/nccl.h"
#include "dinput.h"
#include "distribute/replica_ops.h"
#include "distribute/strategy.h"

using namespace dinput;

namespace {

std::atomic<int> failures{0};  // EXPECT runs on several threads in check_concurrent_sums

#define EXPECT(cond, ...)                                         \
  do {                                                            \
    if (!(cond)) {                                                \
      std::fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                          \
      std::fprintf(stderr, "\n");                                 \
      ++failures;                                                 \
    }                                                             \
  } while (0)

// Runs fn with a deadline: a hang (a deadlocked or never-launched collective) fails the
// test at once instead of waiting out CTest's timeout; the hung threads cannot be joined.
template <typename F>
void within(int seconds, const char* what, F fn) {
  auto done = std::async(std::launch::async, fn);
  if (done.wait_for(std::chrono::seconds(seconds)) != std::future_status::ready) {
    std::fprintf(stderr, "FAILED: %s did not finish within %d s\n", what, seconds);
    std::fflush(stderr);
    std::_Exit(1);
  }
  done.get();
}

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
void check_sum(DType dtype, int devices, int64_t n, int salt = 0) {
  std::vector<Tensor> per_replica;
  std::vector<int> ids;
  T base_sum = 0;
  for (int d = 0; d < devices; ++d) {
    T base = static_cast<T>(10 * (d + 1) + salt);
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

// ---- values for the comparisons ------------------------------------------------------

struct Kind {
  dinput_dtype_t c;
  DType dtype;
  size_t size;
  int exponent_bits;  // 0 for integers
  int mantissa_bits;
  bool is_signed;
};

const Kind kKinds[] = {
    {DINPUT_INT8, DType::kInt8, 1, 0, 0, true},
    {DINPUT_UINT8, DType::kUInt8, 1, 0, 0, false},
    {DINPUT_INT32, DType::kInt32, 4, 0, 0, true},
    {DINPUT_UINT32, DType::kUInt32, 4, 0, 0, false},
    {DINPUT_INT64, DType::kInt64, 8, 0, 0, true},
    {DINPUT_UINT64, DType::kUInt64, 8, 0, 0, false},
    {DINPUT_FLOAT16, DType::kFloat16, 2, 5, 10, true},
    {DINPUT_BFLOAT16, DType::kBFloat16, 2, 8, 7, true},
    {DINPUT_FLOAT32, DType::kFloat32, 4, 8, 23, true},
    {DINPUT_FLOAT64, DType::kFloat64, 8, 11, 52, true},
};

// Rows of raw values, row r for replica r, `n` values each.
using Rows = std::vector<std::vector<uint64_t>>;

uint64_t float_bits(const Kind& k, uint64_t sign, uint64_t exponent, uint64_t mantissa) {
  return (sign << (k.exponent_bits + k.mantissa_bits)) | (exponent << k.mantissa_bits) |
         (mantissa & ((uint64_t{1} << k.mantissa_bits) - 1));
}

// Finite values whose sums over two replicas neither overflow nor give a subnormal mean, so
// that the NCCL path keeps them; about half of the pairs have close exponents, where the
// sum is rounded.
Rows normal_rows(const Kind& k, int replicas, size_t n, std::mt19937_64& rng) {
  const uint64_t emax = (uint64_t{1} << k.exponent_bits) - 1;
  // Smallest exponent field: every nonzero sum of such values halves to a normal number;
  // largest: the sum of two stays finite.
  const uint64_t lo = static_cast<uint64_t>(k.mantissa_bits) + 2, hi = emax - 3;
  Rows rows(static_cast<size_t>(replicas), std::vector<uint64_t>(n));
  for (size_t i = 0; i < n; ++i) {
    const uint64_t e0 = lo + rng() % (hi - lo + 1);
    for (int r = 0; r < replicas; ++r) {
      uint64_t e = e0;
      if (r > 0 && i % 2 == 0) e = lo + rng() % (hi - lo + 1);
      if (r > 0 && i % 2 == 1) {
        const int64_t near = static_cast<int64_t>(e0) + static_cast<int64_t>(rng() % 9) - 4;
        e = static_cast<uint64_t>(
            std::max<int64_t>(static_cast<int64_t>(lo), std::min<int64_t>(hi, near)));
      }
      rows[static_cast<size_t>(r)][i] = float_bits(k, rng() & 1, e, rng());
    }
  }
  return rows;
}

// Edge values first (overflowing sums, subnormal halves, NaN, infinities, zeros), then
// random bit patterns.
Rows edge_rows(const Kind& k, int replicas, size_t n, std::mt19937_64& rng) {
  const uint64_t emax = (uint64_t{1} << k.exponent_bits) - 1;
  const uint64_t all = (uint64_t{1} << k.mantissa_bits) - 1;
  const uint64_t max = float_bits(k, 0, emax - 1, all), tiny = float_bits(k, 0, 0, 1);
  const uint64_t neg = uint64_t{1} << (k.exponent_bits + k.mantissa_bits);
  std::vector<std::pair<uint64_t, uint64_t>> pairs = {
      {max, max},
      {max | neg, max | neg},
      {tiny, tiny},                          // the mean is the smallest subnormal
      {float_bits(k, 0, 0, 3), 0},           // 3 * tiny halves to a subnormal
      {float_bits(k, 0, 1, 0), tiny},        // smallest normal + tiny
      {tiny | neg, float_bits(k, 0, 0, 2)},  // cancels to a subnormal
      {float_bits(k, 0, emax, uint64_t{1} << (k.mantissa_bits - 1)), float_bits(k, 0, 3, 0)},
      {float_bits(k, 0, emax, 0), float_bits(k, 1, emax, 0)},  // inf + -inf
      {neg, neg},                                              // -0 + -0
  };
  if (k.dtype == DType::kFloat16) {
    pairs.push_back({0x7b53, 0x7b53});  // 60000 + 60000: inf in float16, the mean is 60000
    pairs.push_back({0xfb53, 0x7a00});  // -60000 + 49152
    pairs.push_back({0x7b53, 0x7bff});  // 60000 + 65504
  }
  Rows rows(static_cast<size_t>(replicas), std::vector<uint64_t>(n));
  const uint64_t mask = k.size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * k.size)) - 1;
  for (size_t i = 0; i < n; ++i)
    for (int r = 0; r < replicas; ++r)
      rows[static_cast<size_t>(r)][i] =
          i < pairs.size() ? (r == 0 ? pairs[i].first : pairs[i].second) : rng() & mask;
  return rows;
}

// Integers: values that sum within range, or the largest value on every replica (SUM over
// two replicas overflows: an error on both paths; MEAN is exact in float64).
Rows int_rows(const Kind& k, int replicas, size_t n, bool overflow, std::mt19937_64& rng) {
  const uint64_t mask = k.size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * k.size)) - 1;
  const uint64_t largest = k.is_signed ? mask >> 1 : mask;
  Rows rows(static_cast<size_t>(replicas), std::vector<uint64_t>(n));
  for (size_t i = 0; i < n; ++i)
    for (int r = 0; r < replicas; ++r) {
      uint64_t v = overflow ? largest : (rng() & mask) >> 2;             // a quarter of the range
      if (!overflow && k.is_signed && (rng() & 1)) v = (~v + 1) & mask;  // negative
      rows[static_cast<size_t>(r)][i] = v;
    }
  return rows;
}

std::vector<unsigned char> bytes_of(const Kind& k, const Rows& rows) {
  std::vector<unsigned char> out;
  for (const auto& row : rows)
    for (uint64_t v : row) {
      const unsigned char* p = reinterpret_cast<const unsigned char*>(&v);
      out.insert(out.end(), p, p + k.size);  // little-endian: the low bytes
    }
  return out;
}

// ---- through the C API ---------------------------------------------------------------

struct Reduced {
  dinput_status_t status = DINPUT_OK;
  std::string message;
  dinput_dtype_t dtype = DINPUT_FLOAT32;
  std::vector<unsigned char> bytes;
};

void ok(dinput_status_t st, const char* what) {
  if (st != DINPUT_OK) {
    std::fprintf(stderr, "FAILED: %s: %s: %s\n", what, dinput_status_name(st),
                 dinput_last_error_message());
    std::exit(1);
  }
}

// The rows as one step of from_tensor_slices(rows).batch(replicas) distributed over
// `devices`, fetched to the GPUs or kept on the host, then SUM and MEAN of that step.
// The same on a given strategy (of `replicas` replicas in sync over all its workers), whose
// local replicas are `local`.
std::vector<Reduced> reduce_on(dinput_strategy_t* strategy, int replicas, int local, const Kind& k,
                               const Rows& rows, bool fetch);

std::vector<Reduced> reduce_step(const std::vector<const char*>& devices, const Kind& k,
                                 const Rows& rows, bool fetch) {
  const int replicas = static_cast<int>(devices.size());
  dinput_strategy_t* strategy = nullptr;
  ok(dinput_strategy_new(&strategy, devices.data(), replicas), "dinput_strategy_new");
  std::vector<Reduced> out = reduce_on(strategy, replicas, replicas, k, rows, fetch);
  dinput_strategy_free(strategy);
  return out;
}

// Two workers (threads over an in-process collective) of one GPU each, GPU:0 and GPU:1: the
// case where reduce sums across workers with NCCL. Worker 0's results (worker 1's must match).
std::vector<Reduced> reduce_step_two_workers(const Kind& k, const Rows& rows, bool fetch) {
  dinput_collective_t* collective = nullptr;
  ok(dinput_collective_new_in_process(&collective, 2, 60000), "dinput_collective_new_in_process");
  std::vector<std::vector<Reduced>> per_worker(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w)
    threads.emplace_back([&, w] {
      const char* device[1] = {w == 0 ? "GPU:0" : "GPU:1"};
      dinput_strategy_t* strategy = nullptr;
      ok(dinput_strategy_new_multi_worker(&strategy, collective, w, device, 1),
         "dinput_strategy_new_multi_worker");
      per_worker[static_cast<size_t>(w)] = reduce_on(strategy, 2, 1, k, rows, fetch);
      dinput_strategy_free(strategy);
    });
  for (auto& t : threads) t.join();
  dinput_collective_free(collective);
  for (size_t i = 0; i < per_worker[0].size(); ++i)
    EXPECT(per_worker[1][i].status == per_worker[0][i].status &&
               per_worker[1][i].bytes == per_worker[0][i].bytes,
           "%s: the two workers reduced to different results", dtype_name(k.dtype));
  return per_worker[0];
}

std::vector<Reduced> reduce_on(dinput_strategy_t* strategy, int replicas, int local, const Kind& k,
                               const Rows& rows, bool fetch) {
  const int64_t n = static_cast<int64_t>(rows[0].size());
  const std::vector<unsigned char> data = bytes_of(k, rows);
  const int64_t shape[2] = {replicas, n};
  dinput_tensor_t* t = nullptr;
  ok(dinput_tensor_new(&t, k.c, shape, 2, data.data(), data.size()), "dinput_tensor_new");
  const dinput_tensor_t* parts[1] = {t};
  dinput_element_t* e = nullptr;
  ok(dinput_element_new(&e, parts, 1), "dinput_element_new");
  dinput_dataset_t *slices = nullptr, *batched = nullptr;
  ok(dinput_dataset_from_tensor_slices(&slices, e), "from_tensor_slices");
  ok(dinput_dataset_batch(&batched, slices, replicas, nullptr), "batch");
  dinput_input_options_t* o = nullptr;
  ok(dinput_input_options_new(&o), "dinput_input_options_new");
  ok(dinput_input_options_set_fetch_to_device(o, fetch ? 1 : 0), "set_fetch_to_device");
  dinput_dist_dataset_t* dist = nullptr;
  ok(dinput_strategy_distribute_dataset(&dist, strategy, batched, o), "distribute_dataset");
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, dist), "iterator");
  dinput_per_replica_t* step = nullptr;
  ok(dinput_dist_iterator_get_next(&step, it), "get_next");
  for (int r = 0; r < local; ++r) {
    const dinput_device_type_t where =
        dinput_tensor_device_type(dinput_element_get(dinput_per_replica_get(step, r), 0));
    EXPECT((where == DINPUT_DEVICE_CUDA) == fetch, "%s: replica %d is in memory of kind %d",
           dtype_name(k.dtype), r, static_cast<int>(where));
  }
  std::vector<Reduced> out;
  for (dinput_reduce_op_t op : {DINPUT_REDUCE_SUM, DINPUT_REDUCE_MEAN}) {
    Reduced res;
    dinput_element_t* reduced = nullptr;
    res.status = dinput_strategy_reduce(&reduced, strategy, op, step, DINPUT_AXIS_NONE);
    if (res.status != DINPUT_OK) {
      res.message = dinput_last_error_message();
    } else {
      const dinput_tensor_t* r = dinput_element_get(reduced, 0);
      EXPECT(dinput_tensor_device_type(r) != DINPUT_DEVICE_CUDA,
             "a reduce left its result on a GPU");
      res.dtype = dinput_tensor_dtype(r);
      const unsigned char* p = static_cast<const unsigned char*>(dinput_tensor_data(r));
      res.bytes.assign(p, p + dinput_tensor_byte_size(r));
      dinput_element_free(reduced);
    }
    out.push_back(std::move(res));
  }
  dinput_per_replica_free(step);
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_input_options_free(o);
  dinput_dataset_free(batched);
  dinput_dataset_free(slices);
  dinput_element_free(e);
  dinput_tensor_free(t);
  return out;
}

// The same step reduced from GPU replicas and from host replicas: same status, same bits.
void compare_paths(const std::vector<const char*>& devices, const Kind& k, const Rows& rows,
                   const char* data_name) {
  const std::vector<Reduced> on_gpus = reduce_step(devices, k, rows, true);
  const std::vector<Reduced> on_host = reduce_step(devices, k, rows, false);
  for (size_t i = 0; i < on_gpus.size(); ++i) {
    const char* op = i == 0 ? "SUM" : "MEAN";
    const Reduced &g = on_gpus[i], &h = on_host[i];
    if (g.status != h.status) {
      EXPECT(false, "%s %s of %s values over %zu GPU(s): %s (%s) on GPUs, %s (%s) on the host",
             dtype_name(k.dtype), op, data_name, devices.size(), dinput_status_name(g.status),
             g.message.c_str(), dinput_status_name(h.status), h.message.c_str());
      continue;
    }
    if (g.status != DINPUT_OK) continue;
    size_t first = 0;
    while (first < g.bytes.size() && first < h.bytes.size() && g.bytes[first] == h.bytes[first])
      ++first;
    EXPECT(g.dtype == h.dtype && g.bytes == h.bytes,
           "%s %s of %s values over %zu GPU(s): the GPU result differs from the host's "
           "(dtype %d vs %d, first differing byte %zu of %zu)",
           dtype_name(k.dtype), op, data_name, devices.size(), g.dtype, h.dtype, first,
           h.bytes.size());
  }
}

// compare_paths for two workers of one GPU each (NCCL across the workers) against the host.
void compare_two_workers(const Kind& k, const Rows& rows, const char* data_name) {
  const std::vector<Reduced> on_gpus = reduce_step_two_workers(k, rows, true);
  const std::vector<Reduced> on_host = reduce_step_two_workers(k, rows, false);
  for (size_t i = 0; i < on_gpus.size(); ++i) {
    const Reduced &g = on_gpus[i], &h = on_host[i];
    EXPECT(g.status == h.status && g.dtype == h.dtype && g.bytes == h.bytes,
           "%s %s of %s values over two workers of one GPU each: the GPU result differs from "
           "the host's (%s vs %s)",
           dtype_name(k.dtype), i == 0 ? "SUM" : "MEAN", data_name, dinput_status_name(g.status),
           dinput_status_name(h.status));
  }
}

void compare_all_two_workers() {
  std::mt19937_64 rng(17);
  for (const Kind& k : kKinds) {
    if (k.exponent_bits == 0) {
      compare_two_workers(k, int_rows(k, 2, 1024, false, rng), "in-range");
    } else {
      compare_two_workers(k, normal_rows(k, 2, 1 << 14, rng), "normal");
      compare_two_workers(k, edge_rows(k, 2, 4096, rng), "edge");
    }
  }
}

void compare_all(const std::vector<const char*>& devices) {
  const int replicas = static_cast<int>(devices.size());
  std::mt19937_64 rng(16);
  for (const Kind& k : kKinds) {
    if (k.exponent_bits == 0) {
      compare_paths(devices, k, int_rows(k, replicas, 4096, false, rng), "in-range");
      compare_paths(devices, k, int_rows(k, replicas, 64, true, rng), "largest");
    } else {
      compare_paths(devices, k, normal_rows(k, replicas, 1 << 16, rng), "normal");
      compare_paths(devices, k, edge_rows(k, replicas, 4096, rng), "edge");
    }
  }
}

// ---- white-box ----------------------------------------------------------------------

Tensor host_tensor(const Kind& k, const std::vector<uint64_t>& row) {
  Tensor t = Tensor::allocate(k.dtype, Shape{static_cast<int64_t>(row.size())});
  const std::vector<unsigned char> b = bytes_of(k, Rows{row});
  std::memcpy(t.mutable_data(), b.data(), b.size());
  return t;
}

// Over GPU:0 and GPU:1, the real NCCL sum of values that stay finite and normal: the rule
// accepts it, and the path built on it is the host path's result, bit for bit.
void check_real_nccl_rounding() {
  auto strategy = make_strategy({"GPU:0", "GPU:1"}, nullptr, 0);
  std::mt19937_64 rng(61);
  for (const Kind& k : kKinds) {
    if (k.exponent_bits == 0) continue;
    EXPECT(nccl_reduce_is_exact(k.dtype, {0, 1}), "%s is not summed with NCCL on two GPUs",
           dtype_name(k.dtype));
    const Rows rows = normal_rows(k, 2, 1 << 18, rng);
    const Tensor a = host_tensor(k, rows[0]), b = host_tensor(k, rows[1]);
    const Tensor sum =
        gpu::nccl_sum_to_host({gpu::copy_to_device(a, 0), gpu::copy_to_device(b, 1)}, {0, 1});
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean}) {
      const char* op_name = op == ReduceOp::kSum ? "SUM" : "MEAN";
      Tensor via_nccl;
      const bool kept = finish_nccl_sum(*strategy, op, sum, &via_nccl);
      EXPECT(kept, "%s %s: the NCCL sum of normal values was sent back to the host",
             dtype_name(k.dtype), op_name);
      if (!kept) continue;
      const Tensor host = reduce(*strategy, op, {{a}, {b}}, kAxisNone)[0];
      EXPECT(std::memcmp(via_nccl.data(), host.data(), host.byte_size()) == 0,
             "%s %s: NCCL's sum over two GPUs is not rounded as the host's", dtype_name(k.dtype),
             op_name);
    }
  }
}

// Two threads summing over the same GPUs at once, each many times: every sum right, and no
// deadlock (collectives queued in two orders on two GPUs never complete).
void check_concurrent_sums(int devices) {
  within(120, "two threads summing at once", [devices] {
    std::exception_ptr error;
    auto loop = [devices](int salt) {
      for (int i = 0; i < 100; ++i) check_sum<float>(DType::kFloat32, devices, 1 << 14, salt);
    };
    std::thread other([&] {
      try {
        loop(1000);
      } catch (...) {
        error = std::current_exception();
      }
    });
    loop(2000);
    other.join();
    if (error) std::rethrow_exception(error);
  });
}

// An NCCL failure inside the group (the hook hands NCCL an invalid datatype on the last
// rank, after the other ranks' calls were queued): an INTERNAL error naming the call, and
// the next sum works, so the group was closed and a half-queued collective aborted.
void check_failure_inside_group(int devices) {
  within(120, "a sum after a failure inside the NCCL group", [devices] {
    std::vector<Tensor> per_replica;
    std::vector<int> ids;
    for (int d = 0; d < devices; ++d) {
      per_replica.push_back(gpu::copy_to_device(host_values<float>(DType::kFloat32, 256, 1, 1), d));
      ids.push_back(d);
    }
    gpu::testing::fail_next_all_reduce(devices - 1);
    bool raised = false;
    try {
      gpu::nccl_sum_to_host(per_replica, ids);
    } catch (const Error& e) {
      raised = true;
      EXPECT(e.code() == Code::kInternal && std::strstr(e.what(), "ncclAllReduce"),
             "the injected failure raised %s: %s", code_name(e.code()), e.what());
    }
    EXPECT(raised, "the injected NCCL failure over %d GPU(s) raised nothing", devices);
    check_sum<float>(DType::kFloat32, devices, 4096);
    check_sum<double>(DType::kFloat64, devices, 4096);
  });
}

// A GPU listed twice: NCCL needs a rank per GPU, so the rule keeps reduce on the host and
// the NCCL layer refuses it by name instead of failing inside NCCL.
void check_gpu_listed_twice() {
  EXPECT(!nccl_reduce_is_exact(DType::kFloat32, {0, 0}), "one GPU twice is sent to NCCL");
  const Tensor t = gpu::copy_to_device(host_values<float>(DType::kFloat32, 16, 1, 1), 0);
  try {
    gpu::nccl_sum_to_host({t, t}, {0, 0});
    EXPECT(false, "NCCL summed over GPU:0 listed twice");
  } catch (const Error& e) {
    EXPECT(e.code() == Code::kFailedPrecondition && std::strstr(e.what(), "GPU:0"),
           "GPU:0 listed twice raised %s: %s", code_name(e.code()), e.what());
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
    check_gpu_listed_twice();
    check_failure_inside_group(1);
    check_concurrent_sums(1);
    compare_all({"GPU:0"});
    if (cuda.devices >= 2) {
      check_failure_inside_group(2);
      check_concurrent_sums(2);
      compare_all({"GPU:0", "GPU:1"});
      check_real_nccl_rounding();
      if (gpu::nccl_across_workers_available()) {
        compare_all_two_workers();
      } else {
        std::printf("SKIP (part): this libnccl has no non-blocking communicators\n");
      }
    } else {
      std::printf("SKIP (part): the two-GPU cases need a second GPU\n");
    }
  } catch (const Error& e) {
    EXPECT(false, "%s: %s", code_name(e.code()), e.what());
  }
  std::printf("nccl: version %d, %d GPU(s): %s\n", gpu::nccl().version, cuda.devices,
              failures.load() ? "FAILED" : "passed");
  return failures.load() ? 1 : 0;
}
