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

void adopt(dinput_status_t code, dinput_dataset_t* const* made, const char* what, DatasetPtr* out) {
  if (code != DINPUT_OK) throw library_error(code, what);
  out->reset(*made);
}

const IntConstant kAutotune{"AUTOTUNE", is_autotune, DINPUT_AUTOTUNE};
const IntConstant kShardHint{"SHARD_HINT", is_shard_hint, DINPUT_SHARD_HINT};

void int_at_least(const Args& args, const char* name, int64_t min, int64_t fallback, int64_t* out) {
  args.get_int(name, out, {}, true, fallback);
  if (*out < min) {
    throw args.error(name, "must be >= " + std::to_string(min) + ", got " + std::to_string(*out));
  }
}

void file_names(const Args& args, const char* name, std::vector<std::string>* out) {
  args.get_strings(name, out);
  for (const std::string& f : *out) {
    if (f.find('\0') != std::string::npos) throw args.error(name, "must not contain a NUL byte");
  }
}

}  // namespace builder
}  // namespace dinput_tool
