// The functions over several datasets (zip, concatenate, sample_from_datasets,
// choose_from_datasets), cache and ignore_errors. Their dataset arguments are pipelines
// written as values: a source call with its method calls, e.g. range(3).batch(2).
#include <string>
#include <vector>

#include "builder_functions.h"
#include "pipeline_builder.h"

namespace dinput_tool {
namespace builder {

namespace {

const char* const kDatasetWanted = "a dataset (a pipeline such as range(3).batch(2))";

// The pipeline written as the value `v` of argument `name`, built.
DatasetPtr dataset_of(const Args& args, const char* name, const Value& v) {
  if (v.kind != Value::Kind::kCall) throw args.type_error(name, kDatasetWanted, v);
  Pipeline pipeline;
  Call source;
  source.name = v.text;
  source.pos = v.pos;
  source.args = v.args;
  pipeline.calls.push_back(std::move(source));
  for (const Call& c : v.chain) pipeline.calls.push_back(c);
  return build_dataset(pipeline);
}

// A list or tuple of pipelines.
std::vector<DatasetPtr> datasets_of(const Args& args, const char* name) {
  const Value* v = args.get(name);
  if (v->kind != Value::Kind::kList && v->kind != Value::Kind::kTuple) {
    throw args.type_error(name, "a list of datasets, e.g. [range(3), range(5)]", *v);
  }
  std::vector<DatasetPtr> out;
  for (const Value& item : v->items) out.push_back(dataset_of(args, name, item));
  return out;
}

std::vector<const dinput_dataset_t*> raw(const std::vector<DatasetPtr>& datasets) {
  std::vector<const dinput_dataset_t*> out;
  for (const DatasetPtr& d : datasets) out.push_back(d.get());
  return out;
}

}  // namespace

DatasetPtr build_zip(const Args& args, const dinput_dataset_t*) {
  std::vector<DatasetPtr> datasets;
  const Value* first = args.get("datasets");
  if (first->kind == Value::Kind::kList || first->kind == Value::Kind::kTuple) {
    datasets = datasets_of(args, "datasets");
  } else {
    static const char* const kNames[] = {"datasets",  "dataset_2", "dataset_3", "dataset_4",
                                         "dataset_5", "dataset_6", "dataset_7", "dataset_8"};
    for (const char* name : kNames) {
      if (const Value* v = args.get(name)) datasets.push_back(dataset_of(args, name, *v));
    }
  }
  std::vector<const dinput_dataset_t*> list = raw(datasets);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_zip(&made, list.data(), list.size()), &made, "zip");
}

DatasetPtr build_sample_from_datasets(const Args& args, const dinput_dataset_t*) {
  std::vector<DatasetPtr> datasets = datasets_of(args, "datasets");
  std::vector<double> weights;
  const Value* w = args.get("weights");
  const bool have_weights = w != nullptr && w->kind != Value::Kind::kNone;
  if (have_weights) {
    if (w->kind != Value::Kind::kList && w->kind != Value::Kind::kTuple) {
      throw args.type_error("weights", "a list of numbers or None", *w);
    }
    for (const Value& item : w->items) {
      if (item.kind == Value::Kind::kInt) {
        weights.push_back(static_cast<double>(item.int_value));
      } else if (item.kind == Value::Kind::kFloat) {
        weights.push_back(item.float_value);
      } else {
        throw args.type_error("weights", "a list of numbers or None", item);
      }
    }
    if (weights.size() != datasets.size()) {
      throw args.error("weights", "has " + std::to_string(weights.size()) + " entries for " +
                                      std::to_string(datasets.size()) + " datasets");
    }
  }
  const int64_t seed = args.get_int("seed", {}, true, -1);
  if (args.get("seed") != nullptr && args.get("seed")->kind == Value::Kind::kInt && seed < 0) {
    throw args.error("seed", "must be >= 0 or None");  // negative means "random" in the C API
  }
  const bool stop = args.get_bool("stop_on_empty_dataset", false);
  std::vector<const dinput_dataset_t*> list = raw(datasets);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_sample_from_datasets(&made, list.data(), list.size(),
                                                   have_weights ? weights.data() : nullptr, seed,
                                                   stop ? 1 : 0),
               &made, "sample_from_datasets");
}

DatasetPtr build_choose_from_datasets(const Args& args, const dinput_dataset_t*) {
  std::vector<DatasetPtr> datasets = datasets_of(args, "datasets");
  DatasetPtr choice = dataset_of(args, "choice_dataset", *args.get("choice_dataset"));
  const bool stop = args.get_bool("stop_on_empty_dataset", true);
  std::vector<const dinput_dataset_t*> list = raw(datasets);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_choose_from_datasets(&made, list.data(), list.size(), choice.get(),
                                                   stop ? 1 : 0),
               &made, "choose_from_datasets");
}

DatasetPtr build_concatenate(const Args& args, const dinput_dataset_t* input) {
  DatasetPtr other = dataset_of(args, "dataset", *args.get("dataset"));
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_concatenate(&made, input, other.get()), &made, "concatenate");
}

DatasetPtr build_cache(const Args& args, const dinput_dataset_t* input) {
  std::string filename;
  if (const Value* v = args.get("filename")) {
    if (v->kind != Value::Kind::kString) throw args.type_error("filename", "a string", *v);
    if (v->text.find('\0') != std::string::npos) {
      throw args.error("filename", "contains a NUL byte");
    }
    filename = v->text;
  }
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_cache(&made, input, filename.c_str()), &made, "cache");
}

DatasetPtr build_ignore_errors(const Args& args, const dinput_dataset_t* input) {
  const bool log_warning = args.get_bool("log_warning", false);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_ignore_errors(&made, input, log_warning ? 1 : 0), &made,
               "ignore_errors");
}

}  // namespace builder
}  // namespace dinput_tool
