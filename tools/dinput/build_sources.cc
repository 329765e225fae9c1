// The sources that read no files: range, from_tensors, from_tensor_slices; and list_files.
#include <string>
#include <vector>

#include "builder_functions.h"
#include "tensor_literal.h"

namespace dinput_tool {
namespace builder {

Status BuildRange(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  int64_t a = 0, b = 0, step = 1;
  // range(x) means range(0, x): its only argument is the stop.
  DINPUT_TOOL_RETURN_IF_ERROR(
      args.IntShownAs("start", args.Get("stop") != nullptr ? "start" : "stop", &a));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("stop", &b));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("step", &step, {}, false, 1));
  int64_t start = 0, stop = a;  // range(stop)
  if (args.Get("stop") != nullptr) {
    start = a;
    stop = b;
  }
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_range(&made, start, stop, step), &made, "range", out);
}

Status BuildFromTensors(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  ElementPtr element;
  DINPUT_TOOL_RETURN_IF_ERROR(ElementFromLiteral(*args.Get("tensors"), args.function(), &element));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_from_tensors(&made, element.get()), &made, "from_tensors", out);
}

Status BuildFromTensorSlices(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  ElementPtr element;
  DINPUT_TOOL_RETURN_IF_ERROR(ElementFromLiteral(*args.Get("tensors"), args.function(), &element));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_from_tensor_slices(&made, element.get()), &made, "from_tensor_slices",
              out);
}

Status BuildListFiles(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  std::vector<std::string> patterns;
  DINPUT_TOOL_RETURN_IF_ERROR(FileNames(args, "file_pattern", &patterns));
  // Unlike tf.data (whose default is shuffle=True), the tool lists files sorted unless asked
  // to shuffle: a command line is expected to print the same output every time it runs.
  bool shuffle = false;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("shuffle", &shuffle, false, true));
  int64_t seed = -1;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("seed", &seed, {}, true, -1));
  if (args.Get("seed") != nullptr && args.Get("seed")->kind == Value::Kind::kInt && seed < 0) {
    // The C API reserves negative seeds for "random"; an explicit seed must be honoured.
    return args.Error("seed", "must be >= 0 or None");
  }
  dinput_list_files_options_t *raw = nullptr;
  dinput_status_t code = dinput_list_files_options_new(&raw);
  if (code != DINPUT_OK) return LibraryError(code, "dinput_list_files_options_new");
  ListFilesOptionsPtr options(raw);
  code = dinput_list_files_options_set_shuffle(options.get(), shuffle ? 1 : 0);
  if (code != DINPUT_OK) return LibraryError(code, "list_files");
  if (seed >= 0) {
    // The chain's single seed is the pair (seed, 0), as for shuffle().
    code = dinput_list_files_options_set_seed(options.get(), seed, 0);
    if (code != DINPUT_OK) return LibraryError(code, "list_files");
  }
  std::vector<const char *> names;
  for (const std::string &p : patterns) names.push_back(p.c_str());
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_list_files(&made, names.data(), names.size(), options.get()), &made,
              "list_files", out);
}

}  // namespace builder
}  // namespace dinput_tool
