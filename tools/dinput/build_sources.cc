// The sources that read no files: range, from_tensors, from_tensor_slices; and list_files.
#include <string>
#include <vector>

#include "builder_functions.h"
#include "tensor_literal.h"

namespace dinput_tool {
namespace builder {

void build_range(const Args& args, const dinput_dataset_t*, DatasetPtr* out) {
  int64_t a = 0, b = 0, step = 1;
  // range(x) means range(0, x): its only argument is the stop.
  args.get_int_shown_as("start", args.get("stop") != nullptr ? "start" : "stop", &a);
  args.get_int("stop", &b);
  args.get_int("step", &step, {}, false, 1);
  int64_t start = 0, stop = a;  // range(stop)
  if (args.get("stop") != nullptr) {
    start = a;
    stop = b;
  }
  dinput_dataset_t* made = nullptr;
  adopt(dinput_dataset_range(&made, start, stop, step), &made, "range", out);
}

void build_from_tensors(const Args& args, const dinput_dataset_t*, DatasetPtr* out) {
  ElementPtr element;
  element_from_literal(*args.get("tensors"), args.function(), &element);
  dinput_dataset_t* made = nullptr;
  adopt(dinput_dataset_from_tensors(&made, element.get()), &made, "from_tensors", out);
}

void build_from_tensor_slices(const Args& args, const dinput_dataset_t*, DatasetPtr* out) {
  ElementPtr element;
  element_from_literal(*args.get("tensors"), args.function(), &element);
  dinput_dataset_t* made = nullptr;
  adopt(dinput_dataset_from_tensor_slices(&made, element.get()), &made, "from_tensor_slices", out);
}

void build_list_files(const Args& args, const dinput_dataset_t*, DatasetPtr* out) {
  std::vector<std::string> patterns;
  file_names(args, "file_pattern", &patterns);
  // Unlike tf.data (whose default is shuffle=True), the tool lists files sorted unless asked
  // to shuffle: a command line is expected to print the same output every time it runs.
  bool shuffle = false;
  args.get_bool("shuffle", &shuffle, false, true);
  int64_t seed = -1;
  args.get_int("seed", &seed, {}, true, -1);
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
  adopt(dinput_dataset_list_files(&made, names.data(), names.size(), options.get()), &made,
        "list_files", out);
}

}  // namespace builder
}  // namespace dinput_tool
