// A tensor shape (or a spec's partial shape, where a dimension may be kUnknownDim).
// Ranks up to kInlineRank live inline, so the common shapes cost no allocation: every
// element produced by a pipeline carries shapes, and allocation there is the hot path.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace dinput {

constexpr int64_t kUnknownDim = -1;

class Shape {
 public:
  static constexpr int kInlineRank = 6;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  Shape(const int64_t* dims, int rank);
  // Inline: shapes are copied with every tensor and slice, and a call per copy showed up on
  // the per-step path of a distributed iterator. The move is noexcept so that Tensor's is
  // too (a vector of tensors that grows then moves them instead of copying); it leaves an
  // inline shape as it was, and a moved-from shape of a higher rank empty (rank 0).
  Shape(const Shape& other) { copy_from(other); }
  Shape(Shape&& other) noexcept { move_from(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) copy_from(other);
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) move_from(other);
    return *this;
  }

  int rank() const { return rank_; }
  const int64_t* data() const { return rank_ <= kInlineRank ? inline_ : heap_.data(); }
  int64_t* data() { return rank_ <= kInlineRank ? inline_ : heap_.data(); }
  int64_t operator[](int i) const { return data()[i]; }
  int64_t& operator[](int i) { return data()[i]; }

  void push_back(int64_t dim);
  // The shape with `dim` put in front (batching) / with the first dimension removed.
  Shape prepend(int64_t dim) const;
  Shape drop_first() const;
  Shape with_first(int64_t dim) const;

  // Product of the dimensions (1 for a scalar); only meaningful when fully known.
  int64_t num_elements() const {
    const int64_t* dims = data();
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims[i];
    return n;
  }
  // The product, or -1 when it does not fit in int64 (shapes that come from users).
  int64_t checked_num_elements() const;
  bool fully_known() const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

  // "[2,3]"; unknown dimensions print as "None" (as TensorFlow users read them).
  std::string to_string() const;

 private:
  void assign(const int64_t* dims, int rank);
  void copy_from(const Shape& other) {
    if (other.rank_ <= kInlineRank) {
      std::memcpy(inline_, other.inline_, sizeof inline_);
      heap_.clear();
      rank_ = other.rank_;
    } else {
      assign(other.data(), other.rank_);
    }
  }
  void move_from(Shape& other) noexcept {
    std::memcpy(inline_, other.inline_, sizeof inline_);
    rank_ = other.rank_;
    heap_ = std::move(other.heap_);
    if (rank_ > kInlineRank) other.rank_ = 0;
  }

  int rank_ = 0;
  int64_t inline_[kInlineRank] = {};
  std::vector<int64_t> heap_;
};

}  // namespace dinput
