#include "builder_functions.h"

namespace dinput_tool {
namespace builder {

namespace {

// A name written in the chain matches `canonical` bare or with one of the module paths a
// user may copy from Python code.
bool name_matches(const std::string& written, const std::string& canonical,
                  std::initializer_list<const char*> prefixes) {
  if (written == canonical) return true;
  for (const char* prefix : prefixes) {
    if (written == std::string(prefix) + canonical) return true;
  }
  return false;
}

}  // namespace

bool is_autotune(const std::string& name) {
  return name_matches(name, "AUTOTUNE", {"tf.data.", "tf.data.experimental.", "data."});
}

bool is_shard_hint(const std::string& name) {
  return name_matches(name, "SHARD_HINT", {"tf.data.experimental.", "data.experimental."});
}

DatasetPtr adopt(dinput_status_t code, dinput_dataset_t* const* made, const char* what) {
  check(code, what);
  return DatasetPtr(*made);
}

const IntConstant kAutotune{"AUTOTUNE", is_autotune, DINPUT_AUTOTUNE};
const IntConstant kShardHint{"SHARD_HINT", is_shard_hint, DINPUT_SHARD_HINT};

int64_t int_at_least(const Args& args, const char* name, int64_t min, int64_t fallback) {
  const int64_t value = args.get_int(name, {}, true, fallback);
  if (value < min) {
    throw args.error(name, "must be >= " + std::to_string(min) + ", got " + std::to_string(value));
  }
  return value;
}

std::vector<std::string> file_names(const Args& args, const char* name) {
  std::vector<std::string> names = args.get_strings(name);
  for (const std::string& f : names) {
    if (f.find('\0') != std::string::npos) throw args.error(name, "must not contain a NUL byte");
  }
  return names;
}

}  // namespace builder
}  // namespace dinput_tool
