// dinput_dist_iterator_copy_steps: several steps of a distributed iterator copied into one
// buffer of the caller's. For a binding that pays for every foreign call and every object it
// makes (Python: a ctypes call, a numpy array per piece), viewing each small piece of each
// step costs more than the library's whole step; one copy of a few KiB per step into one
// array made per call costs less. A step that does not fit the caller's layout is handed out
// whole instead, so that no step is lost or given twice.
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "capi/dist_handles.h"
#include "capi/firewall.h"
#include "capi/handles.h"

using namespace dinput;

namespace {

constexpr const char* kFn = "dinput_dist_iterator_copy_steps";

// What every tensor of a step must be to be copied: `tensors` of them per step (replicas
// times components), each of `dtype` and `shape`, in host memory, `bytes` each.
struct Layout {
  DType dtype;
  Shape shape;
  size_t tensors;
  size_t bytes;
};

bool fits(const std::vector<Element>& step, const Layout& layout) {
  size_t n = 0;
  for (const Element& replica : step) {
    for (const Tensor& t : replica) {
      if (t.dtype() != layout.dtype || !(t.shape() == layout.shape) || !t.on_host() ||
          (layout.bytes && !t.defined()))
        return false;
      ++n;
    }
  }
  // Replicas with different numbers of components do not fit either (the count differs).
  return n == layout.tensors && step.size() * (step.empty() ? 0 : step[0].size()) == n;
}

// Copies the step's tensors to `out`, replica by replica, and lets go of its buffers.
void copy_step(std::vector<Element>& step, const Layout& layout, char* out) {
  for (Element& replica : step) {
    for (const Tensor& t : replica) {
      if (layout.bytes) std::memcpy(out, t.data(), layout.bytes);
      out += layout.bytes;
    }
    replica.clear();  // keeps the vector's storage for the next step
  }
}

Layout layout_of(size_t max_steps, size_t buffer_size, const void* buffer, dinput_dtype_t dtype,
                 const int64_t* shape, int rank, const DistributedDataset& d) {
  DINPUT_CHECK_ARG(max_steps > 0, kFn, ": argument 'max_steps' is 0");
  const auto dt = static_cast<DType>(dtype);
  DINPUT_CHECK_ARG(dtype_valid(dt) && dt != DType::kBytes, kFn, ": argument 'dtype' is ",
                   dtype_name(dt), ": only fixed-size dtypes can be copied");
  DINPUT_CHECK_ARG(rank >= 0, kFn, ": argument 'rank' is ", rank);
  DINPUT_CHECK_ARG(rank == 0 || shape, kFn, ": argument 'shape' is NULL with rank ", rank);
  size_t elems = 1;
  for (int i = 0; i < rank; ++i) {
    DINPUT_CHECK_ARG(shape[i] >= 0, kFn, ": argument 'shape' has dimension ", i, " = ", shape[i]);
    const auto dim = static_cast<size_t>(shape[i]);
    DINPUT_CHECK_ARG(dim == 0 || elems <= SIZE_MAX / 16 / dim, kFn,
                     ": argument 'shape' is too large");
    elems *= dim;
  }
  Layout layout{dt, rank ? Shape(shape, rank) : Shape(), 0, elems * dtype_size(dt)};
  layout.tensors = static_cast<size_t>(d.strategy().num_local_replicas()) * d.element_spec().size();
  const size_t step_bytes = layout.tensors * layout.bytes;
  DINPUT_CHECK_ARG(step_bytes == 0 || max_steps <= SIZE_MAX / step_bytes, kFn,
                   ": argument 'max_steps' is ", max_steps, ": steps of ", step_bytes,
                   " bytes that many overflow a size_t");
  const size_t need = max_steps * step_bytes;
  DINPUT_CHECK_ARG(buffer_size >= need, kFn, ": argument 'buffer_size' is ", buffer_size, ", but ",
                   max_steps, " steps of ", layout.tensors, " tensors of ", layout.bytes,
                   " bytes need ", need);
  DINPUT_CHECK_ARG(need == 0 || buffer, kFn, ": argument 'buffer' is NULL");
  return layout;
}

}  // namespace

extern "C" {

DINPUT_API dinput_status_t
dinput_dist_iterator_copy_steps(size_t* num_steps, dinput_per_replica_t** unfit, void* buffer,
                                size_t buffer_size, dinput_dtype_t dtype, const int64_t* shape,
                                int rank, size_t max_steps, dinput_dist_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(num_steps);
    *num_steps = 0;
    DINPUT_REQUIRE_OUT(unfit);
    DINPUT_REQUIRE(iterator);
    dinput_dist_iterator& it = *iterator;
    // Checked before any step is taken, so that no step is taken and then refused.
    const Layout layout =
        layout_of(max_steps, buffer_size, buffer, dtype, shape, rank, it.it->dataset());
    capi::InUseScope busy(it.in_use, kFn);
    if (it.pending) std::rethrow_exception(std::exchange(it.pending, nullptr));
    char* out = static_cast<char*>(buffer);
    const size_t step_bytes = layout.tensors * layout.bytes;
    size_t taken = 0;
    std::vector<Element> step;  // its vectors' storage is reused from step to step
    try {
      for (; taken < max_steps; ++taken) {
        const bool got = capi::next_element(
            "dinput_dist_iterator_cancel", [&] { return it.it->cancelled(); },
            [&] { return it.it->next(step); });
        if (!got) break;
        if (!fits(step, layout)) {
          auto value = std::make_unique<dinput_per_replica>();
          value->replicas = std::move(step);
          *unfit = value.release();
          break;
        }
        copy_step(step, layout, out + taken * step_bytes);
      }
    } catch (...) {
      if (taken == 0) throw;
      // The steps copied are the caller's; the failure waits for the next call.
      it.pending = std::current_exception();
    }
    if (taken == 0 && !*unfit) raise(Code::kOutOfRange, "End of sequence");
    *num_steps = taken;
  });
}

}  // extern "C"
