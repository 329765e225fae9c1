// The sources that read no files: range, from_tensors, from_tensor_slices; and list_files.
#include <string>
#include <vector>

#include "builder_functions.h"
#include "tensor_literal.h"

namespace dinput_tool {
namespace builder {

DatasetPtr build_range(const Args& args, const dinput_dataset_t*) {
  // range(x) means range(0, x): its only argument is the stop.
  const int64_t a = args.get_int_shown_as("start", args.get("stop") != nullptr ? "start" : "stop");
  const int64_t b = args.get_int("stop");
  const int64_t step = args.get_int("step", {}, false, 1);
  int64_t start = 0, stop = a;  // range(stop)
  if (args.get("stop") != nullptr) {
    start = a;
    stop = b;
  }
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_range(&made, start, stop, step), &made, "range");
}

DatasetPtr build_from_tensors(const Args& args, const dinput_dataset_t*) {
  const ElementPtr element = element_from_literal(*args.get("tensors"), args.function());
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_from_tensors(&made, element.get()), &made, "from_tensors");
}

DatasetPtr build_from_tensor_slices(const Args& args, const dinput_dataset_t*) {
  const ElementPtr element = element_from_literal(*args.get("tensors"), args.function());
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_from_tensor_slices(&made, element.get()), &made,
               "from_tensor_slices");
}

DatasetPtr build_list_files(const Args& args, const dinput_dataset_t*) {
  const std::vector<std::string> patterns = file_names(args, "file_pattern");
  // Unlike tf.data (whose default is shuffle=True), the tool lists files sorted unless asked
  // to shuffle: a command line is expected to print the same output every time it runs.
  const bool shuffle = args.get_bool("shuffle", false, true);
  const int64_t seed = args.get_int("seed", {}, true, -1);
  if (args.get("seed") != nullptr && args.get("seed")->kind == Value::Kind::kInt && seed < 0) {
    // The C API reserves negative seeds for "random"; an explicit seed must be honoured.
    throw args.error("seed", "must be >= 0 or None");
  }
  dinput_list_files_options_t* raw = nullptr;
  check(dinput_list_files_options_new(&raw), "dinput_list_files_options_new");
  ListFilesOptionsPtr options(raw);
  check(dinput_list_files_options_set_shuffle(options.get(), shuffle ? 1 : 0), "list_files");
  if (seed >= 0) {
    // The chain's single seed is the pair (seed, 0), as for shuffle().
    check(dinput_list_files_options_set_seed(options.get(), seed, 0), "list_files");
  }
  std::vector<const char*> names;
  for (const std::string& p : patterns) names.push_back(p.c_str());
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_list_files(&made, names.data(), names.size(), options.get()), &made,
               "list_files");
}

}  // namespace builder
}  // namespace dinput_tool
