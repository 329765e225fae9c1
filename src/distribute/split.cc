#include "distribute/split.h"

#include <algorithm>

#include "data/row_reader.h"

namespace dinput {

namespace {

class EvenSplitIterator final : public Iterator {
 public:
  EvenSplitIterator(std::unique_ptr<Iterator> input, int64_t num_pieces, std::vector<int64_t> keep)
      : input_(std::move(input)), num_pieces_(num_pieces), keep_(std::move(keep)) {}

  // Each kept piece is cut from the current batch when it is asked for: no queue of pieces,
  // whose allocations were much of a step's cost with many replicas.
  bool next(Element& out) override {
    if (next_keep_ == keep_.size()) {
      Element batch;
      if (!input_->next(batch)) return false;
      rows_ = leading_rows(batch, "distribute_dataset");
      per_piece_ = (rows_ + num_pieces_ - 1) / num_pieces_;
      batch_ = std::move(batch);
      next_keep_ = 0;
    }
    const int64_t i = keep_[next_keep_++];
    const int64_t begin = std::min(i * per_piece_, rows_);
    const int64_t end = std::min(begin + per_piece_, rows_);
    if (next_keep_ == keep_.size()) {
      // The last piece reuses the batch's own vector: one allocation fewer per batch, and
      // the pieces alone hold its buffers now.
      out = std::move(batch_);
      batch_.clear();
      for (Tensor& t : out) t = t.slice(begin, end);
      return true;
    }
    out.clear();
    out.reserve(batch_.size());
    for (const Tensor& t : batch_) out.push_back(t.slice(begin, end));
    return true;
  }

 private:
  std::unique_ptr<Iterator> input_;
  int64_t num_pieces_;
  std::vector<int64_t> keep_;
  Element batch_;  // the batch being cut
  int64_t rows_ = 0, per_piece_ = 0;
  size_t next_keep_ = keep_.size();  // the index in keep_ of the next piece; size: none left
};

class BalancedSplitIterator final : public Iterator {
 public:
  BalancedSplitIterator(std::unique_ptr<Iterator> input, std::vector<int64_t> sizes,
                        std::vector<Tensor> padding)
      : input_(std::move(input)),
        rows_(input_.get(), "distribute_dataset"),
        sizes_(std::move(sizes)) {
    if (!padding.empty()) rows_.set_padding(std::move(padding));
  }

  bool next(Element& out) override {
    int64_t want = sizes_[index_];
    index_ = (index_ + 1) % sizes_.size();
    if (want == 0) return rows_.empty_piece(out);
    return rows_.take(want, out);
  }

 private:
  std::unique_ptr<Iterator> input_;
  RowReader rows_;
  std::vector<int64_t> sizes_;
  size_t index_ = 0;
};

}  // namespace

std::unique_ptr<Iterator> make_even_split(std::unique_ptr<Iterator> input, int64_t num_pieces,
                                          std::vector<int64_t> keep) {
  return std::make_unique<EvenSplitIterator>(std::move(input), num_pieces, std::move(keep));
}

std::unique_ptr<Iterator> make_balanced_split(std::unique_ptr<Iterator> input,
                                              std::vector<int64_t> sizes,
                                              std::vector<Tensor> padding) {
  return std::make_unique<BalancedSplitIterator>(std::move(input), std::move(sizes),
                                                 std::move(padding));
}

std::vector<int64_t> balanced_sizes(int64_t global_batch_size, int num_workers,
                                    int replicas_per_worker, int worker) {
  const int64_t n = static_cast<int64_t>(num_workers) * replicas_per_worker;
  const int64_t floor = global_batch_size / n;
  const int64_t num_ceil = global_batch_size - n * floor;
  std::vector<int64_t> sizes(static_cast<size_t>(n), floor);
  for (int64_t i = 0; i < num_ceil; ++i) sizes[static_cast<size_t>(i)] = floor + 1;
  std::rotate(sizes.begin(),
              sizes.begin() + (static_cast<int64_t>(worker) * replicas_per_worker) % n,
              sizes.end());
  return sizes;
}

}  // namespace dinput
