// A dense tensor: dtype, shape and a view into a shared buffer. Tensors are immutable once
// handed out; slicing along the first dimension shares the buffer (zero-copy).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/buffer.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace dinput {

class Tensor {
 public:
  Tensor() = default;
  // Copies own a reference to the buffer, also copies of a lent view (below); moves keep what
  // the moved tensor had.
  Tensor(const Tensor& other)
      : dtype_(other.dtype_),
        shape_(other.shape_),
        buffer_(other.buffer()),
        offset_(other.offset_) {}
  Tensor(Tensor&& other) noexcept
      : dtype_(other.dtype_),
        shape_(std::move(other.shape_)),
        buffer_(std::move(other.buffer_)),
        offset_(other.offset_),
        lender_(std::exchange(other.lender_, nullptr)) {}
  Tensor& operator=(const Tensor& other) {
    if (this != &other) {
      std::shared_ptr<Buffer> owned = other.buffer();  // `other` may be lent by this tensor
      dtype_ = other.dtype_;
      shape_ = other.shape_;
      offset_ = other.offset_;
      lender_ = nullptr;
      buffer_ = std::move(owned);
    }
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      dtype_ = other.dtype_;
      shape_ = std::move(other.shape_);
      offset_ = other.offset_;
      if (other.lender_ == &buffer_) {
        // A view lent by this very tensor: it becomes this tensor, which keeps its reference.
        other.buffer_.reset();
        other.lender_ = nullptr;
      } else {
        buffer_ = std::move(other.buffer_);
        lender_ = std::exchange(other.lender_, nullptr);
      }
    }
    return *this;
  }

  // A lent view: the same dtype, shape and bytes as `owner`, holding no reference to the
  // buffer (no atomic count to take and drop). `owner` keeps the buffer alive for it, so the
  // view may be used only while `owner` lives, at the same address. A distributed step cuts
  // its pieces of one batch this way from the batch that its last piece holds, and hands all
  // of them out together (distribute/split.h). Copying a view gives an ordinary tensor with
  // its own reference, so whatever is taken out of a step outlives it safely.
  struct Lend {};
  Tensor(const Tensor& owner, Lend)
      : dtype_(owner.dtype_),
        shape_(owner.shape_),
        buffer_(std::shared_ptr<Buffer>(), owner.buffer_.get()),
        offset_(owner.offset_),
        lender_(owner.lender_ ? owner.lender_ : &owner.buffer_) {}
  // A lent view of rows [begin, end) of `owner`, whose row_stride() is `stride`: what the
  // view above followed by keep_rows(begin, end, stride) makes, without keep_rows' checks. The
  // caller has checked them: rank >= 1 and 0 <= begin <= end <= dim(0). A distributed step
  // makes one such view per replica and component.
  Tensor(const Tensor& owner, Lend, int64_t begin, int64_t end, size_t stride)
      : Tensor(owner, Lend{}) {
    shape_[0] = end - begin;
    offset_ += static_cast<size_t>(begin) * stride;
  }
  // Whether this tensor is a lent view.
  bool lent() const { return lender_ != nullptr; }

  // A fresh tensor to fill in (fixed-size dtypes: uninitialised bytes; bytes: empty strings).
  static Tensor allocate(DType dtype, const Shape& shape);
  static Tensor zeros(DType dtype, const Shape& shape);
  // Wraps an existing buffer; `offset` is in bytes (fixed-size dtypes) or strings (bytes).
  Tensor(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t offset)
      : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), offset_(offset) {}

  bool defined() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t num_elements() const { return shape_.num_elements(); }
  // Payload bytes: for bytes tensors, the sum of the string lengths.
  size_t byte_size() const;
  // Bytes of one row (the slice at a fixed first index) for fixed-size dtypes.
  size_t row_bytes() const;

  const void* data() const { return static_cast<const char*>(buffer_->data()) + offset_; }
  void* mutable_data() { return static_cast<char*>(buffer_->data()) + offset_; }
  template <typename T>
  const T* data_as() const {
    return static_cast<const T*>(data());
  }
  template <typename T>
  T* mutable_data_as() {
    return static_cast<T*>(mutable_data());
  }

  // Strings of a bytes tensor (row-major index).
  std::string_view string(int64_t i) const {
    return storage().at(offset_ + static_cast<size_t>(i)).view();
  }
  // Copies `s` in as string i of a tensor being built.
  void set_string(int64_t i, std::string_view s) {
    storage().set_copy(offset_ + static_cast<size_t>(i), s);
  }
  // Makes string i a view of bytes that `owner` keeps alive (no copy).
  void set_string_view(int64_t i, const char* data, size_t size,
                       const std::shared_ptr<const Buffer>& owner) {
    storage().set_view(offset_ + static_cast<size_t>(i), data, size, owner);
  }
  // Prefetches what set_string_from(_, *this, i) will read (a batch of rows drawn from a
  // shuffle finds each row's strings cold).
  void prefetch_string(int64_t i) const { storage().prefetch(offset_ + static_cast<size_t>(i)); }
  // Prefetches the bytes of string i (their first kPrefetchBytes), for a reader about to get
  // there.
  void prefetch_string_bytes(int64_t i) const {
    storage().prefetch_bytes(offset_ + static_cast<size_t>(i));
  }
  // Makes string i the same bytes as string j of `other` (no copy).
  void set_string_from(int64_t i, const Tensor& other, int64_t j) {
    storage().set_from(offset_ + static_cast<size_t>(i), other.storage(),
                       other.offset_ + static_cast<size_t>(j), other.buffer());
  }

  // Rows [begin, end) along the first dimension, sharing the buffer. Requires rank >= 1.
  // Inline, as keep_rows: a distributed step cuts one slice per replica and component.
  Tensor slice(int64_t begin, int64_t end) const {
    Tensor out(*this);
    out.keep_rows(begin, end);
    return out;
  }
  // Makes this tensor its own slice(begin, end), in place: no new reference to the buffer.
  // For a tensor not handed out yet (tensors are immutable once they are).
  void keep_rows(int64_t begin, int64_t end) { keep_rows(begin, end, row_stride()); }
  // The same, with the distance between rows given: row_stride() of this tensor, or of one
  // with the same dtype and dimensions after the first (computed once for many cuts).
  void keep_rows(int64_t begin, int64_t end, size_t stride) {
    if (rank() < 1 || begin < 0 || end < begin || end > shape_[0]) bad_slice(begin, end);
    shape_[0] = end - begin;
    offset_ += static_cast<size_t>(begin) * stride;
  }
  // The distance between consecutive rows in offset units: bytes, or strings for bytes.
  size_t row_stride() const {
    int64_t row_elems = 1;
    for (int i = 1; i < shape_.rank(); ++i) row_elems *= shape_[i];
    return dtype_ == DType::kBytes ? static_cast<size_t>(row_elems)
                                   : static_cast<size_t>(row_elems) * dtype_size(dtype_);
  }
  // Row i with the first dimension removed, sharing the buffer.
  Tensor row(int64_t i) const;
  // The same data seen with another shape of the same number of elements.
  Tensor reshaped(const Shape& shape) const { return Tensor(dtype_, shape, buffer(), offset_); }

  // The owning reference to the buffer (for a lent view, its owner's).
  const std::shared_ptr<Buffer>& buffer() const { return lender_ ? *lender_ : buffer_; }
  size_t offset() const { return offset_; }

  // Whether host code may read the bytes: false for a CUDA tensor, whose data() is a
  // device pointer (a distributed iterator hands such tensors out, and users pass them back).
  bool on_host() const { return !buffer_ || buffer_->kind() != MemoryKind::kDevice; }
  // Raises INVALID_ARGUMENT naming `what` unless on_host(). Host code that reads a tensor's
  // bytes calls it first: a CUDA tensor that got past the C API's copies to the host is then
  // an error, never a CPU read of a device pointer.
  void require_host(std::string_view what) const;

  // "int64[2,3]" — used in error messages.
  std::string describe() const;

 private:
  BytesStorage& storage() const { return *buffer_->bytes(); }
  // Raises INVALID_ARGUMENT for slice(begin, end) of this tensor.
  [[noreturn]] void bad_slice(int64_t begin, int64_t end) const;

  DType dtype_ = DType::kInvalid;
  Shape shape_;
  // The buffer; for a lent view, a pointer that holds no reference (no control block).
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
  // For a lent view: the owner's reference, which keeps the buffer alive; otherwise null.
  const std::shared_ptr<Buffer>* lender_ = nullptr;
};

}  // namespace dinput
