// The dataset node of the parse operations. A parse is a stateless map: its iterator saves
// the count of records it parsed (which error messages use) and its input's state.
#include <algorithm>
#include <memory>

#include "data/state.h"
#include "example/parse.h"
#include "example/parser.h"

namespace dinput::example {

namespace {

const char* op_name(ParseOp op) {
  switch (op) {
    case ParseOp::kExample:
      return "parse_example";
    case ParseOp::kSingleExample:
      return "parse_single_example";
    default:
      return "parse_sequence_example";
  }
}

class ParseDataset final : public UnaryDataset {
 public:
  ParseDataset(DatasetPtr input, ParseOp op, std::shared_ptr<const ExampleParser> parser,
               int64_t component)
      : UnaryDataset(std::move(input)), op_(op), parser_(std::move(parser)), component_(component) {
    const char* name = op_name(op);
    const ElementSpec& in = input_->element_spec();
    DINPUT_CHECK_ARG(component >= 0 && component < static_cast<int64_t>(in.size()), name,
                     ": component ", component, " is out of range; the input has ", in.size(),
                     " components");
    const TensorSpec& records = in[static_cast<size_t>(component)];
    const int want_rank = op == ParseOp::kExample ? 1 : op == ParseOp::kSingleExample ? 0 : -1;
    DINPUT_CHECK_ARG(
        records.dtype == DType::kBytes &&
            (want_rank >= 0 ? records.shape.rank() == want_rank : records.shape.rank() <= 1),
        name, ": component ", component, " must hold serialized records as ",
        want_rank == 1   ? "a bytes vector (a batch)"
        : want_rank == 0 ? "a bytes scalar"
                         : "a bytes scalar or vector",
        ", got ", to_string(records));
    batched_ = records.shape.rank() == 1;
    for (int64_t c = 0; c < static_cast<int64_t>(in.size()); ++c) {
      if (c != component) {
        spec_.push_back(in[static_cast<size_t>(c)]);
        continue;
      }
      for (auto& s : parser_->output_spec(batched_, batched_ ? records.shape[0] : 0))
        spec_.push_back(s);
    }
    // The ragged values' row splits, where the parsed components sit among the others.
    const auto& features = parser_->spec();
    std::vector<bool> parsed = row_splits_flags(features.context(), false, batched_);
    for (bool f : row_splits_flags(features.sequence(), true, batched_)) parsed.push_back(f);
    if (std::find(parsed.begin(), parsed.end(), true) != parsed.end()) {
      splits_.assign(static_cast<size_t>(component), false);
      splits_.insert(splits_.end(), parsed.begin(), parsed.end());
      splits_.resize(spec_.size(), false);
    }
  }
  const char* name() const override { return op_name(op_); }
  std::string arguments() const override {
    return str_cat("component=", component_, ", features={", parser_->spec().to_string(), "}");
  }
  const ElementSpec& element_spec() const override { return spec_; }
  std::vector<bool> row_splits_components() const override { return splits_; }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<ParseDataset>(in.at(0), op_, parser_, component_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  const ExampleParser& parser() const { return *parser_; }
  int64_t component() const { return component_; }
  bool batched() const { return batched_; }

 private:
  ParseOp op_;
  std::shared_ptr<const ExampleParser> parser_;
  int64_t component_;
  bool batched_ = false;
  ElementSpec spec_;
  std::vector<bool> splits_;
};

class ParseIterator final : public Iterator {
 public:
  ParseIterator(std::shared_ptr<const ParseDataset> ds, std::unique_ptr<Iterator> input)
      : ds_(std::move(ds)), input_(std::move(input)) {}

  bool next(Element& out) override {
    if (!input_->next(in_)) return false;
    const size_t c = static_cast<size_t>(ds_->component());
    out.clear();
    for (size_t i = 0; i < c; ++i) out.push_back(std::move(in_[i]));
    const Tensor& records = in_[c];
    const int64_t count = ds_->batched() ? records.dim(0) : 1;
    try {
      ds_->parser().parse(records, ds_->batched(), parsed_, scratch_, out);
    } catch (...) {
      parsed_ += count;  // the records after a dropped failure keep their input indices
      in_.clear();
      throw;
    }
    parsed_ += count;
    for (size_t i = c + 1; i < in_.size(); ++i) out.push_back(std::move(in_[i]));
    in_.clear();
    return true;
  }

  void save(StateWriter& w) const override {
    w.section(ds_->name(), [&](StateWriter& s) {
      s.i64(parsed_);
      input_->save(s);
    });
  }
  void restore(StateReader& r) override {
    StateReader s = r.section(ds_->name());
    parsed_ = s.i64_in("records parsed", 0, INT64_MAX);
    input_->restore(s);
    s.finish();
  }

 private:
  std::shared_ptr<const ParseDataset> ds_;
  std::unique_ptr<Iterator> input_;
  Element in_;
  ParseScratch scratch_;  // reused by every batch
  int64_t parsed_ = 0;    // records parsed so far, for error messages
};

std::unique_ptr<Iterator> ParseDataset::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<ParseIterator>(std::static_pointer_cast<const ParseDataset>(ptr()),
                                         input_->make_iterator(ctx));
}

}  // namespace

DatasetPtr make_parse(DatasetPtr input, ParseOp op, ParseSpec spec, int64_t component) {
  DINPUT_CHECK_ARG(input != nullptr, op_name(op), ": input is null");
  DINPUT_CHECK_ARG(!spec.empty(), op_name(op), ": the feature spec is empty");
  auto parser = std::make_shared<const ExampleParser>(std::move(spec),
                                                      op == ParseOp::kSequenceExample, op_name(op));
  return std::make_shared<ParseDataset>(std::move(input), op, std::move(parser), component);
}

}  // namespace dinput::example
