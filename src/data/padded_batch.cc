// padded_batch and bucket_by_sequence_length: batches of rows padded to one shape.
#include <algorithm>
#include <deque>

#include "data/input_snapshots.h"
#include "data/nodes.h"
#include "data/ragged.h"
#include "data/state.h"

namespace dinput {

// ---- padded_batch ----

PaddedBatchDataset::PaddedBatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                                       Padding padding)
    : UnaryDataset(std::move(input)),
      batch_size_(batch_size),
      drop_remainder_(drop_remainder),
      padding_(std::move(padding)) {
  const ElementSpec& in = input_->element_spec();
  const int64_t batch = drop_remainder ? batch_size : kUnknownDim;
  const std::vector<bool> splits = find_row_splits(*input_);
  if (splits.size() != in.size()) {  // no ragged values
    spec_ = padded_spec(in, padding_, batch);
    out_padding_ = padding_;
    return;
  }
  ragged_.assign(in.size(), 0);
  for (size_t c = 0; c < in.size(); ++c) {
    if (splits[c]) continue;
    size_t k = 0;
    while (c + 1 + k < in.size() && splits[c + 1 + k]) ++k;
    if (k == 0) continue;
    ragged_[c] = static_cast<int>(k);
    for (size_t j = c; j <= c + k; ++j) {
      if (j > c) ragged_[j] = -1;
      // A ragged value has no padded shape: a size given for one of its lengths would be lost.
      for (int d = 0; d < in[j].shape.rank(); ++d)
        DINPUT_CHECK_ARG(in[j].shape[d] != kUnknownDim || padding_.shapes[j][d] == kUnknownDim,
                         "padded_batch: component ", j, " is part of a ragged value (",
                         splits[j] ? "row splits" : "its values",
                         "), which is batched as a ragged value and not padded; its padded shape ",
                         padding_.shapes[j].to_string(), " must leave its dimensions unknown");
    }
  }
  ElementSpec dense_in;
  for (size_t c = 0; c < in.size(); ++c) {
    if (ragged_[c] != 0) continue;
    dense_.push_back(c);
    dense_in.push_back(in[c]);
    dense_padding_.shapes.push_back(padding_.shapes[c]);
    dense_padding_.values.push_back(padding_.values[c]);
  }
  const ElementSpec dense_out = padded_spec(dense_in, dense_padding_, batch);
  for (size_t c = 0, d = 0; c < in.size(); ++c) {
    if (ragged_[c] == 0) {
      spec_.push_back(dense_out[d]);
      out_padding_.shapes.push_back(dense_padding_.shapes[d]);
      out_padding_.values.push_back(dense_padding_.values[d]);
      ++d;
      continue;
    }
    if (ragged_[c] < 0) {  // merged splits
      spec_.push_back({DType::kInt64, Shape{kUnknownDim}});
    } else {  // the values, then the new splits over the batch's rows
      spec_.push_back({in[c].dtype, in[c].shape.with_first(kUnknownDim)});
      spec_.push_back({DType::kInt64, Shape{batch == kUnknownDim ? kUnknownDim : batch + 1}});
      out_padding_.shapes.push_back(spec_[spec_.size() - 2].shape.drop_first());
      out_padding_.values.push_back(Tensor::zeros(in[c].dtype, Shape()));
    }
    out_padding_.shapes.push_back(spec_.back().shape.drop_first());
    out_padding_.values.push_back(Tensor::zeros(DType::kInt64, Shape()));
  }
}

Element PaddedBatchDataset::batch_rows(const std::vector<Element>& rows,
                                       const std::vector<int64_t>& index) const {
  if (ragged_.empty()) return pad_rows("padded_batch", rows, padding_, index);
  std::vector<Element> dense_rows(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != ragged_.size())
      raise(Code::kInvalidArgument, "padded_batch: input element ", index[r], " has ",
            rows[r].size(), " components, expected ", ragged_.size());
    for (size_t c : dense_) dense_rows[r].push_back(rows[r][c]);
  }
  Element dense = pad_rows("padded_batch", dense_rows, dense_padding_, index, dense_);
  Element out;
  out.reserve(spec_.size());
  for (size_t c = 0, d = 0; c < ragged_.size(); ++c) {
    if (ragged_[c] == 0)
      out.push_back(std::move(dense[d++]));
    else if (ragged_[c] > 0)
      batch_ragged("padded_batch", rows, c, static_cast<size_t>(ragged_[c]), index, out);
  }
  return out;
}

int64_t PaddedBatchDataset::cardinality() const {
  int64_t n = input_->cardinality();
  if (n < 0) return n;
  return n / batch_size_ + (!drop_remainder_ && n % batch_size_ != 0 ? 1 : 0);
}

std::string PaddedBatchDataset::arguments() const {
  return str_cat("batch_size=", batch_size_, ", drop_remainder=", drop_remainder_ ? 1 : 0, ", ",
                 describe_padding(padding_));
}

DatasetPtr PaddedBatchDataset::with_inputs(std::vector<DatasetPtr> inputs) const {
  return std::make_shared<PaddedBatchDataset>(inputs.at(0), batch_size_, drop_remainder_, padding_);
}

namespace {

// Its state is the sequential batch's: whether the input ended, else the input's state (no
// rows are held between calls).
class PaddedBatchIterator final : public Iterator {
 public:
  PaddedBatchIterator(std::shared_ptr<const PaddedBatchDataset> ds, std::unique_ptr<Iterator> input)
      : ds_(std::move(ds)),
        input_(std::move(input)),
        batch_size_(ds_->batch_size()),
        drop_remainder_(ds_->drop_remainder()) {}

  bool next(Element& out) override {
    if (done_) return false;
    std::vector<Element> rows;
    rows.reserve(static_cast<size_t>(std::min<int64_t>(batch_size_, 1024)));
    Element e;
    while (static_cast<int64_t>(rows.size()) < batch_size_ && input_->next(e))
      rows.push_back(std::move(e));
    const auto got = static_cast<int64_t>(rows.size());
    if (got < batch_size_) done_ = true;
    if (got == 0 || (drop_remainder_ && got < batch_size_)) return false;
    std::vector<int64_t> index(rows.size());
    for (auto& i : index) i = read_++;
    out = ds_->batch_rows(rows, index);
    return true;
  }
  void save(StateWriter& w) const override { save_unless_ended(w, "padded_batch", done_, *input_); }
  void restore(StateReader& r) override {
    done_ = restore_unless_ended(r, "padded_batch", *input_);
  }

 private:
  std::shared_ptr<const PaddedBatchDataset> ds_;
  std::unique_ptr<Iterator> input_;
  int64_t batch_size_;
  bool drop_remainder_;
  bool done_ = false;
  int64_t read_ = 0;  // input elements read by this iterator, for messages
};

}  // namespace

std::unique_ptr<Iterator> PaddedBatchDataset::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<PaddedBatchIterator>(
      std::static_pointer_cast<const PaddedBatchDataset>(ptr()), input_->make_iterator(ctx));
}

DatasetPtr make_padded_batch(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                             std::vector<Shape> padded_shapes, std::vector<Tensor> padding_values) {
  DINPUT_CHECK_ARG(input != nullptr, "padded_batch: no input dataset");
  DINPUT_CHECK_ARG(batch_size > 0, "padded_batch: batch_size must be greater than zero, got ",
                   batch_size);
  Padding padding = make_padding("padded_batch", input->element_spec(), std::move(padded_shapes),
                                 std::move(padding_values));
  return std::make_shared<PaddedBatchDataset>(std::move(input), batch_size, drop_remainder,
                                              std::move(padding));
}

// ---- bucket_by_sequence_length ----
//
// Its saved state holds no element (docs/checkpoint.md): how many input elements were read,
// where each bucket's oldest buffered element lies and how many the bucket holds, and the
// input's state at a position no later than the oldest of them. A restore reads the input
// again from there and puts back in its bucket each element at or after that bucket's
// oldest position; the elements before it had already gone out in a batch.

namespace {

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

class BucketDataset final : public UnaryDataset {
 public:
  // component < 0: the length comes from `length`.
  BucketDataset(DatasetPtr input, int64_t component, std::shared_ptr<const LengthFn> length,
                std::vector<int64_t> boundaries, std::vector<int64_t> batch_sizes, Padding padding,
                bool to_boundary, bool drop)
      : UnaryDataset(std::move(input)),
        component_(component),
        length_(std::move(length)),
        boundaries_(std::move(boundaries)),
        batch_sizes_(std::move(batch_sizes)),
        padding_(std::move(padding)),
        to_boundary_(to_boundary),
        drop_(drop),
        spec_(padded_spec(input_->element_spec(), padding_, kUnknownDim)) {
    for (size_t b = 0; b < batch_sizes_.size(); ++b) {
      Padding p = padding_;
      if (to_boundary_ && b < boundaries_.size()) {
        for (auto& shape : p.shapes)
          for (int d = 0; d < shape.rank(); ++d)
            if (shape[d] == kUnknownDim) shape[d] = boundaries_[b] - 1;
      }
      bucket_padding_.push_back(std::move(p));
    }
  }
  const char* name() const override { return "bucket_by_sequence_length"; }
  std::string arguments() const override {
    return str_cat(
        length_ ? std::string("element_length_func") : str_cat("length_component=", component_),
        ", bucket_boundaries=[", join(boundaries_), "], bucket_batch_sizes=[", join(batch_sizes_),
        "], pad_to_bucket_boundary=", to_boundary_ ? 1 : 0, ", drop_remainder=", drop_ ? 1 : 0,
        ", ", describe_padding(padding_));
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    return n == kInfiniteCardinality || n == 0 ? n : kUnknownCardinality;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<BucketDataset>(in.at(0), component_, length_, boundaries_, batch_sizes_,
                                           padding_, to_boundary_, drop_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  // The bucket of an element: boundaries[b-1] <= length < boundaries[b].
  size_t bucket_of(const Element& e, int64_t index) const {
    const int64_t length = length_of(e, index);
    const auto b = static_cast<size_t>(
        std::upper_bound(boundaries_.begin(), boundaries_.end(), length) - boundaries_.begin());
    if (to_boundary_ && b == boundaries_.size())
      raise(Code::kInvalidArgument, "bucket_by_sequence_length: input element ", index,
            " has length ", length,
            length_ ? std::string(" (element_length_func)")
                    : str_cat(" (component ", component_, ")"),
            ", but with pad_to_bucket_boundary every length must be below the largest "
            "bucket boundary, ",
            boundaries_.back());
    return b;
  }
  const std::vector<int64_t>& batch_sizes() const { return batch_sizes_; }
  const Padding& padding(size_t bucket) const { return bucket_padding_[bucket]; }
  bool drop_remainder() const { return drop_; }

 private:
  int64_t length_of(const Element& e, int64_t index) const {
    if (length_) {
      int64_t length;
      try {
        length = (*length_)(e);
      } catch (const Error& err) {
        raise(err.code(), "bucket_by_sequence_length: the length of input element ", index, ": ",
              err.what());
      }
      if (length < 0)
        raise(Code::kInvalidArgument, "bucket_by_sequence_length: element_length_func gave ",
              length, " for input element ", index, "; a length must be >= 0");
      return length;
    }
    const Tensor& t = e.at(static_cast<size_t>(component_));
    if (t.rank() < 1)
      raise(Code::kInvalidArgument, "bucket_by_sequence_length: component ", component_,
            " of input element ", index, " is a scalar (", t.describe(),
            "); its length is its first dimension");
    return t.dim(0);
  }

  int64_t component_;
  std::shared_ptr<const LengthFn> length_;
  std::vector<int64_t> boundaries_, batch_sizes_;
  Padding padding_;
  bool to_boundary_, drop_;
  ElementSpec spec_;
  std::vector<Padding> bucket_padding_;
};

class BucketIterator final : public Iterator {
 public:
  BucketIterator(std::shared_ptr<const BucketDataset> ds, std::unique_ptr<Iterator> input)
      : ds_(std::move(ds)), input_(std::move(input)), buckets_(ds_->batch_sizes().size()) {
    const auto& sizes = ds_->batch_sizes();
    interval_ = std::max<int64_t>(1, *std::max_element(sizes.begin(), sizes.end()) / 4);
  }

  bool next(Element& out) override {
    while (!input_done_) {
      Element e;
      if (!read(e)) break;
      const int64_t index = read_ - 1;
      const size_t b = ds_->bucket_of(e, index);
      buckets_[b].push_back(Row{index, std::move(e)});
      if (static_cast<int64_t>(buckets_[b].size()) == ds_->batch_sizes()[b]) {
        out = emit(b);
        return true;
      }
    }
    // The end of the input: what the buckets hold goes out in bucket order.
    for (size_t b = 0; b < buckets_.size(); ++b) {
      if (buckets_[b].empty()) continue;
      if (ds_->drop_remainder()) {
        buckets_[b].clear();
        continue;
      }
      out = emit(b);
      return true;
    }
    return false;
  }

  void save(StateWriter& w) const override {
    snapshots_.check();
    w.section("bucket_by_sequence_length", [&](StateWriter& s) {
      s.i64(read_);
      for (const auto& bucket : buckets_) {
        s.i64(bucket.empty() ? read_ : bucket.front().index);
        s.u64(bucket.size());
      }
      const int64_t oldest = oldest_needed();
      if (oldest == read_) {
        s.i64(read_);
        input_->save(s);
        return;
      }
      const InputSnapshots::Snapshot& best = snapshots_.at_or_before(oldest);
      s.i64(best.position);
      s.raw(best.state);
    });
  }

  void restore(StateReader& r) override {
    StateReader s = r.section("bucket_by_sequence_length");
    const int64_t saved_read = s.i64_in("input elements read", 0, INT64_MAX);
    std::vector<int64_t> first(buckets_.size());
    std::vector<uint64_t> count(buckets_.size());
    int64_t oldest = saved_read;
    for (size_t b = 0; b < buckets_.size(); ++b) {
      first[b] = s.i64_in("a bucket's oldest element", 0, saved_read);
      count[b] =
          s.u64_in("a bucket's element count", 0, static_cast<uint64_t>(ds_->batch_sizes()[b] - 1));
      if (count[b] > 0) oldest = std::min(oldest, first[b]);
    }
    const int64_t position = s.i64_in("input position", 0, oldest);
    input_->restore(s);
    s.finish();
    read_ = position;
    while (read_ < saved_read) {
      Element e;
      if (!read(e))
        raise(Code::kDataLoss,
              "bucket_by_sequence_length: restoring the iterator state: the input ended after ",
              read_, " elements but the saved iterator had read ", saved_read,
              " (did the input data change since the save?)");
      const int64_t index = read_ - 1;
      const size_t b = ds_->bucket_of(e, index);
      if (index >= first[b]) buckets_[b].push_back(Row{index, std::move(e)});
    }
    for (size_t b = 0; b < buckets_.size(); ++b)
      if (buckets_[b].size() != count[b])
        r.corrupt(str_cat("bucket ", b, " holds ", buckets_[b].size(),
                          " elements after reading the input again, but the saved one held ",
                          count[b]));
  }

 private:
  struct Row {
    int64_t index;  // the element's position in the input
    Element element;
  };
  bool read(Element& e) {
    if (snapshots_.list().empty() || read_ - snapshots_.list().back().position >= interval_)
      take_snapshot();
    if (!input_->next(e)) {
      input_done_ = true;
      return false;
    }
    ++read_;
    return true;
  }

  void take_snapshot() {
    snapshots_.take(*input_, read_);
    snapshots_.drop_before(oldest_needed());
    // A bucket that rarely fills keeps an old element, and every snapshot since may still
    // become the one a save needs: keep every other one and take them half as often, so
    // that at most 64 are held however long the bucket waits.
    auto& list = snapshots_.list();
    if (list.size() > 64) {
      std::deque<InputSnapshots::Snapshot> kept;
      for (size_t i = 0; i < list.size(); i += 2) kept.push_back(std::move(list[i]));
      list = std::move(kept);
      interval_ *= 2;
    }
  }

  int64_t oldest_needed() const {
    int64_t oldest = read_;
    for (const auto& bucket : buckets_)
      if (!bucket.empty()) oldest = std::min(oldest, bucket.front().index);
    return oldest;
  }

  Element emit(size_t b) {
    std::vector<Element> rows;
    std::vector<int64_t> index;
    rows.reserve(buckets_[b].size());
    for (auto& row : buckets_[b]) {
      rows.push_back(std::move(row.element));
      index.push_back(row.index);
    }
    buckets_[b].clear();
    return pad_rows("bucket_by_sequence_length", rows, ds_->padding(b), index);
  }

  std::shared_ptr<const BucketDataset> ds_;
  std::unique_ptr<Iterator> input_;
  std::vector<std::deque<Row>> buckets_;
  bool input_done_ = false;
  int64_t read_ = 0;
  int64_t interval_;
  InputSnapshots snapshots_;
};

std::unique_ptr<Iterator> BucketDataset::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<BucketIterator>(std::static_pointer_cast<const BucketDataset>(ptr()),
                                          input_->make_iterator(ctx));
}

}  // namespace

namespace {

// The checks both forms share; the node is made by the caller.
Padding check_buckets(const char* op, const DatasetPtr& input,
                      const std::vector<int64_t>& boundaries,
                      const std::vector<int64_t>& batch_sizes, std::vector<Shape> padded_shapes,
                      std::vector<Tensor> padding_values) {
  DINPUT_CHECK_ARG(!boundaries.empty(), op, ": bucket_boundaries must not be empty");
  for (size_t i = 0; i < boundaries.size(); ++i) {
    DINPUT_CHECK_ARG(boundaries[i] >= 1, op, ": bucket_boundaries[", i, "] must be >= 1, got ",
                     boundaries[i]);
    DINPUT_CHECK_ARG(i == 0 || boundaries[i] > boundaries[i - 1], op,
                     ": bucket_boundaries must increase, but [", i, "] is ", boundaries[i],
                     " after ", boundaries[i - 1]);
  }
  DINPUT_CHECK_ARG(
      batch_sizes.size() == boundaries.size() + 1, op, ": bucket_batch_sizes has ",
      batch_sizes.size(),
      " sizes; it needs one per bucket, len(bucket_boundaries) + 1 = ", boundaries.size() + 1);
  for (size_t i = 0; i < batch_sizes.size(); ++i)
    DINPUT_CHECK_ARG(batch_sizes[i] >= 1, op, ": bucket_batch_sizes[", i, "] must be >= 1, got ",
                     batch_sizes[i]);
  return make_padding(op, input->element_spec(), std::move(padded_shapes),
                      std::move(padding_values));
}

}  // namespace

DatasetPtr make_bucket_by_sequence_length(DatasetPtr input, int64_t length_component,
                                          std::vector<int64_t> boundaries,
                                          std::vector<int64_t> batch_sizes,
                                          std::vector<Shape> padded_shapes,
                                          std::vector<Tensor> padding_values,
                                          bool pad_to_bucket_boundary, bool drop_remainder) {
  const char* op = "bucket_by_sequence_length";
  DINPUT_CHECK_ARG(input != nullptr, op, ": no input dataset");
  const ElementSpec& spec = input->element_spec();
  DINPUT_CHECK_ARG(length_component >= 0 && static_cast<size_t>(length_component) < spec.size(), op,
                   ": length_component ", length_component, " is not a component of the ",
                   spec.size(), "-component input");
  DINPUT_CHECK_ARG(spec[static_cast<size_t>(length_component)].shape.rank() >= 1, op,
                   ": component ", length_component, " (",
                   to_string(spec[static_cast<size_t>(length_component)]),
                   ") is a scalar; its length is its first dimension");
  Padding padding = check_buckets(op, input, boundaries, batch_sizes, std::move(padded_shapes),
                                  std::move(padding_values));
  return std::make_shared<BucketDataset>(
      std::move(input), length_component, nullptr, std::move(boundaries), std::move(batch_sizes),
      std::move(padding), pad_to_bucket_boundary, drop_remainder);
}

DatasetPtr make_bucket_by_sequence_length(DatasetPtr input, std::shared_ptr<const LengthFn> length,
                                          std::vector<int64_t> boundaries,
                                          std::vector<int64_t> batch_sizes,
                                          std::vector<Shape> padded_shapes,
                                          std::vector<Tensor> padding_values,
                                          bool pad_to_bucket_boundary, bool drop_remainder) {
  const char* op = "bucket_by_sequence_length";
  DINPUT_CHECK_ARG(input != nullptr, op, ": no input dataset");
  DINPUT_CHECK_ARG(length != nullptr && *length, op, ": no element_length_func given");
  Padding padding = check_buckets(op, input, boundaries, batch_sizes, std::move(padded_shapes),
                                  std::move(padding_values));
  return std::make_shared<BucketDataset>(
      std::move(input), -1, std::move(length), std::move(boundaries), std::move(batch_sizes),
      std::move(padding), pad_to_bucket_boundary, drop_remainder);
}

}  // namespace dinput
