// CUDA tensors passed back into host-only code. A distributed iterator with GPU replicas hands
// out tensors in device memory; a caller may pass one to any function or return one from any
// callback. Here such a tensor is faked: its buffer says kDevice and points at a page mapped
// PROT_NONE, so any CPU read of it kills the test. Every entry point must answer with a status
// (no GPU can copy it: on this machine none is usable, and where one is, the fake names a
// device that does not exist), while the calls that never read tensor data go on working.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "capi/handles.h"
#include "core/buffer.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/tensor_ops.h"
#include "device/gpu.h"
#include "dinput.h"

namespace dinput {
namespace {

// Device memory as far as the library can tell: kind kDevice, an ordinal, a pointer that the
// CPU must never follow.
class FakeDeviceBuffer final : public Buffer {
 public:
  FakeDeviceBuffer(void* data, size_t size, int device)
      : Buffer(data, size, MemoryKind::kDevice, device) {}
};

// The first ordinal that is no GPU of this process: 0 where CUDA is not usable (the case on a
// machine without a GPU), one past the last device where it is. Either way no copy can be
// made, and none may be tried.
int fake_device() {
  const gpu::Availability& a = gpu::availability();
  return a.usable ? a.devices : 0;
}

class HostOnly : public ::testing::Test {
 protected:
  void SetUp() override {
    page_size_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    page_ = mmap(nullptr, page_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page_, MAP_FAILED);
    buffer_ = std::make_shared<FakeDeviceBuffer>(page_, page_size_, fake_device());
  }
  void TearDown() override {
    // Every tensor made here is gone by now; the buffer's last owner is the fixture.
    buffer_.reset();
    munmap(page_, page_size_);
  }

  // An int64 tensor of `shape` in the fake device memory.
  Tensor device_tensor(const Shape& shape = Shape{4}) const {
    return Tensor(DType::kInt64, shape, buffer_, 0);
  }
  static Tensor host_scalar(int64_t v) {
    Tensor t = Tensor::allocate(DType::kInt64, Shape{});
    *t.mutable_data_as<int64_t>() = v;
    return t;
  }
  // Handles made the way the C API makes them.
  static dinput_tensor_t* tensor_handle(Tensor t) {
    return capi::new_handle<dinput_tensor>(std::move(t));
  }
  static dinput_element_t* element_handle(Element e) {
    return capi::new_handle<dinput_element>(std::move(e));
  }

  // The status of a failed call, with the message it set.
  static void expect_refused(dinput_status_t st, const std::vector<std::string>& mentions) {
    EXPECT_EQ(st, DINPUT_FAILED_PRECONDITION) << dinput_last_error_message();
    const std::string message = dinput_last_error_message();
    for (const auto& m : mentions) EXPECT_NE(message.find(m), std::string::npos) << message;
    EXPECT_NE(message.find("GPU:" + std::to_string(fake_device())), std::string::npos) << message;
  }

  // The first get_next of `ds` (freed), which must fail.
  static dinput_status_t first_get_next(dinput_dataset_t* ds) {
    dinput_iterator_t* it = nullptr;
    EXPECT_EQ(dinput_dataset_iterator(&it, ds), DINPUT_OK);
    dinput_element_t* e = nullptr;
    dinput_status_t st = dinput_iterator_get_next(&e, it);
    EXPECT_EQ(e, nullptr);
    dinput_element_free(e);
    dinput_iterator_free(it);
    dinput_dataset_free(ds);
    return st;
  }

  size_t page_size_ = 0;
  void* page_ = nullptr;
  std::shared_ptr<Buffer> buffer_;
};

TEST_F(HostOnly, DatasetSourcesRefuseWhatTheyCannotCopy) {
  dinput_element_t* e = element_handle({host_scalar(1), device_tensor()});
  dinput_dataset_t* ds = nullptr;
  expect_refused(dinput_dataset_from_tensors(&ds, e),
                 {"dinput_dataset_from_tensors", "component 1 of argument 'element'", "int64[4]"});
  EXPECT_EQ(ds, nullptr);
  dinput_element_free(e);

  e = element_handle({device_tensor(Shape{2, 2})});
  expect_refused(dinput_dataset_from_tensor_slices(&ds, e),
                 {"dinput_dataset_from_tensor_slices", "component 0 of argument 'element'"});
  EXPECT_EQ(ds, nullptr);
  dinput_element_free(e);
}

TEST_F(HostOnly, TensorReadsRefuseWhatTheyCannotCopy) {
  dinput_tensor_t* t = tensor_handle(device_tensor());
  int64_t values[4] = {};
  expect_refused(dinput_tensor_copy_to(values, sizeof values, t, DINPUT_INT64),
                 {"dinput_tensor_copy_to", "argument 'tensor'"});
  dinput_tensor_t* host = nullptr;
  expect_refused(dinput_tensor_to_host(&host, t), {"dinput_tensor_to_host", "argument 'tensor'"});
  EXPECT_EQ(host, nullptr);
  // The checks that come before any read still come first.
  EXPECT_EQ(dinput_tensor_copy_to(values, sizeof values, t, DINPUT_FLOAT32),
            DINPUT_INVALID_ARGUMENT);
  const char* s = nullptr;
  size_t n = 0;
  EXPECT_EQ(dinput_tensor_string_view(&s, &n, t, 0), DINPUT_INVALID_ARGUMENT);
  dinput_tensor_free(t);
}

TEST_F(HostOnly, CallsThatNeverReadTheDataWork) {
  dinput_tensor_t* t = tensor_handle(device_tensor());
  EXPECT_EQ(dinput_tensor_device_type(t), DINPUT_DEVICE_CUDA);
  EXPECT_EQ(dinput_tensor_device_index(t), fake_device());
  EXPECT_EQ(dinput_tensor_dtype(t), DINPUT_INT64);
  EXPECT_EQ(dinput_tensor_num_elements(t), 4);
  EXPECT_EQ(dinput_tensor_byte_size(t), 32u);
  EXPECT_EQ(dinput_tensor_data(t), page_);  // a device pointer, handed out and not followed
  dinput_tensor_t* ref = nullptr;
  ASSERT_EQ(dinput_tensor_ref(&ref, t), DINPUT_OK);
  dinput_element_t* e = nullptr;
  const dinput_tensor_t* parts[] = {t, ref};
  ASSERT_EQ(dinput_element_new(&e, parts, 2), DINPUT_OK);
  DLManagedTensor* dl = nullptr;
  ASSERT_EQ(dinput_tensor_to_dlpack(&dl, t), DINPUT_OK);
  EXPECT_EQ(dl->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(dl->dl_tensor.data, page_);
  dl->deleter(dl);
  dinput_element_free(e);
  dinput_tensor_free(ref);
  dinput_tensor_free(t);
}

// Callbacks whose results enter the pipeline: the fake tensor comes back as their output.
struct Fake {
  Tensor tensor;
};

dinput_status_t map_to_device(dinput_element_t** out, const dinput_element_t*, void* fake) {
  *out = capi::new_handle<dinput_element>(Element{static_cast<Fake*>(fake)->tensor});
  return DINPUT_OK;
}

dinput_status_t next_on_device(dinput_element_t** out, void* fake) {
  *out = capi::new_handle<dinput_element>(Element{static_cast<Fake*>(fake)->tensor});
  return DINPUT_OK;
}

TEST_F(HostOnly, CallbackResultsThatEnterThePipelineAreRefused) {
  Fake fake{device_tensor(Shape{})};  // an int64 scalar, as range yields
  dinput_dataset_t* range = nullptr;
  ASSERT_EQ(dinput_dataset_range(&range, 0, 4, 1), DINPUT_OK);
  dinput_dataset_t* mapped = nullptr;
  ASSERT_EQ(dinput_dataset_map(&mapped, range, map_to_device, &fake, nullptr, nullptr), DINPUT_OK);
  dinput_dataset_t* batched = nullptr;
  ASSERT_EQ(dinput_dataset_batch(&batched, mapped, 2, nullptr), DINPUT_OK);
  expect_refused(first_get_next(batched),
                 {"component 0 of the element the map callback returned", "int64[]"});

  // The same with parallel calls, on library threads.
  dinput_map_options_t* o = nullptr;
  ASSERT_EQ(dinput_map_options_new(&o), DINPUT_OK);
  ASSERT_EQ(dinput_map_options_set_num_parallel_calls(o, 3), DINPUT_OK);
  dinput_dataset_t* parallel = nullptr;
  ASSERT_EQ(dinput_dataset_map(&parallel, range, map_to_device, &fake, nullptr, o), DINPUT_OK);
  dinput_map_options_free(o);
  expect_refused(first_get_next(parallel), {"the element the map callback returned"});
  dinput_dataset_free(mapped);
  dinput_dataset_free(range);

  dinput_spec_t* spec = nullptr;
  ASSERT_EQ(dinput_spec_new(&spec), DINPUT_OK);
  ASSERT_EQ(dinput_spec_add(spec, DINPUT_INT64, nullptr, 0), DINPUT_OK);
  dinput_dataset_t* generated = nullptr;
  ASSERT_EQ(dinput_dataset_from_generator(&generated, spec, nullptr, next_on_device, nullptr, &fake,
                                          nullptr),
            DINPUT_OK);
  dinput_spec_free(spec);
  expect_refused(first_get_next(generated),
                 {"component 0 of the element the generator's next callback returned"});
}

dinput_status_t value_on_device(dinput_element_t** out, const dinput_value_context_t*, void* fake) {
  *out = capi::new_handle<dinput_element>(Element{static_cast<Fake*>(fake)->tensor});
  return DINPUT_OK;
}

dinput_status_t replica_returns_args(dinput_element_t** out, const dinput_replica_context_t*,
                                     const dinput_element_t* args, void*) {
  return dinput_element_ref(out, args);
}

// Per-replica values may hold CUDA tensors (a distributed iterator's steps do): making them,
// running on them and handing them out never read the data; reduce, which reads it, refuses a
// tensor on a device this process cannot use.
TEST_F(HostOnly, PerReplicaValuesKeepDeviceTensorsAndReduceRefusesThem) {
  const char* devices[] = {"CPU:0", "CPU:1"};
  dinput_strategy_t* strategy = nullptr;
  ASSERT_EQ(dinput_strategy_new(&strategy, devices, 2), DINPUT_OK);
  Fake fake{device_tensor()};
  dinput_per_replica_t* values = nullptr;
  ASSERT_EQ(
      dinput_strategy_distribute_values_from_function(&values, strategy, value_on_device, &fake),
      DINPUT_OK);
  dinput_per_replica_t* results = nullptr;
  ASSERT_EQ(dinput_strategy_run(&results, strategy, replica_returns_args, values, nullptr),
            DINPUT_OK);
  EXPECT_EQ(dinput_tensor_device_type(dinput_element_get(dinput_per_replica_get(results, 1), 0)),
            DINPUT_DEVICE_CUDA);
  dinput_element_t* sum = nullptr;
  expect_refused(
      dinput_strategy_reduce(&sum, strategy, DINPUT_REDUCE_SUM, results, DINPUT_AXIS_NONE),
      {"dinput_strategy_reduce", "component 0 of the element of replica 0 in argument 'value'"});
  EXPECT_EQ(sum, nullptr);

  // One replica on the host, one on the fake device: the message names the right one.
  dinput_element_t* host = element_handle({host_scalar(1)});
  dinput_element_t* device = element_handle({device_tensor(Shape{})});
  const dinput_element_t* mixed[] = {host, device};
  dinput_per_replica_t* value = nullptr;
  ASSERT_EQ(dinput_per_replica_new(&value, mixed, 2), DINPUT_OK);
  expect_refused(
      dinput_strategy_reduce(&sum, strategy, DINPUT_REDUCE_MEAN, value, DINPUT_AXIS_NONE),
      {"replica 1 in argument 'value'"});
  dinput_per_replica_free(value);
  dinput_element_free(device);
  dinput_element_free(host);
  dinput_per_replica_free(results);
  dinput_per_replica_free(values);
  dinput_strategy_free(strategy);
}

// The last line of defence: the core's byte copies refuse device memory themselves.
TEST_F(HostOnly, CoreCopiesRefuseDeviceMemory) {
  Tensor host = Tensor::zeros(DType::kInt64, Shape{4});
  EXPECT_TRUE(host.on_host());
  EXPECT_FALSE(device_tensor().on_host());
  for (const auto& call : std::vector<std::function<void()>>{
           [&] {
             stack({host, device_tensor()}, 2);
           },
           [&] {
             concat({host, device_tensor()});
           },
           [&] { device_tensor().require_host("a test"); },
       }) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("GPU:" + std::to_string(fake_device())),
                std::string::npos)
          << e.what();
    }
  }
  // A single part is returned as it is, without reading it.
  EXPECT_FALSE(concat({device_tensor()}).on_host());
}

}  // namespace
}  // namespace dinput
