#include "builder_functions.h"

namespace dinput_tool {
namespace builder {

namespace {

// A name written in the chain matches `canonical` bare or with one of the module paths a
// user may copy from Python code.
bool NameMatches(const std::string &written, const std::string &canonical,
                 std::initializer_list<const char *> prefixes) {
  if (written == canonical) return true;
  for (const char *prefix : prefixes) {
    if (written == std::string(prefix) + canonical) return true;
  }
  return false;
}

}  // namespace

bool IsAutotune(const std::string &name) {
  return NameMatches(name, "AUTOTUNE", {"tf.data.", "tf.data.experimental.", "data."});
}

bool IsShardHint(const std::string &name) {
  return NameMatches(name, "SHARD_HINT", {"tf.data.experimental.", "data.experimental."});
}

Status Made(dinput_status_t code, dinput_dataset_t *const *made, const char *what,
            DatasetPtr *out) {
  if (code != DINPUT_OK) return LibraryError(code, what);
  out->reset(*made);
  return OkStatus();
}

const IntConstant kAutotune{"AUTOTUNE", IsAutotune, DINPUT_AUTOTUNE};
const IntConstant kShardHint{"SHARD_HINT", IsShardHint, DINPUT_SHARD_HINT};

Status IntAtLeast(const Args &args, const char *name, int64_t min, int64_t fallback, int64_t *out) {
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int(name, out, {}, true, fallback));
  if (*out < min) {
    return args.Error(name, "must be >= " + std::to_string(min) + ", got " + std::to_string(*out));
  }
  return OkStatus();
}

Status FileNames(const Args &args, const char *name, std::vector<std::string> *out) {
  DINPUT_TOOL_RETURN_IF_ERROR(args.Strings(name, out));
  for (const std::string &f : *out) {
    if (f.find('\0') != std::string::npos) return args.Error(name, "must not contain a NUL byte");
  }
  return OkStatus();
}

}  // namespace builder
}  // namespace dinput_tool
