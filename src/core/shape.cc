#include "core/shape.h"

#include <cstring>

namespace dinput {

Shape::Shape(std::initializer_list<int64_t> dims) {
  assign(dims.begin(), static_cast<int>(dims.size()));
}

Shape::Shape(const int64_t* dims, int rank) { assign(dims, rank); }

void Shape::assign(const int64_t* dims, int rank) {
  if (rank <= kInlineRank) {
    heap_.clear();
    if (rank > 0) std::memmove(inline_, dims, sizeof(int64_t) * rank);
  } else {
    heap_.assign(dims, dims + rank);
  }
  rank_ = rank;
}

void Shape::push_back(int64_t dim) {
  if (rank_ < kInlineRank) {
    inline_[rank_++] = dim;
    return;
  }
  if (rank_ == kInlineRank) heap_.assign(inline_, inline_ + kInlineRank);
  heap_.push_back(dim);
  ++rank_;
}

Shape Shape::prepend(int64_t dim) const {
  Shape out;
  out.push_back(dim);
  for (int i = 0; i < rank_; ++i) out.push_back((*this)[i]);
  return out;
}

Shape Shape::drop_first() const {
  if (rank_ == 0) return Shape();
  return Shape(data() + 1, rank_ - 1);
}

Shape Shape::with_first(int64_t dim) const {
  Shape out(*this);
  if (rank_ > 0) out[0] = dim;
  return out;
}

int64_t Shape::checked_num_elements() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i)
    if (__builtin_mul_overflow(n, (*this)[i], &n)) return -1;
  return n;
}

bool Shape::fully_known() const {
  for (int i = 0; i < rank_; ++i)
    if ((*this)[i] < 0) return false;
  return true;
}

bool Shape::operator==(const Shape& other) const {
  if (rank_ != other.rank_) return false;
  return rank_ == 0 || std::memcmp(data(), other.data(), sizeof(int64_t) * rank_) == 0;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ",";
    int64_t d = (*this)[i];
    s += d < 0 ? "None" : std::to_string(d);
  }
  return s + "]";
}

}  // namespace dinput
