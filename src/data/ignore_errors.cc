// ignore_errors: drops the elements whose making failed with a data error and goes on.
#include "core/log.h"
#include "data/data_errors.h"
#include "data/datasets.h"
#include "data/state.h"

namespace dinput {

namespace {

// It drops data errors (data/data_errors.h). Everything else (CANCELLED, a missing file, a
// resource running out, an internal error) is about the pipeline, not one element, and
// passes through.
class IgnoreErrorsDataset final : public UnaryDataset {
 public:
  IgnoreErrorsDataset(DatasetPtr input, bool log_warning)
      : UnaryDataset(std::move(input)), log_warning_(log_warning) {}
  const char* name() const override { return "ignore_errors"; }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  // Some elements may be dropped: unknown unless the input is infinite or empty.
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    return n == kInfiniteCardinality || n == 0 ? n : kUnknownCardinality;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<IgnoreErrorsDataset>(in.at(0), log_warning_);
  }

  class Iter final : public Iterator {
   public:
    Iter(std::unique_ptr<Iterator> input, std::shared_ptr<IteratorStats> stats, bool log_warning)
        : input_(std::move(input)), stats_(std::move(stats)), log_warning_(log_warning) {}
    bool next(Element& out) override {
      std::string previous;
      for (;;) {
        try {
          return input_->next(out);
        } catch (const Error& e) {
          if (!is_data_error(e.code())) throw;
          // An input that fails twice in a row with the very same message made no progress
          // (a reader stuck at one offset): ignoring
          // it again would loop forever, so that error is reported, and no longer counted
          // as dropped.
          if (e.what() == previous) {
            stats_->errors_ignored.fetch_sub(1, std::memory_order_relaxed);
            throw;
          }
          previous = e.what();
          stats_->errors_ignored.fetch_add(1, std::memory_order_relaxed);
          if (log_warning_) log_line(LogLevel::kWarning, str_cat("ignore_errors: ", e.what()));
        }
      }
    }
    void save(StateWriter& w) const override {
      w.section("ignore_errors", [&](StateWriter& s) { input_->save(s); });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("ignore_errors");
      input_->restore(s);
      s.finish();
    }

   private:
    std::unique_ptr<Iterator> input_;
    std::shared_ptr<IteratorStats> stats_;
    bool log_warning_;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_->make_iterator(ctx), ctx.stats, log_warning_);
  }

 private:
  bool log_warning_;
};

}  // namespace

DatasetPtr make_ignore_errors(DatasetPtr input, bool log_warning) {
  DINPUT_CHECK_ARG(input != nullptr, "ignore_errors: no input dataset");
  return std::make_shared<IgnoreErrorsDataset>(std::move(input), log_warning);
}

}  // namespace dinput
