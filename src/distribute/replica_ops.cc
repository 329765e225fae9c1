#include "distribute/replica_ops.h"

#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "core/half.h"
#include "core/status.h"
#include "core/thread.h"
#include "device/gpu.h"
#include "device/nccl.h"

namespace dinput {

std::vector<Element> distribute_values(const Strategy& strategy,
                                       const std::function<Element(const ReplicaContext&)>& fn) {
  std::vector<Element> out;
  for (int r = 0; r < strategy.num_local_replicas(); ++r)
    out.push_back(fn(ReplicaContext{strategy.replica_id(r), strategy.num_replicas_in_sync(),
                                    &strategy.device_names()[static_cast<size_t>(r)]}));
  return out;
}

std::vector<Element> run_on_replicas(
    const Strategy& strategy,
    const std::function<Element(const ReplicaContext&, const Element* args)>& fn,
    const std::vector<Element>* args) {
  const size_t R = static_cast<size_t>(strategy.num_local_replicas());
  if (args && args->size() != R)
    raise(Code::kInvalidArgument, "run: the arguments have ", args->size(),
          " replica value(s) but the strategy has ", R, " local replica(s)");
  std::vector<Element> results(R);
  std::vector<std::exception_ptr> errors(R);
  auto call = [&](size_t r) {
    try {
      // A GPU replica's function runs with its GPU current, as CUDA code in it expects.
      const Device& device = strategy.devices()[r];
      std::optional<gpu::DeviceGuard> on_device;
      if (device.type == DeviceType::kGPU && device.index < gpu::availability().devices)
        on_device.emplace(device.index);
      ReplicaContext ctx{strategy.replica_id(static_cast<int>(r)), strategy.num_replicas_in_sync(),
                         &strategy.device_names()[r]};
      results[r] = fn(ctx, args ? &(*args)[r] : nullptr);
    } catch (...) {
      errors[r] = std::current_exception();
    }
  };
  std::vector<Thread> threads;
  for (size_t r = 1; r < R; ++r) threads.emplace_back([&call, r] { call(r); });
  call(0);  // replica 0 on the caller's thread
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

namespace {

bool is_integral(DType d) {
  switch (d) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

// Integer components are summed exactly in 128 bits: |value| < 2^64, and no reduction
// adds anything near 2^63 values, so the sum itself cannot overflow.
using Wide = __int128;

Wide read_int(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kBool:
      return t.data_as<uint8_t>()[i] != 0;
    case DType::kInt8:
      return t.data_as<int8_t>()[i];
    case DType::kInt16:
      return t.data_as<int16_t>()[i];
    case DType::kInt32:
      return t.data_as<int32_t>()[i];
    case DType::kInt64:
      return t.data_as<int64_t>()[i];
    case DType::kUInt8:
      return t.data_as<uint8_t>()[i];
    case DType::kUInt16:
      return t.data_as<uint16_t>()[i];
    case DType::kUInt32:
      return t.data_as<uint32_t>()[i];
    case DType::kUInt64:
      return t.data_as<uint64_t>()[i];
    default:
      raise(Code::kInternal, "read_int on ", t.describe());
  }
}

double read_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat16:
      return half_to_float(t.data_as<uint16_t>()[i]);
    case DType::kBFloat16:
      return bfloat16_to_float(t.data_as<uint16_t>()[i]);
    case DType::kFloat32:
      return t.data_as<float>()[i];
    case DType::kFloat64:
      return t.data_as<double>()[i];
    default:
      raise(Code::kInternal, "read_double on ", t.describe());
  }
}

// The range of an integer dtype (bool sums to int64).
std::pair<Wide, Wide> int_range(DType d) {
  switch (d) {
    case DType::kInt8:
      return {INT8_MIN, INT8_MAX};
    case DType::kInt16:
      return {INT16_MIN, INT16_MAX};
    case DType::kInt32:
      return {INT32_MIN, INT32_MAX};
    case DType::kUInt8:
      return {0, UINT8_MAX};
    case DType::kUInt16:
      return {0, UINT16_MAX};
    case DType::kUInt32:
      return {0, UINT32_MAX};
    case DType::kUInt64:
      return {0, UINT64_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

std::string wide_to_string(Wide v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string digits;
  while (v != 0) {
    int digit = static_cast<int>(v % 10);
    digits.insert(digits.begin(), static_cast<char>('0' + (digit < 0 ? -digit : digit)));
    v /= 10;
  }
  return negative ? "-" + digits : digits;
}

void write_int(Tensor& t, int64_t i, Wide v) {
  switch (t.dtype()) {
    case DType::kInt8:
      t.mutable_data_as<int8_t>()[i] = static_cast<int8_t>(v);
      break;
    case DType::kInt16:
      t.mutable_data_as<int16_t>()[i] = static_cast<int16_t>(v);
      break;
    case DType::kInt32:
      t.mutable_data_as<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    case DType::kInt64:
      t.mutable_data_as<int64_t>()[i] = static_cast<int64_t>(v);
      break;
    case DType::kUInt8:
      t.mutable_data_as<uint8_t>()[i] = static_cast<uint8_t>(v);
      break;
    case DType::kUInt16:
      t.mutable_data_as<uint16_t>()[i] = static_cast<uint16_t>(v);
      break;
    case DType::kUInt32:
      t.mutable_data_as<uint32_t>()[i] = static_cast<uint32_t>(v);
      break;
    case DType::kUInt64:
      t.mutable_data_as<uint64_t>()[i] = static_cast<uint64_t>(v);
      break;
    default:
      raise(Code::kInternal, "write_int on ", t.describe());
  }
}

void write_double(Tensor& t, int64_t i, double d) {
  switch (t.dtype()) {
    case DType::kFloat16:
      t.mutable_data_as<uint16_t>()[i] = float_to_half(static_cast<float>(d));
      break;
    case DType::kBFloat16:
      t.mutable_data_as<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(d));
      break;
    case DType::kFloat32:
      t.mutable_data_as<float>()[i] = static_cast<float>(d);
      break;
    case DType::kFloat64:
      t.mutable_data_as<double>()[i] = d;
      break;
    default:
      raise(Code::kInternal, "write_double on ", t.describe());
  }
}

Tensor reduce_component(const Strategy& strategy, ReduceOp op, const std::vector<Element>& values,
                        size_t c, int axis) {
  const Tensor& first = values[0][c];
  const DType dtype = first.dtype();
  if (dtype == DType::kBytes)
    raise(Code::kInvalidArgument, "reduce: component ", c, " is bytes, which cannot be summed");
  const bool integral = is_integral(dtype);
  Shape shape;
  if (axis == kAxisNone) {
    shape = first.shape();
  } else {
    if (first.rank() < 1)
      raise(Code::kInvalidArgument, "reduce: axis 0 needs rank >= 1 but component ", c,
            " is a scalar");
    shape = first.shape().drop_first();
  }
  for (size_t r = 0; r < values.size(); ++r) {
    const Tensor& t = values[r][c];
    bool same =
        t.dtype() == dtype &&
        (axis == kAxisNone ? t.shape() == shape : t.rank() >= 1 && t.shape().drop_first() == shape);
    if (!same)
      raise(Code::kInvalidArgument, "reduce: replica ", r, " has component ", c, " as ",
            t.describe(), " but replica 0 has ", first.describe());
  }
  const int64_t n = shape.num_elements();
  std::vector<Wide> ints(integral ? static_cast<size_t>(n) : 0, 0);
  std::vector<double> doubles(integral ? 0 : static_cast<size_t>(n), 0.0);
  Wide rows = 0;
  for (const auto& replica : values) {
    const Tensor& t = replica[c];
    const int64_t k = axis == kAxisNone ? 1 : t.dim(0);
    rows += k;
    for (int64_t row = 0; row < k; ++row)
      for (int64_t i = 0; i < n; ++i) {
        if (integral)
          ints[static_cast<size_t>(i)] += read_int(t, row * n + i);
        else
          doubles[static_cast<size_t>(i)] += read_double(t, row * n + i);
      }
  }
  if (Collective* coll = strategy.collective()) {
    ints.push_back(rows);
    ints = coll->all_reduce_sum(strategy.worker_index(), 0, ints);
    rows = ints.back();
    ints.pop_back();
    if (!integral) doubles = coll->all_reduce_sum(strategy.worker_index(), 0, doubles);
  }
  const char* op_name = op == ReduceOp::kSum ? "SUM" : "MEAN";
  if (integral && op == ReduceOp::kSum) {
    // Exact or an error: a wrapped sum would pass for a real one.
    const DType out_dtype = dtype == DType::kBool ? DType::kInt64 : dtype;
    const auto [lo, hi] = int_range(out_dtype);
    Tensor out = Tensor::allocate(out_dtype, shape);
    for (int64_t i = 0; i < n; ++i) {
      const Wide v = ints[static_cast<size_t>(i)];
      if (v < lo || v > hi)
        raise(Code::kInvalidArgument, "reduce: ", op_name, " of component ", c, " overflows ",
              dtype_name(out_dtype), " at element ", i, ": the exact sum is ", wide_to_string(v),
              ", outside [", wide_to_string(lo), ", ", wide_to_string(hi),
              "]; cast the values to a wider dtype before reducing");
      write_int(out, i, v);
    }
    return out;
  }
  const long double divisor = op == ReduceOp::kSum ? 1.0L
                              : axis == kAxisNone
                                  ? static_cast<long double>(strategy.num_replicas_in_sync())
                                  : static_cast<long double>(rows);
  // MEAN of integers: the exact sum divided in long double, then rounded once to float64.
  Tensor out = Tensor::allocate(integral ? DType::kFloat64 : dtype, shape);
  for (int64_t i = 0; i < n; ++i) {
    if (integral)
      write_double(
          out, i,
          static_cast<double>(static_cast<long double>(ints[static_cast<size_t>(i)]) / divisor));
    else
      write_double(out, i, doubles[static_cast<size_t>(i)] / static_cast<double>(divisor));
  }
  return out;
}

}  // namespace

// The NCCL path sums in the dtype itself, so it is taken only where that is bit-for-bit the
// host path. With two replicas NCCL makes one addition per element, a + b rounded once to
// the dtype (to nearest, subnormals kept: tests/gpu/nccl_test.cc checks it). The host path adds in
// double and rounds once, so SUM agrees (float16 and bfloat16 are rounded through float, which is
// harmless: float has more than 2p + 2 bits for both, and rounding twice then equals rounding
// once). MEAN agrees too, the host rounding (a + b) / 2 and this path halving the rounded a + b,
// unless that sum overflowed (two float16 60000s: NCCL gives inf, the host 60000); the host path
// redoes any component with a non-finite sum, which also gives NaNs the host's bits. A MEAN that
// comes out subnormal is redone as well: with two addends the sum is exact in that range, so both
// paths agree there too (nccl_rule_test checks it), but the check is cheap and keeps the
// rule from resting on that argument alone.
// With three or more GPUs NCCL rounds after each addition, in an order its algorithm and
// chunking choose, and integers wrap in NCCL where the host path is exact or an error (and
// MEAN gives float64): those stay on the host.
bool nccl_reduce_is_exact(DType dtype, const std::vector<int>& devices) {
  if (devices.size() != 2 || devices[0] == devices[1]) return false;  // NCCL: a rank per GPU
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return true;
    default:
      return false;
  }
}

namespace {

double smallest_normal(DType d) {
  switch (d) {
    case DType::kFloat16:
      return 6.103515625e-05;  // 2^-14
    case DType::kFloat64:
      return std::numeric_limits<double>::min();
    default:
      return static_cast<double>(std::numeric_limits<float>::min());  // float32, bfloat16
  }
}

}  // namespace

bool finish_nccl_sum(const Strategy& strategy, ReduceOp op, const Tensor& sum, Tensor* out) {
  for (int64_t i = 0; i < sum.num_elements(); ++i)
    if (!std::isfinite(read_double(sum, i))) return false;
  // The host path's own arithmetic, on replica 0 holding the sum and the others zeros (across
  // workers, where every worker holds the sum, worker 0's replica 0 alone).
  std::vector<Element> single(static_cast<size_t>(strategy.num_local_replicas()),
                              Element{Tensor::zeros(sum.dtype(), sum.shape())});
  if (strategy.worker_index() == 0) single[0] = {sum};
  Tensor result = reduce_component(strategy, op, single, 0, kAxisNone);
  if (op == ReduceOp::kMean) {
    const double tiny = smallest_normal(sum.dtype());
    for (int64_t i = 0; i < result.num_elements(); ++i) {
      const double m = std::fabs(read_double(result, i));
      if (m != 0 && m < tiny) return false;
    }
  }
  *out = std::move(result);
  return true;
}

namespace {

// The GPUs of the local replicas where NCCL may reduce at all (every replica on a GPU, one
// worker, element-wise, NCCL loaded), else none.
std::vector<int> nccl_devices(const Strategy& strategy, int axis) {
  if (axis != kAxisNone || strategy.collective() || !gpu::nccl().loaded) return {};
  std::vector<int> devices;
  for (const auto& d : strategy.devices()) {
    if (d.type != DeviceType::kGPU) return {};
    devices.push_back(d.index);
  }
  return devices;
}

// Across workers NCCL's sum is the host path's only with two ranks, as above: two workers
// of one GPU replica each. Whether a reduce may go that way depends on facts every worker
// shares (the build, the strategy's shape, the axis), so that all of them take part in the
// agreement below or none does; what each worker has (its replica on a GPU, the dtype, NCCL
// loaded) is then agreed per component.
bool may_sum_across_workers(const Strategy& strategy, int axis) {
  return gpu::nccl().compiled && strategy.collective() && strategy.num_workers() == 2 &&
         strategy.num_local_replicas() == 1 && axis == kAxisNone;
}

// Whether component c is in device memory on every replica, with replica 0's dtype and shape.
bool on_devices(const std::vector<Element>& per_replica, size_t c) {
  const Tensor& first = per_replica[0][c];
  for (const auto& replica : per_replica)
    if (replica[c].buffer()->kind() != MemoryKind::kDevice || replica[c].dtype() != first.dtype() ||
        replica[c].shape() != first.shape())
      return false;
  return true;
}

}  // namespace

Element reduce(const Strategy& strategy, ReduceOp op, const std::vector<Element>& per_replica,
               int axis) {
  DINPUT_CHECK_ARG(axis == kAxisNone || axis == 0,
                   "reduce: axis must be DINPUT_AXIS_NONE (-1) or 0, got ", axis);
  DINPUT_CHECK_ARG(op == ReduceOp::kSum || op == ReduceOp::kMean, "reduce: invalid op ",
                   static_cast<int>(op));
  const size_t R = static_cast<size_t>(strategy.num_local_replicas());
  if (per_replica.size() != R)
    raise(Code::kInvalidArgument, "reduce: the value has ", per_replica.size(),
          " replica(s) but the strategy has ", R, " local replica(s)");
  for (size_t r = 1; r < R; ++r)
    if (per_replica[r].size() != per_replica[0].size())
      raise(Code::kInvalidArgument, "reduce: replica ", r, " has ", per_replica[r].size(),
            " component(s) but replica 0 has ", per_replica[0].size());
  const std::vector<int> gpus = nccl_devices(strategy, axis);
  // Across two workers: each says per component whether it can sum it with NCCL (its
  // replica's value on its GPU, a dtype NCCL sums exactly), and a component goes that way
  // only where both can.
  std::string across;
  if (may_sum_across_workers(strategy, axis)) {
    const Device& device = strategy.devices().at(0);
    std::string mine(per_replica[0].size(), '0');
    for (size_t c = 0; c < mine.size(); ++c)
      if (device.type == DeviceType::kGPU && gpu::nccl_across_workers_available() &&
          on_devices(per_replica, c) && nccl_reduce_is_exact(per_replica[0][c].dtype(), {0, 1}))
        mine[c] = '1';
    const std::vector<std::string> all =
        strategy.collective()->all_gather(strategy.worker_index(), 0, mine);
    across = mine;
    for (const std::string& theirs : all) {
      if (theirs.size() != across.size())
        raise(Code::kInternal,
              "reduce: the workers reduce values of different numbers of "
              "components; their calls are out of step");
      for (size_t c = 0; c < across.size(); ++c)
        if (theirs[c] != '1') across[c] = '0';
    }
  }
  // Host path: values on GPUs are copied to the host first (once, when a component needs it).
  std::vector<Element> on_host;
  bool copied = false;
  Element out;
  for (size_t c = 0; c < per_replica[0].size(); ++c) {
    if (!across.empty() && across[c] == '1') {
      const Tensor sum =
          gpu::nccl_sum_across_workers(*strategy.collective(), strategy.worker_index(),
                                       per_replica[0][c], strategy.devices().at(0).index);
      Tensor result;
      // Both workers hold the same sum, so both decide alike whether to redo it on the host.
      if (finish_nccl_sum(strategy, op, sum, &result)) {
        out.push_back(std::move(result));
        continue;
      }
    }
    if (!gpus.empty() && on_devices(per_replica, c) &&
        nccl_reduce_is_exact(per_replica[0][c].dtype(), gpus)) {
      std::vector<Tensor> column;
      for (const auto& replica : per_replica) column.push_back(replica[c]);
      Tensor result;
      if (finish_nccl_sum(strategy, op, gpu::nccl_sum_to_host(column, gpus), &result)) {
        out.push_back(std::move(result));
        continue;
      }
    }
    if (!copied) {
      on_host = per_replica;
      for (auto& replica : on_host)
        for (auto& t : replica) t = gpu::copy_to_host(t);
      copied = true;
    }
    out.push_back(reduce_component(strategy, op, on_host, c, axis));
  }
  return out;
}

}  // namespace dinput
