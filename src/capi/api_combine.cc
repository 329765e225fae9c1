// The operations over several datasets (zip, concatenate, sample_from_datasets,
// choose_from_datasets), cache and ignore_errors.
#include <vector>

#include "capi/firewall.h"
#include "capi/handles.h"
#include "data/datasets.h"
#include "io/cache.h"

using namespace dinput;

namespace {

// The datasets of a list argument: INVALID_ARGUMENT naming the function and the entry for a
// NULL list or a NULL entry.
std::vector<DatasetPtr> dataset_list(const char* fn, const dinput_dataset_t* const* datasets,
                                     size_t n) {
  if (n > 0 && !datasets)
    raise(Code::kInvalidArgument, fn, ": argument 'datasets' is NULL but num_datasets is ", n);
  std::vector<DatasetPtr> out;
  for (size_t i = 0; i < n; ++i) {
    if (!datasets[i]) raise(Code::kInvalidArgument, fn, ": datasets[", i, "] is NULL");
    out.push_back(datasets[i]->ds);
  }
  return out;
}

}  // namespace

extern "C" {

DINPUT_API dinput_status_t dinput_dataset_zip(dinput_dataset_t** out,
                                              const dinput_dataset_t* const* datasets,
                                              size_t num_datasets) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out =
        capi::new_handle<dinput_dataset>(make_zip(dataset_list(__func__, datasets, num_datasets)));
  });
}

DINPUT_API dinput_status_t dinput_dataset_concatenate(dinput_dataset_t** out,
                                                      const dinput_dataset_t* input,
                                                      const dinput_dataset_t* other) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(input);
    DINPUT_REQUIRE(other);
    *out = capi::new_handle<dinput_dataset>(make_concatenate(input->ds, other->ds));
  });
}

DINPUT_API dinput_status_t dinput_dataset_sample_from_datasets(
    dinput_dataset_t** out, const dinput_dataset_t* const* datasets, size_t num_datasets,
    const double* weights, int64_t seed, int stop_on_empty_dataset) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    std::vector<DatasetPtr> inputs = dataset_list(__func__, datasets, num_datasets);
    std::vector<double> w;
    if (weights) w.assign(weights, weights + num_datasets);
    *out = capi::new_handle<dinput_dataset>(make_sample_from_datasets(
        std::move(inputs), std::move(w), seed, stop_on_empty_dataset != 0));
  });
}

DINPUT_API dinput_status_t dinput_dataset_choose_from_datasets(
    dinput_dataset_t** out, const dinput_dataset_t* const* datasets, size_t num_datasets,
    const dinput_dataset_t* selector, int stop_on_empty_dataset) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(selector);
    *out = capi::new_handle<dinput_dataset>(make_choose_from_datasets(
        selector->ds, dataset_list(__func__, datasets, num_datasets), stop_on_empty_dataset != 0));
  });
}

DINPUT_API dinput_status_t dinput_dataset_cache(dinput_dataset_t** out,
                                                const dinput_dataset_t* input,
                                                const char* filename) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(input);
    *out = capi::new_handle<dinput_dataset>(make_cache(input->ds, filename ? filename : ""));
  });
}

DINPUT_API dinput_status_t dinput_dataset_ignore_errors(dinput_dataset_t** out,
                                                        const dinput_dataset_t* input,
                                                        int log_warning) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(input);
    *out = capi::new_handle<dinput_dataset>(make_ignore_errors(input->ds, log_warning != 0));
  });
}

}  // extern "C"
