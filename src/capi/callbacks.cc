#include "capi/callbacks.h"

#include "capi/firewall.h"
#include "capi/host_tensors.h"

namespace dinput::capi {

void check_callback(dinput_status_t status, const char* what) {
  if (status == DINPUT_OK) return;
  // Inside a CallbackScope the slot holds only what the callback itself set (or a dinput
  // call it made that failed), never an older message of the caller's.
  const std::string& own = last_error_code() != DINPUT_OK ? last_error_message() : std::string();
  if (status == DINPUT_OUT_OF_RANGE) {
    // OUT_OF_RANGE is end of data for get_next; passed on, it would end the caller's epoch
    // early and silently (as tf.data's preserve_cardinality prevents). Only a generator's
    // next callback may return it, and that one is handled before this check.
    throw Error(
        Code::kInvalidArgument,
        str_cat(
            what,
            " returned OUT_OF_RANGE, which only a generator's next callback may return (to end its "
            "data)",
            own.empty() ? "" : ": ", own));
  }
  throw Error(
      to_code(status),
      own.empty() ? str_cat(what, " failed with status ", dinput_status_name(status)) : own);
}

Element take_element(dinput_element_t* handle, const char* what) {
  if (!handle) raise(Code::kInvalidArgument, what, " returned DINPUT_OK without an element");
  std::unique_ptr<dinput_element> owned(handle);
  return std::move(owned->parts);
}

Element take_host_element(dinput_element_t* handle, const char* what) {
  Element e = take_element(handle, what);
  // The message is built only when there is something to copy: this runs for every element.
  if (!all_on_host(e)) move_to_host(e, nullptr, str_cat("the element ", what, " returned").c_str());
  return e;
}

namespace {

class CGeneratorSource;

class CGeneratorInstance final : public GeneratorInstance {
 public:
  CGeneratorInstance(std::shared_ptr<const CGeneratorSource> source, void* state)
      : source_(std::move(source)), state_(state) {}
  ~CGeneratorInstance() override;
  bool next(Element& out) override;
  bool can_save() const override;
  std::string save() const override;
  void restore(const std::string& data) override;

 private:
  std::shared_ptr<const CGeneratorSource> source_;
  void* state_;
};

class CGeneratorSource final : public GeneratorSource,
                               public std::enable_shared_from_this<CGeneratorSource> {
 public:
  CGeneratorSource(dinput_generator_init_fn init, dinput_generator_next_fn next,
                   dinput_generator_finalize_fn finalize, dinput_generator_save_fn save,
                   dinput_generator_restore_fn restore, std::shared_ptr<UserData> user_data)
      : init_(init),
        next_(next),
        finalize_(finalize),
        save_(save),
        restore_(restore),
        user_data_(std::move(user_data)) {}

  std::unique_ptr<GeneratorInstance> open() const override {
    void* state = user_data_->get();
    if (init_) {
      CallbackScope scope;
      check_callback(init_(&state, user_data_->get()), "the generator's init callback");
    }
    return std::make_unique<CGeneratorInstance>(shared_from_this(), state);
  }

  dinput_generator_next_fn next_fn() const { return next_; }
  dinput_generator_finalize_fn finalize_fn() const { return finalize_; }
  dinput_generator_save_fn save_fn() const { return save_; }
  dinput_generator_restore_fn restore_fn() const { return restore_; }

 private:
  dinput_generator_init_fn init_;
  dinput_generator_next_fn next_;
  dinput_generator_finalize_fn finalize_;
  dinput_generator_save_fn save_;
  dinput_generator_restore_fn restore_;
  std::shared_ptr<UserData> user_data_;
};

CGeneratorInstance::~CGeneratorInstance() {
  if (!source_->finalize_fn()) return;
  CallbackScope scope;  // runs inside dinput_iterator_free, on the caller's thread
  source_->finalize_fn()(state_);
}

bool CGeneratorInstance::next(Element& out) {
  dinput_element_t* produced = nullptr;
  CallbackScope scope;
  dinput_status_t st = source_->next_fn()(&produced, state_);
  if (st == DINPUT_OUT_OF_RANGE) {
    dinput_element_free(produced);
    return false;
  }
  if (st != DINPUT_OK) dinput_element_free(produced);
  check_callback(st, "the generator's next callback");
  out = take_host_element(produced, "the generator's next callback");
  return true;
}

bool CGeneratorInstance::can_save() const {
  return source_->save_fn() != nullptr && source_->restore_fn() != nullptr;
}

// The writer a save callback is given: it appends to the std::string at `sink`, so that the
// bytes never cross allocators.
void append_to_state(void* sink, const void* data, size_t size) {
  if (!sink || !data || size == 0) return;
  static_cast<std::string*>(sink)->append(static_cast<const char*>(data), size);
}

std::string CGeneratorInstance::save() const {
  std::string out;
  CallbackScope scope;
  check_callback(source_->save_fn()(state_, append_to_state, &out),
                 "the generator's save callback");
  return out;
}

void CGeneratorInstance::restore(const std::string& data) {
  CallbackScope scope;
  check_callback(source_->restore_fn()(state_, data.data(), data.size()),
                 "the generator's restore callback");
}

}  // namespace

std::shared_ptr<const GeneratorSource> make_c_generator(dinput_generator_init_fn init,
                                                        dinput_generator_next_fn next,
                                                        dinput_generator_finalize_fn finalize,
                                                        dinput_generator_save_fn save,
                                                        dinput_generator_restore_fn restore,
                                                        std::shared_ptr<UserData> user_data) {
  return std::make_shared<CGeneratorSource>(init, next, finalize, save, restore,
                                            std::move(user_data));
}

std::shared_ptr<const MapFn> make_c_map(dinput_map_fn fn, std::shared_ptr<UserData> user_data) {
  return std::make_shared<const MapFn>([fn, user_data](const Element& in) {
    dinput_element in_handle = to_handle(Element(in));
    dinput_element_t* produced = nullptr;
    CallbackScope scope;
    dinput_status_t st = fn(&produced, &in_handle, user_data->get());
    if (st != DINPUT_OK) dinput_element_free(produced);
    check_callback(st, "the map callback");
    return take_host_element(produced, "the map callback");
  });
}

std::shared_ptr<const MapManyFn> make_c_map_many(dinput_map_many_fn fn,
                                                 std::shared_ptr<UserData> user_data) {
  return std::make_shared<const MapManyFn>([fn, user_data](std::vector<Element>& outs,
                                                           std::vector<Element>& ins) {
    size_t count = ins.size();
    // The inputs move into handles: the core hands the run over and needs it no more.
    std::vector<dinput_element> in_handles;
    in_handles.reserve(count);
    for (Element& e : ins) in_handles.push_back(to_handle(std::move(e)));
    std::vector<const dinput_element_t*> in_ptrs(count);
    for (size_t i = 0; i < count; ++i) in_ptrs[i] = &in_handles[i];
    std::vector<dinput_element_t*> produced(count, nullptr);
    dinput_status_t st;
    {
      CallbackScope scope;
      st = fn(produced.data(), in_ptrs.data(), count, user_data->get());
      // Whatever the callback set is the library's now, whether it succeeded or not.
      std::vector<std::unique_ptr<dinput_element>> owned(count);
      for (size_t i = 0; i < count; ++i) owned[i].reset(produced[i]);
      check_callback(st, "the map_many callback");
      for (size_t i = 0; i < count; ++i)
        if (!owned[i])
          raise(Code::kInvalidArgument, "the map_many callback returned DINPUT_OK without output ",
                i, " (of ", count, ")");
      for (size_t i = 0; i < count; ++i) {
        Element e = std::move(owned[i]->parts);
        owned[i].reset();
        if (!all_on_host(e))
          move_to_host(e, nullptr, str_cat("the map_many callback's output ", i).c_str());
        outs.push_back(std::move(e));
      }
    }
  });
}

std::shared_ptr<const PredicateFn> make_c_filter(dinput_filter_fn fn,
                                                 std::shared_ptr<UserData> user_data) {
  return std::make_shared<const PredicateFn>([fn, user_data](const Element& in) {
    dinput_element in_handle = to_handle(Element(in));
    int keep = 0;
    CallbackScope scope;
    check_callback(fn(&keep, &in_handle, user_data->get()), "the filter callback");
    return keep != 0;
  });
}

std::shared_ptr<const InterleaveFn> make_c_interleave(dinput_interleave_fn fn,
                                                      std::shared_ptr<UserData> user_data) {
  return std::make_shared<const InterleaveFn>([fn, user_data](const Element& in) {
    dinput_element in_handle = to_handle(Element(in));
    dinput_dataset_t* produced = nullptr;
    CallbackScope scope;
    dinput_status_t st = fn(&produced, &in_handle, user_data->get());
    std::unique_ptr<dinput_dataset> taken(produced);
    check_callback(st, "the interleave callback");
    if (!taken)
      raise(Code::kInvalidArgument, "the interleave callback returned DINPUT_OK without a dataset");
    return taken->ds;
  });
}

std::shared_ptr<const LengthFn> make_c_length(dinput_length_fn fn,
                                              std::shared_ptr<UserData> user_data) {
  return std::make_shared<const LengthFn>([fn, user_data](const Element& in) {
    dinput_element in_handle = to_handle(Element(in));
    int64_t length = 0;
    CallbackScope scope;
    check_callback(fn(&length, &in_handle, user_data->get()), "the element_length_func callback");
    return length;
  });
}

}  // namespace dinput::capi
