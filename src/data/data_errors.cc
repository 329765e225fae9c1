#include "data/data_errors.h"

namespace dinput {

bool is_data_error(const std::exception_ptr& error) {
  if (!error) return false;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return is_data_error(e.code());
  } catch (...) {
    return false;
  }
}

int64_t skip_items(Iterator& input, int64_t count) {
  Element drop;
  for (int64_t i = 0; i < count; ++i) {
    bool got;
    try {
      got = input.next(drop);
    } catch (const Error& e) {
      if (!is_data_error(e.code())) throw;
      continue;  // the failed element was one of the items counted
    }
    if (!got) return i;
  }
  return count;
}

}  // namespace dinput
