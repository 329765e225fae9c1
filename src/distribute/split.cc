#include "distribute/split.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "data/row_reader.h"
#include "data/state.h"

namespace dinput {

namespace {

class EvenSplitIterator final : public SplitIterator {
 public:
  EvenSplitIterator(std::unique_ptr<Iterator> input, int64_t num_pieces, std::vector<int64_t> keep,
                    bool snapshots, bool lend)
      : SplitIterator(std::move(input)),
        num_pieces_(num_pieces),
        keep_(std::move(keep)),
        snapshots_(snapshots),
        lend_(lend) {}

  std::string input_state() const override {
    if (next_keep_ == keep_.size()) return save_to_bytes(*input_);
    if (!snapshots_)
      raise(Code::kInternal, "distribute_dataset: the even split kept no state before its batch");
    if (no_state_) std::rethrow_exception(no_state_);
    return before_;
  }
  void save_position(StateWriter& w) const override {
    const bool inside = next_keep_ < keep_.size();
    w.flag(inside);
    if (!inside) return;
    w.u64(static_cast<uint64_t>(num_pieces_));
    w.u64(next_keep_);
  }
  void restore_position(StateReader& r) override {
    if (!r.flag("inside a batch")) return;
    r.u64_in("the number of pieces per batch", static_cast<uint64_t>(num_pieces_),
             static_cast<uint64_t>(num_pieces_));
    const uint64_t taken = r.u64_in("the pieces handed out", 1, keep_.size() - 1);
    if (!load()) r.corrupt("the input has no batch left to split");
    next_keep_ = static_cast<size_t>(taken);
  }
  void restore_rows(StateReader& r) override {
    if (r.flag("inside a batch"))
      raise(Code::kFailedPrecondition,
            "the iterator state was saved inside a batch that the even split had cut into "
            "pieces; only the same number of workers and replicas can continue it");
  }

  // Each kept piece is cut from the current batch when it is asked for: no queue of pieces,
  // whose allocations were much of a step's cost with many replicas. A step takes its pieces
  // in one next_many call, whose loop keeps the batch's fields at hand.
  bool next(Element& out) override { return next_many(&out, 1) == 1; }
  size_t next_many(Element* out, size_t n) override {
    size_t filled = 0;
    while (filled < n) {
      if (next_keep_ == keep_.size() && !load()) break;
      const size_t here = std::min(n - filled, keep_.size() - next_keep_);
      const bool takes_last = next_keep_ + here == keep_.size();
      const size_t copies = takes_last ? here - 1 : here;
      const int64_t* keep = keep_.data() + next_keep_;
      const size_t components = batch_.size();
      const Tensor* from = batch_.data();
      const size_t* strides = strides_.data();
      // Locals: the stores into the pieces could otherwise alias these fields.
      const int64_t per_piece = per_piece_, rows = rows_;
      for (size_t k = 0; k < copies; ++k) {
        // A copy takes a new reference to the buffer per piece and component (two atomic
        // operations with its release); a lent view of the batch's tensor, which the last
        // piece takes over, none. piece_rows() keeps 0 <= begin <= end <= rows.
        const auto [begin, end] = piece_rows(keep[k], per_piece, rows);
        Element& piece = out[filled + k];
        piece.clear();
        piece.reserve(components);
        if (lend_) {
          for (size_t c = 0; c < components; ++c)
            piece.emplace_back(from[c], Tensor::Lend{}, begin, end, strides[c]);
          continue;
        }
        for (size_t c = 0; c < components; ++c)
          piece.emplace_back(from[c]).keep_rows(begin, end, strides[c]);
      }
      next_keep_ += copies;
      filled += copies;
      if (takes_last) {
        // The last piece takes the batch's own vector, and the batch keeps the piece's for
        // the next batch: no allocation, and the pieces alone hold the batch's buffers now.
        const auto [begin, end] = rows_of(keep_[next_keep_++]);
        Element& piece = out[filled++];
        piece.swap(batch_);
        batch_.clear();
        for (size_t c = 0; c < piece.size(); ++c) piece[c].keep_rows(begin, end, strides[c]);
      }
    }
    for (size_t k = filled; k < n; ++k) out[k].clear();  // the end: no piece for these
    return filled;
  }

 private:
  // The rows [begin, end) of piece i (>= 0) of a batch of `rows` rows cut `per_piece` a piece.
  static std::pair<int64_t, int64_t> piece_rows(int64_t i, int64_t per_piece, int64_t rows) {
    const int64_t begin = std::min(i * per_piece, rows);
    return {begin, std::min(begin + per_piece, rows)};
  }
  // The rows of piece i of the loaded batch.
  std::pair<int64_t, int64_t> rows_of(int64_t i) const { return piece_rows(i, per_piece_, rows_); }

  bool load() {
    if (snapshots_ && !no_state_) {
      try {
        before_ = save_to_bytes(*input_);
      } catch (...) {
        no_state_ = std::current_exception();  // iteration goes on; only a save fails
      }
    }
    batch_.clear();  // no piece is left in it; its storage takes the next batch
    if (!input_->next(batch_)) return false;
    rows_ = leading_rows(batch_, "distribute_dataset");
    per_piece_ = (rows_ + num_pieces_ - 1) / num_pieces_;
    strides_.resize(batch_.size());
    for (size_t c = 0; c < batch_.size(); ++c) strides_[c] = batch_[c].row_stride();
    next_keep_ = 0;
    return true;
  }

  int64_t num_pieces_;
  std::vector<int64_t> keep_;
  bool snapshots_;
  bool lend_;
  std::string before_;  // the input's state before batch_ (snapshots_ only)
  std::exception_ptr no_state_;
  Element batch_;                // the batch being cut
  std::vector<size_t> strides_;  // the row stride of each of its components
  int64_t rows_ = 0, per_piece_ = 0;
  size_t next_keep_ = keep_.size();  // the index in keep_ of the next piece; size: none left
};

class BalancedSplitIterator final : public SplitIterator {
 public:
  BalancedSplitIterator(std::unique_ptr<Iterator> input, std::vector<int64_t> sizes,
                        std::vector<Tensor> padding)
      : SplitIterator(std::move(input)),
        rows_(input_.get(), "distribute_dataset", /*checkpointable=*/true),
        sizes_(std::move(sizes)) {
    if (!padding.empty()) rows_.set_padding(std::move(padding));
  }

  std::string input_state() const override {
    return rows_.inside() ? rows_.before() : save_to_bytes(*input_);
  }
  void save_position(StateWriter& w) const override {
    w.u64(sizes_.size());
    w.u64(index_);
    w.flag(rows_.inside());
    if (rows_.inside()) w.i64(rows_.taken());
  }
  void restore_position(StateReader& r) override {
    r.u64_in("the number of piece sizes", sizes_.size(), sizes_.size());
    index_ = static_cast<size_t>(r.u64_in("the next piece size", 0, sizes_.size() - 1));
    if (r.flag("inside a batch")) rows_.restore_inside(r.i64("rows taken from the batch"), r);
  }
  void restore_rows(StateReader& r) override {
    r.u64("the number of piece sizes");
    r.u64("the next piece size");
    if (r.flag("inside a batch")) rows_.restore_inside(r.i64("rows taken from the batch"), r);
  }

  bool next(Element& out) override {
    int64_t want = sizes_[index_];
    index_ = (index_ + 1) % sizes_.size();
    if (want == 0) return rows_.empty_piece(out);
    return rows_.take(want, out);
  }

 private:
  RowReader rows_;
  std::vector<int64_t> sizes_;
  size_t index_ = 0;
};

}  // namespace

std::unique_ptr<SplitIterator> make_even_split(std::unique_ptr<Iterator> input, int64_t num_pieces,
                                               std::vector<int64_t> keep, bool snapshots,
                                               bool lend) {
  return std::make_unique<EvenSplitIterator>(std::move(input), num_pieces, std::move(keep),
                                             snapshots, lend);
}

std::unique_ptr<SplitIterator> make_balanced_split(std::unique_ptr<Iterator> input,
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
