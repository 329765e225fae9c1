// A tensor shape (or a spec's partial shape, where a dimension may be kUnknownDim).
// Ranks up to kInlineRank live inline, so the common shapes cost no allocation: every
// element produced by a pipeline carries shapes, and allocation there is the hot path.
#pragma once

#include <cstdint>
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
  Shape(const Shape& other) { assign(other.data(), other.rank_); }
  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.data(), other.rank_);
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
  int64_t num_elements() const;
  // The product, or -1 when it does not fit in int64 (shapes that come from users).
  int64_t checked_num_elements() const;
  bool fully_known() const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

  // "[2,3]"; unknown dimensions print as "None" (as TensorFlow users read them).
  std::string to_string() const;

 private:
  void assign(const int64_t* dims, int rank);

  int rank_ = 0;
  int64_t inline_[kInlineRank] = {};
  std::vector<int64_t> heap_;
};

}  // namespace dinput
