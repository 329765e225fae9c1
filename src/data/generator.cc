// from_generator: elements produced by user code, checked against the declared spec.
#include "data/datasets.h"
#include "data/state.h"

namespace dinput {

namespace {

class GeneratorDataset final : public Dataset {
 public:
  GeneratorDataset(ElementSpec spec, std::shared_ptr<const GeneratorSource> source)
      : spec_(std::move(spec)), source_(std::move(source)) {}
  const char* name() const override { return "from_generator"; }
  std::string arguments() const override { return "spec=" + to_string(spec_); }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return kUnknownCardinality; }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }

  class Iter final : public Iterator {
   public:
    Iter(DatasetPtr owner, const ElementSpec* spec, std::unique_ptr<GeneratorInstance> inst)
        : owner_(std::move(owner)), spec_(spec), inst_(std::move(inst)) {}
    bool next(Element& out) override {
      if (!inst_->next(out)) return false;
      check_matches(*spec_, out, "the generator");
      return true;
    }
    void save(StateWriter& w) const override {
      if (!inst_->can_save())
        state_unsupported("from_generator", "the generator has no save and restore callbacks");
      w.section("from_generator", [&](StateWriter& s) { s.bytes(inst_->save()); });
    }
    void restore(StateReader& r) override {
      if (!inst_->can_save())
        state_unsupported("from_generator", "the generator has no save and restore callbacks");
      StateReader s = r.section("from_generator");
      std::string state = s.bytes("the generator's state");
      s.finish();
      inst_->restore(state);
    }

   private:
    DatasetPtr owner_;
    const ElementSpec* spec_;
    std::unique_ptr<GeneratorInstance> inst_;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext&) const override {
    return std::make_unique<Iter>(ptr(), &spec_, source_->open());
  }

 private:
  ElementSpec spec_;
  std::shared_ptr<const GeneratorSource> source_;
};

}  // namespace

DatasetPtr make_from_generator(ElementSpec spec, std::shared_ptr<const GeneratorSource> source) {
  DINPUT_CHECK_ARG(source != nullptr, "from_generator: no generator given");
  for (size_t i = 0; i < spec.size(); ++i)
    DINPUT_CHECK_ARG(dtype_valid(spec[i].dtype), "from_generator: component ", i,
                     " of the spec has an invalid dtype");
  return std::make_shared<GeneratorDataset>(std::move(spec), std::move(source));
}

}  // namespace dinput
