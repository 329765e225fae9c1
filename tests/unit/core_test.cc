// White-box tests of src/core: dtypes, shapes, buffers, tensors (zero-copy slicing),
// stack/concat and element specs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "capi/build_info.h"
#include "core/buffer.h"
#include "core/compact.h"
#include "core/dtype.h"
#include "core/element.h"
#include "core/half.h"
#include "core/origin.h"
#include "core/quote.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/tensor_ops.h"

namespace dinput {
namespace {

Tensor int64_vector(const std::vector<int64_t>& values) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape{static_cast<int64_t>(values.size())});
  if (!values.empty())
    std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Tensor int64_matrix(int64_t rows, int64_t cols) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape{rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i) t.mutable_data_as<int64_t>()[i] = i;
  return t;
}

Tensor bytes_vector(const std::vector<std::string>& values) {
  Tensor t = Tensor::allocate(DType::kBytes, Shape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.set_string(static_cast<int64_t>(i), values[i]);
  return t;
}

std::vector<int64_t> values_of(const Tensor& t) {
  const int64_t* p = t.data_as<int64_t>();
  return std::vector<int64_t>(p, p + t.num_elements());
}

std::vector<std::string> strings_of(const Tensor& t) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.emplace_back(t.string(i));
  return out;
}

// Runs `fn`, which must throw dinput::Error, and returns it.
template <typename Fn>
Error error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a dinput::Error";
  return Error(Code::kOk, "");
}

// ---- status -------------------------------------------------------------------------

TEST(Status, CodeNamesMatchTheCanonicalNames) {
  const char* names[] = {"OK",
                         "CANCELLED",
                         "UNKNOWN",
                         "INVALID_ARGUMENT",
                         "DEADLINE_EXCEEDED",
                         "NOT_FOUND",
                         "ALREADY_EXISTS",
                         "PERMISSION_DENIED",
                         "RESOURCE_EXHAUSTED",
                         "FAILED_PRECONDITION",
                         "ABORTED",
                         "OUT_OF_RANGE",
                         "UNIMPLEMENTED",
                         "INTERNAL",
                         "UNAVAILABLE",
                         "DATA_LOSS",
                         "UNAUTHENTICATED"};
  for (int c = 0; c <= 16; ++c) EXPECT_STREQ(code_name(static_cast<Code>(c)), names[c]) << c;
  EXPECT_STREQ(code_name(static_cast<Code>(99)), "UNKNOWN_STATUS");
}

TEST(Status, RaiseThrowsErrorWithCodeAndConcatenatedMessage) {
  Error e = error_of([] { raise(Code::kNotFound, "file ", 3, " of ", std::string("x")); });
  EXPECT_EQ(e.code(), Code::kNotFound);
  EXPECT_STREQ(e.what(), "file 3 of x");
}

// ---- dtype --------------------------------------------------------------------------

// Issue 14 item 18: file names with newlines or terminal escapes were printed raw.
// The build info is JSON whatever a component's reason holds: quotes, backslashes and
// control characters are escaped (the earlier hand-written escaper dropped control
// characters), bytes that are not UTF-8 become U+FFFD.
TEST(BuildInfo, ReasonsAreEscapedNotDropped) {
  gpu::Availability cuda;
  cuda.reason = "no \"driver\"\\ here\nline two\t\x01\x1f";
  gpu::NcclAvailability nccl;
  nccl.reason = "bad byte \xff";
  const std::string text = capi::build_info_json(cuda, nccl);
  EXPECT_NE(text.find(R"("reason":"no \"driver\"\\ here\nline two\t\u0001\u001f")"),
            std::string::npos)
      << text;
  const nlohmann::json info = nlohmann::json::parse(text);
  EXPECT_EQ(info["cuda"]["reason"], cuda.reason);
  EXPECT_EQ(info["nccl"]["reason"], "bad byte \xef\xbf\xbd");
  EXPECT_TRUE(info["version"].is_string());
  EXPECT_EQ(text.rfind("{\"version\":", 0), 0u) << text;  // the members keep their order
  EXPECT_EQ(info["dlpack"]["compiled"], true);
  EXPECT_TRUE(info["isal"]["compiled"].is_boolean());
}

TEST(Quote, ControlBytesAreEscapedAndPrintableTextIsKept) {
  EXPECT_EQ(quoted("data/a.rec"), "'data/a.rec'");
  EXPECT_EQ(quoted("a\nb"), "'a\\nb'");
  EXPECT_EQ(quoted(std::string("x\ny\tz\r", 6)), "'x\\ny\\tz\\r'");
  EXPECT_EQ(quoted("\x1b[31mred"), "'\\x1b[31mred'");
  EXPECT_EQ(quoted(std::string("nul\0end", 7)), "'nul\\x00end'");
  EXPECT_EQ(quoted("it's"), "'it\\'s'");
  EXPECT_EQ(quoted("\x7f"), "'\\x7f'");
  EXPECT_EQ(quoted("caf\xc3\xa9"), "'caf\xc3\xa9'");  // UTF-8 kept
}

TEST(DType, NamesAndSizesRoundTrip) {
  struct Row {
    DType dtype;
    const char* name;
    size_t size;
  } rows[] = {{DType::kBool, "bool", 1},         {DType::kInt8, "int8", 1},
              {DType::kInt16, "int16", 2},       {DType::kInt32, "int32", 4},
              {DType::kInt64, "int64", 8},       {DType::kUInt8, "uint8", 1},
              {DType::kUInt16, "uint16", 2},     {DType::kUInt32, "uint32", 4},
              {DType::kUInt64, "uint64", 8},     {DType::kFloat16, "float16", 2},
              {DType::kBFloat16, "bfloat16", 2}, {DType::kFloat32, "float32", 4},
              {DType::kFloat64, "float64", 8},   {DType::kBytes, "bytes", 0}};
  for (const auto& r : rows) {
    EXPECT_TRUE(dtype_valid(r.dtype)) << r.name;
    EXPECT_STREQ(dtype_name(r.dtype), r.name);
    EXPECT_EQ(dtype_size(r.dtype), r.size) << r.name;
    EXPECT_EQ(dtype_from_name(r.name), r.dtype) << r.name;
  }
}

TEST(DType, InvalidValuesAreRejected) {
  EXPECT_FALSE(dtype_valid(DType::kInvalid));
  EXPECT_FALSE(dtype_valid(static_cast<DType>(15)));
  EXPECT_FALSE(dtype_valid(static_cast<DType>(-3)));
  EXPECT_STREQ(dtype_name(static_cast<DType>(42)), "invalid");
  EXPECT_EQ(dtype_size(static_cast<DType>(42)), 0u);
  EXPECT_EQ(dtype_size(static_cast<DType>(-3)), 0u);
  EXPECT_EQ(dtype_size(DType::kInvalid), 0u);
  EXPECT_EQ(dtype_from_name("float"), DType::kInvalid);
  EXPECT_EQ(dtype_from_name("INT64"), DType::kInvalid);  // names are exact, lower case
  EXPECT_EQ(dtype_from_name(""), DType::kInvalid);
}

// ---- shape --------------------------------------------------------------------------

TEST(Shape, BasicsAndToString) {
  Shape scalar;
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.num_elements(), 1);  // a scalar holds one value
  EXPECT_EQ(scalar.to_string(), "[]");
  Shape s{2, 3};
  EXPECT_EQ(s.rank(), 2);
  EXPECT_EQ(s.num_elements(), 6);
  EXPECT_EQ(s.to_string(), "[2,3]");
  EXPECT_TRUE(s.fully_known());
  Shape partial{kUnknownDim, 3};
  EXPECT_FALSE(partial.fully_known());
  EXPECT_EQ(partial.to_string(), "[None,3]");
  EXPECT_EQ((Shape{0, 5}).num_elements(), 0);
}

TEST(Shape, PrependDropFirstWithFirst) {
  Shape s{2, 3};
  EXPECT_EQ(s.prepend(4), (Shape{4, 2, 3}));
  EXPECT_EQ(s.drop_first(), (Shape{3}));
  EXPECT_EQ(s.with_first(7), (Shape{7, 3}));
  EXPECT_EQ(Shape().prepend(5), (Shape{5}));
  EXPECT_EQ(Shape().drop_first(), Shape());
  EXPECT_EQ(Shape().with_first(5), Shape());  // no first dimension to replace
  EXPECT_EQ(s, (Shape{2, 3}));                // the originals are untouched
}

TEST(Shape, EqualityComparesRankAndDims) {
  EXPECT_EQ((Shape{1, 2}), (Shape{1, 2}));
  EXPECT_NE((Shape{1, 2}), (Shape{2, 1}));
  EXPECT_NE((Shape{1}), (Shape{1, 1}));
  EXPECT_NE(Shape(), (Shape{1}));
  EXPECT_EQ(Shape(), Shape());
}

// Shapes longer than the inline capacity move to the heap; every operation must work the
// same on both sides of that boundary.
TEST(Shape, RanksBeyondInlineCapacity) {
  const int big = Shape::kInlineRank + 3;
  std::vector<int64_t> dims;
  for (int i = 0; i < big; ++i) dims.push_back(i + 1);
  Shape s(dims.data(), big);
  EXPECT_EQ(s.rank(), big);
  for (int i = 0; i < big; ++i) EXPECT_EQ(s[i], i + 1);

  Shape grown;
  for (int i = 0; i < big; ++i) grown.push_back(i + 1);  // crosses the boundary while growing
  EXPECT_EQ(grown, s);

  Shape copy = s;
  copy[big - 1] = 100;
  EXPECT_EQ(s[big - 1], big);  // deep copy, not shared storage
  Shape assigned{1};
  assigned = s;
  EXPECT_EQ(assigned, s);

  Shape dropped = s.drop_first();
  EXPECT_EQ(dropped.rank(), big - 1);
  EXPECT_EQ(dropped[0], 2);
  Shape prepended = s.prepend(0);
  EXPECT_EQ(prepended.rank(), big + 1);
  EXPECT_EQ(prepended[big], big);

  // Exactly at the boundary: kInlineRank dims inline, then prepend moves to the heap.
  Shape edge(dims.data(), Shape::kInlineRank);
  EXPECT_EQ(edge.prepend(9)[0], 9);
  EXPECT_EQ(edge.prepend(9)[Shape::kInlineRank], Shape::kInlineRank);
  EXPECT_EQ(s.num_elements(), 362880);  // 9!
}

// Moves are cheap (tensors move their shapes on every step) and noexcept (so vectors of
// tensors move rather than copy when they grow). A moved-from inline shape keeps its value;
// one of a higher rank is left empty, never pointing at storage it gave away.
TEST(Shape, MovesKeepTheValueOnBothSidesOfTheInlineBoundary) {
  static_assert(std::is_nothrow_move_constructible_v<Shape>);
  static_assert(std::is_nothrow_move_assignable_v<Shape>);
  static_assert(std::is_nothrow_move_constructible_v<Tensor>);
  Shape small{2, 3};
  Shape moved(std::move(small));
  EXPECT_EQ(moved, (Shape{2, 3}));
  EXPECT_EQ(small, (Shape{2, 3}));  // NOLINT(bugprone-use-after-move): inline moves copy

  const int big = Shape::kInlineRank + 2;
  std::vector<int64_t> dims;
  for (int i = 0; i < big; ++i) dims.push_back(i + 1);
  Shape large(dims.data(), big);
  Shape target{7};
  target = std::move(large);
  EXPECT_EQ(target, Shape(dims.data(), big));
  EXPECT_EQ(large.rank(), 0);  // NOLINT(bugprone-use-after-move)
  large = target;              // a moved-from shape takes a new value
  EXPECT_EQ(large, target);
  Shape back{1, 2, 3};
  back = std::move(target);  // heap into a shape that was inline
  EXPECT_EQ(back, large);
  target = Shape{4};  // and an inline one into a moved-from shape
  EXPECT_EQ(target, (Shape{4}));
  Shape self = back;
  Shape& alias = self;
  self = std::move(alias);
  EXPECT_EQ(self, back);
}

// Element counts that do not fit in int64 must be detected, never wrapped: a wrapped count
// would put a tiny buffer behind a huge shape.
TEST(Shape, CheckedNumElementsDetectsOverflow) {
  EXPECT_EQ((Shape{3, 4}).checked_num_elements(), 12);
  EXPECT_EQ(Shape().checked_num_elements(), 1);
  EXPECT_EQ((Shape{INT64_MAX}).checked_num_elements(), INT64_MAX);
  EXPECT_EQ((Shape{0, INT64_MAX, INT64_MAX}).checked_num_elements(), 0);
  EXPECT_LT((Shape{int64_t{1} << 32, int64_t{1} << 32}).checked_num_elements(), 0);
  EXPECT_LT((Shape{INT64_MAX, 2}).checked_num_elements(), 0);
}

// ---- buffer -------------------------------------------------------------------------

TEST(Buffer, HostBuffersAre64ByteAlignedAndSized) {
  // Small blocks are aligned by hand inside a larger malloc'd one, large ones by
  // aligned_alloc (or the cache): both sides of kMinCached (512 KiB). Every byte is written,
  // so that a sanitizer build sees any block smaller than asked.
  for (size_t n :
       {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}, size_t{2048},
        size_t{4097}, (size_t{512} << 10) - 1, size_t{512} << 10, (size_t{512} << 10) + 1}) {
    auto b = allocate_host(n);
    ASSERT_NE(b->data(), nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 64, 0u) << n;
    std::memset(b->data(), 0xab, n);
    EXPECT_EQ(b->size(), n);
    EXPECT_EQ(b->kind(), MemoryKind::kHost);
    EXPECT_EQ(b->device(), -1);
    EXPECT_EQ(b->bytes(), nullptr);
  }
}

TEST(Buffer, EmptyBuffersStillHaveDistinctPointers) {
  auto a = allocate_host(0);
  auto b = allocate_host(0);
  EXPECT_NE(a->data(), b->data());
}

TEST(Buffer, ZeroedAllocation) {
  auto b = allocate_host(200, /*zero=*/true);
  const unsigned char* p = static_cast<const unsigned char*>(b->data());
  for (size_t i = 0; i < 200; ++i) ASSERT_EQ(p[i], 0) << i;
}

#if defined(__SANITIZE_ADDRESS__)
#define DINPUT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DINPUT_TEST_ASAN 1
#endif
#endif

TEST(Buffer, LargeFreedBlocksAreReusedForTheSameSize) {
#ifdef DINPUT_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer builds keep no freed block";
#endif
  constexpr size_t kBig = size_t{3} << 20;
  void* first = nullptr;
  {
    auto b = allocate_host(kBig);
    first = b->data();
    std::memset(first, 0xAB, kBig);
  }
  {
    // A size of the same class (2.8 MiB rounds up to 3 MiB) gets the block back, zeroed
    // when asked, whatever it held.
    auto b = allocate_host(kBig - (size_t{200} << 10), /*zero=*/true);
    EXPECT_EQ(b->data(), first);
    EXPECT_EQ(b->size(), kBig - (size_t{200} << 10));
    const unsigned char* p = static_cast<const unsigned char*>(b->data());
    for (size_t i = 0; i < kBig - (size_t{200} << 10); i += 4093) ASSERT_EQ(p[i], 0) << i;
    // While it is held, another request of that size gets another block.
    auto c = allocate_host(kBig);
    EXPECT_NE(c->data(), first);
  }
  // A size of another class does not take the kept block (3 MiB is in the class of
  // 2 MiB + k * 256 KiB; 3.5 MiB is the next but one).
  auto other = allocate_host(kBig + (size_t{384} << 10));
  EXPECT_NE(other->data(), first);
  auto again = allocate_host(kBig);
  EXPECT_EQ(again->data(), first);
}

TEST(Buffer, TheKeptBlocksAreBounded) {
#ifdef DINPUT_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer builds keep no freed block";
#endif
  // 40 blocks of 8 MiB freed together: 8 of them are kept (at most 8 of one size).
  constexpr size_t kSize = size_t{8} << 20, kOther = size_t{20} << 20;
  std::vector<std::shared_ptr<Buffer>> held;
  const size_t before = kept_host_bytes();
  for (int i = 0; i < 40; ++i) held.push_back(allocate_host(kSize));
  held.clear();
  EXPECT_EQ(kept_host_bytes(), before + 8 * kSize);
  // Blocks of another size push out the oldest ones, and never more than 128 MiB are kept.
  for (int i = 0; i < 5; ++i) held.push_back(allocate_host(kOther));
  held.clear();
  EXPECT_LE(kept_host_bytes(), size_t{128} << 20);
  EXPECT_GE(kept_host_bytes(), 5 * kOther);
  // Taking them back empties the cache of those sizes.
  for (int i = 0; i < 8; ++i) held.push_back(allocate_host(kSize));
  for (int i = 0; i < 5; ++i) held.push_back(allocate_host(kOther));
  EXPECT_LE(kept_host_bytes(), before);
}

TEST(Buffer, StringStorageStartsWithEmptyStrings) {
  auto b = allocate_strings(3);
  ASSERT_NE(b->bytes(), nullptr);
  EXPECT_EQ(b->bytes()->count(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(b->bytes()->at(i).view().empty());
}

// A storage keeps each buffer its strings view once, however many strings view it and in
// whatever order they come: past a few owners it finds them through an index, which must
// neither lose one nor add one twice as it grows.
TEST(Buffer, StringStorageKeepsEachOwnerOnce) {
  constexpr size_t kOwners = 300;
  std::vector<std::shared_ptr<Buffer>> chunks;
  for (size_t i = 0; i < kOwners; ++i) chunks.push_back(allocate_host(64));
  const size_t n = 3 * kOwners;
  auto b = allocate_strings(n);
  for (size_t i = 0; i < n; ++i) {
    // Every owner three times, the later two in a scattered order.
    const size_t k = i < kOwners ? i : (i * 7919) % kOwners;
    const auto& chunk = chunks[k];
    b->bytes()->set_view(i, static_cast<const char*>(chunk->data()), 1 + k % 64, chunk);
  }
  const auto& owners = b->bytes()->owners();
  ASSERT_EQ(owners.size(), kOwners);
  for (size_t i = 0; i < kOwners; ++i) {
    EXPECT_EQ(owners[i], chunks[i]) << i;      // in the order first seen
    EXPECT_EQ(chunks[i].use_count(), 2) << i;  // this test's list and the storage
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t k = i < kOwners ? i : (i * 7919) % kOwners;
    ASSERT_EQ(b->bytes()->at(i).data, chunks[k]->data()) << i;
  }
  // A batch of those strings keeps the same owners, once each.
  auto batch = allocate_strings(n);
  for (size_t i = 0; i < n; ++i) batch->bytes()->set_from(n - 1 - i, *b->bytes(), i, b);
  EXPECT_EQ(batch->bytes()->owners().size(), kOwners);
  for (size_t i = 0; i < kOwners; ++i) EXPECT_EQ(chunks[i].use_count(), 3) << i;
  b.reset();  // the batch alone keeps them now
  for (size_t i = 0; i < kOwners; ++i) EXPECT_EQ(chunks[i].use_count(), 2) << i;
}

// Copied strings live in the storage's arena: many small ones and one larger than an arena
// chunk must all keep their contents as more are added.
TEST(Buffer, StringStorageCopiesIntoItsArena) {
  const size_t n = 500;
  auto b = allocate_strings(n);
  std::string big(10000, 'b');
  for (size_t i = 0; i < n; ++i) {
    std::string s = i == 250 ? big : std::to_string(i) + std::string(i % 13, 'x');
    b->bytes()->set_copy(i, s);
  }
  for (size_t i = 0; i < n; ++i) {
    std::string expected = i == 250 ? big : std::to_string(i) + std::string(i % 13, 'x');
    ASSERT_EQ(b->bytes()->at(i).view(), expected) << i;
  }
}

// ---- tensor -------------------------------------------------------------------------

TEST(Tensor, AllocateAndDescribe) {
  Tensor t = Tensor::allocate(DType::kFloat32, Shape{2, 3});
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.num_elements(), 6);
  EXPECT_EQ(t.byte_size(), 24u);
  EXPECT_EQ(t.row_bytes(), 12u);
  EXPECT_EQ(t.describe(), "float32[2,3]");
  EXPECT_FALSE(Tensor().defined());
  EXPECT_EQ(Tensor().byte_size(), 0u);
  Tensor scalar = Tensor::allocate(DType::kInt16, Shape());
  EXPECT_EQ(scalar.byte_size(), 2u);
  EXPECT_EQ(scalar.row_bytes(), 2u);
}

TEST(Tensor, ZerosAreZero) {
  Tensor t = Tensor::zeros(DType::kInt64, Shape{5});
  EXPECT_EQ(values_of(t), std::vector<int64_t>(5, 0));
  Tensor b = Tensor::zeros(DType::kBytes, Shape{2});
  EXPECT_EQ(strings_of(b), (std::vector<std::string>{"", ""}));
}

TEST(Tensor, AllocateRejectsNegativeDimsAndInvalidDtype) {
  Error e = error_of([] { Tensor::allocate(DType::kInt32, Shape{2, -3}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("dimension 1"), std::string::npos) << e.what();
  EXPECT_EQ(error_of([] { Tensor::allocate(DType::kInvalid, Shape{1}); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([] { Tensor::zeros(DType::kInt8, Shape{-1}); }).code(),
            Code::kInvalidArgument);
}

TEST(Tensor, SizesBeyondWhatCanBeAddressedAreRejected) {
  // 2^61 int64 values are 2^64 bytes: the element count fits, the byte count does not.
  for (Shape s : {Shape{int64_t{1} << 61}, Shape{int64_t{1} << 32, int64_t{1} << 32}}) {
    Error e = error_of([&] { Tensor::allocate(DType::kInt64, s); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << s.to_string();
    EXPECT_EQ(error_of([&] { Tensor::zeros(DType::kInt64, s); }).code(), Code::kInvalidArgument)
        << s.to_string();
  }
  EXPECT_EQ(error_of([] {
              Tensor::allocate(DType::kBytes, Shape{INT64_MAX, 4});
            }).code(),
            Code::kInvalidArgument);
}

TEST(Tensor, BytesPayloadIsTheSumOfStringLengths) {
  Tensor t = bytes_vector({"ab", "", "cde"});
  EXPECT_EQ(t.byte_size(), 5u);
  EXPECT_EQ(t.string(2), "cde");
}

// Slicing along the first dimension must be a view of the same buffer (zero-copy): the
// distributed split relies on it.
TEST(Tensor, SliceSharesTheBuffer) {
  Tensor m = int64_matrix(4, 3);
  Tensor s = m.slice(1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  EXPECT_EQ(s.buffer(), m.buffer());
  EXPECT_EQ(s.data(), static_cast<const char*>(m.data()) + 3 * sizeof(int64_t));
  EXPECT_EQ(values_of(s), (std::vector<int64_t>{3, 4, 5, 6, 7, 8}));

  Tensor empty = m.slice(4, 4);
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  EXPECT_EQ(empty.byte_size(), 0u);

  Tensor nested = s.slice(1, 2);  // a slice of a slice keeps the accumulated offset
  EXPECT_EQ(nested.buffer(), m.buffer());
  EXPECT_EQ(values_of(nested), (std::vector<int64_t>{6, 7, 8}));
}

TEST(Tensor, RowSharesTheBufferAndDropsTheFirstDim) {
  Tensor m = int64_matrix(3, 2);
  Tensor r = m.row(2);
  EXPECT_EQ(r.shape(), (Shape{2}));
  EXPECT_EQ(r.buffer(), m.buffer());
  EXPECT_EQ(r.data(), static_cast<const char*>(m.data()) + 4 * sizeof(int64_t));
  EXPECT_EQ(values_of(r), (std::vector<int64_t>{4, 5}));

  Tensor v = int64_vector({10, 20, 30});
  Tensor s = v.row(1);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(*s.data_as<int64_t>(), 20);
  EXPECT_EQ(s.buffer(), v.buffer());
}

TEST(Tensor, BytesSliceAndRowShareTheStrings) {
  Tensor t = bytes_vector({"a", "bb", "ccc", "dddd"});
  Tensor s = t.slice(1, 3);
  EXPECT_EQ(s.buffer(), t.buffer());
  EXPECT_EQ(strings_of(s), (std::vector<std::string>{"bb", "ccc"}));
  EXPECT_EQ(s.byte_size(), 5u);
  Tensor r = s.row(1);
  EXPECT_EQ(r.rank(), 0);
  EXPECT_EQ(r.string(0), "ccc");
  EXPECT_EQ(r.buffer(), t.buffer());
}

// keep_rows is slice in place: the same rows and offset, no new reference to the buffer, and
// the same bounds checks (a failed call leaves the tensor as it was).
TEST(Tensor, KeepRowsNarrowsInPlace) {
  Tensor m = int64_matrix(4, 3);
  Tensor t = m;
  const long refs = m.buffer().use_count();
  t.keep_rows(1, 3);
  EXPECT_EQ(m.buffer().use_count(), refs);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.data(), m.slice(1, 3).data());
  EXPECT_EQ(values_of(t), (std::vector<int64_t>{3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(error_of([&] { t.keep_rows(1, 3); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(values_of(t), (std::vector<int64_t>{3, 4, 5, 6, 7, 8}));
  t.keep_rows(1, 2);
  EXPECT_EQ(values_of(t), (std::vector<int64_t>{6, 7, 8}));
  EXPECT_EQ(values_of(m).size(), 12u);  // the tensor it was copied from is untouched
}

// A lent view reads its owner's bytes without a reference of its own; every copy made from
// it (also a slice, row or reshape of it) owns one, and so outlives the owner.
TEST(Tensor, LentViewsTakeNoReferenceAndTheirCopiesOwnOne) {
  Tensor owner = int64_matrix(4, 3);
  const long refs = owner.buffer().use_count();
  Tensor view(owner, Tensor::Lend{});
  view.keep_rows(1, 3);
  EXPECT_TRUE(view.lent());
  EXPECT_FALSE(owner.lent());
  EXPECT_EQ(owner.buffer().use_count(), refs);
  EXPECT_EQ(view.buffer(), owner.buffer());  // the owner's reference
  EXPECT_EQ(values_of(view), (std::vector<int64_t>{3, 4, 5, 6, 7, 8}));
  Tensor again(view, Tensor::Lend{});  // a view of a view is lent by the same owner
  EXPECT_EQ(owner.buffer().use_count(), refs);

  Tensor moved = std::move(again);  // moves keep what the moved tensor had
  EXPECT_TRUE(moved.lent());
  EXPECT_FALSE(again.lent());
  EXPECT_FALSE(again.defined());
  EXPECT_EQ(owner.buffer().use_count(), refs);

  Tensor copy = view;
  Tensor assigned;
  assigned = moved;
  Tensor sliced = view.slice(1, 2), row = view.row(0), reshaped = view.reshaped(Shape{3, 2});
  for (const Tensor* t : {&copy, &assigned, &sliced, &row, &reshaped}) EXPECT_FALSE(t->lent());
  EXPECT_EQ(owner.buffer().use_count(), refs + 5);
  owner = Tensor();  // the owner goes: only the copies hold the buffer now
  view = Tensor();
  moved = Tensor();
  EXPECT_EQ(copy.buffer().use_count(), 5);
  EXPECT_EQ(values_of(copy), (std::vector<int64_t>{3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(values_of(sliced), (std::vector<int64_t>{6, 7, 8}));
  EXPECT_EQ(values_of(row), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(reshaped.shape(), (Shape{3, 2}));
}

// A view moved into the tensor that lent it leaves that tensor owning its reference.
TEST(Tensor, AViewMovedIntoItsOwnerLeavesItOwning) {
  Tensor owner = int64_matrix(2, 2);
  const long refs = owner.buffer().use_count();
  Tensor view(owner, Tensor::Lend{});
  view.keep_rows(1, 2);
  owner = std::move(view);
  EXPECT_FALSE(owner.lent());
  EXPECT_EQ(owner.buffer().use_count(), refs);
  EXPECT_EQ(values_of(owner), (std::vector<int64_t>{2, 3}));
  Tensor copy = owner;
  owner = Tensor();
  EXPECT_EQ(copy.buffer().use_count(), 1);
  EXPECT_EQ(values_of(copy), (std::vector<int64_t>{2, 3}));
}

TEST(Tensor, SliceBoundsAreChecked) {
  Tensor v = int64_vector({1, 2, 3});
  for (auto [b, e] : std::vector<std::pair<int64_t, int64_t>>{{-1, 1}, {2, 1}, {0, 4}, {4, 4}}) {
    const int64_t begin = b, end = e;  // C++17 lambdas cannot capture structured bindings (clang)
    Error err = error_of([&] { v.slice(begin, end); });
    EXPECT_EQ(err.code(), Code::kInvalidArgument) << b << "," << e;
  }
  EXPECT_EQ(error_of([&] { v.row(3); }).code(), Code::kInvalidArgument);
  Tensor scalar = Tensor::allocate(DType::kInt64, Shape());
  EXPECT_EQ(error_of([&] { scalar.slice(0, 0); }).code(), Code::kInvalidArgument);
}

TEST(Tensor, ReshapedSharesTheBuffer) {
  Tensor m = int64_matrix(2, 3);
  Tensor r = m.reshaped(Shape{3, 2});
  EXPECT_EQ(r.data(), m.data());
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
}

// ---- stack / concat / empty_rows ----------------------------------------------------

TEST(TensorOps, StackBuildsANewLeadingDimension) {
  Tensor out = stack({int64_vector({1, 2}), int64_vector({3, 4}), int64_vector({5, 6})}, 0);
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(out), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(TensorOps, StackOfConsecutiveSlicesOfOneBufferIsAView) {
  Tensor whole = Tensor::allocate(DType::kInt32, Shape{4, 3});
  for (int i = 0; i < 12; ++i) whole.mutable_data_as<int32_t>()[i] = i;
  // Rows 1..3 in order: a view of the buffer from row 1, nothing copied.
  Tensor view = stack({whole.row(1), whole.row(2), whole.row(3)}, 0);
  EXPECT_EQ(view.shape(), (Shape{3, 3}));
  EXPECT_EQ(view.buffer(), whole.buffer());
  EXPECT_EQ(view.data(), whole.row(1).data());
  EXPECT_EQ(view.data_as<int32_t>()[8], 11);
  // Out of order, repeated, or a single row: a copy with the same values.
  Tensor swapped = stack({whole.row(2), whole.row(1)}, 0);
  EXPECT_NE(swapped.buffer(), whole.buffer());
  EXPECT_EQ(swapped.data_as<int32_t>()[0], 6);
  EXPECT_EQ(swapped.data_as<int32_t>()[3], 3);
  EXPECT_NE(stack({whole.row(0), whole.row(0)}, 0).buffer(), whole.buffer());
  EXPECT_NE(stack({whole.row(0)}, 0).buffer(), whole.buffer());
  // Slices of two buffers that happen to be adjacent in memory are copied too.
  Tensor other = Tensor::allocate(DType::kInt32, Shape{1, 3});
  EXPECT_NE(stack({whole.row(3), other.row(0)}, 0).buffer(), whole.buffer());
}

TEST(TensorOps, StackScalarsAndBytes) {
  Tensor a = int64_vector({7, 8}).row(0), b = int64_vector({7, 8}).row(1);
  Tensor out = stack({a, b}, 0);
  EXPECT_EQ(out.shape(), (Shape{2}));
  EXPECT_EQ(values_of(out), (std::vector<int64_t>{7, 8}));

  Tensor x = bytes_vector({"x", "yy"});
  Tensor s = stack({x, bytes_vector({"", "zzz"})}, 1);
  EXPECT_EQ(s.dtype(), DType::kBytes);
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(strings_of(s), (std::vector<std::string>{"x", "yy", "", "zzz"}));
  // Stacking copies: the result owns new storage, so the inputs may go away.
  EXPECT_NE(s.buffer(), x.buffer());
}

// Batching bytes copies the string views, not the bytes, and the result keeps the bytes
// alive after the inputs are gone (the sanitizer build checks the reads below).
TEST(TensorOps, StackAndConcatOfBytesShareTheStringsAndKeepThemAlive) {
  Tensor a = bytes_vector({"first string", "second"});
  Tensor b = bytes_vector({"third one here", ""});
  const char* a0 = a.string(0).data();
  const char* b0 = b.string(0).data();
  Tensor stacked = stack({a, b}, 0);
  Tensor joined = concat({a.slice(1, 2), b});
  EXPECT_EQ(stacked.string(0).data(), a0);
  EXPECT_EQ(stacked.string(2).data(), b0);
  EXPECT_EQ(joined.string(1).data(), b0);
  // A batch of rows of a batch: the views are followed back to the original bytes.
  Tensor again = stack({stacked.row(1), stacked.row(0)}, 0);
  EXPECT_EQ(again.string(2).data(), a0);
  a = Tensor();
  b = Tensor();
  stacked = Tensor();
  EXPECT_EQ(strings_of(joined), (std::vector<std::string>{"second", "third one here", ""}));
  EXPECT_EQ(strings_of(again),
            (std::vector<std::string>{"third one here", "", "first string", "second"}));
}

TEST(TensorOps, StackShapeMismatchNamesBothShapesAndTheComponent) {
  Error e = error_of([] { stack({int64_vector({1, 2}), int64_vector({1, 2, 3})}, 4); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  std::string msg = e.what();
  EXPECT_NE(msg.find("int64[2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int64[3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("component 4"), std::string::npos) << msg;
}

TEST(TensorOps, StackDtypeMismatchIsRejected) {
  Tensor f = Tensor::zeros(DType::kFloat32, Shape{2});
  Error e = error_of([&] { stack({int64_vector({1, 2}), f}, 0); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("float32[2]"), std::string::npos) << e.what();
}

TEST(TensorOps, ConcatJoinsRows) {
  Tensor out =
      concat({int64_matrix(2, 2), int64_matrix(1, 2).slice(0, 1), int64_matrix(3, 2).slice(1, 3)});
  EXPECT_EQ(out.shape(), (Shape{5, 2}));
  EXPECT_EQ(values_of(out), (std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3, 4, 5}));
}

TEST(TensorOps, ConcatOfOnePartIsZeroCopy) {
  Tensor m = int64_matrix(2, 2);
  Tensor out = concat({m});
  EXPECT_EQ(out.data(), m.data());
}

TEST(TensorOps, ConcatBytesAndEmptyParts) {
  Tensor out = concat({bytes_vector({"a"}), bytes_vector({}), bytes_vector({"b", "c"})});
  EXPECT_EQ(strings_of(out), (std::vector<std::string>{"a", "b", "c"}));
  Tensor ints = concat({int64_vector({}), int64_vector({4})});
  EXPECT_EQ(values_of(ints), (std::vector<int64_t>{4}));
}

TEST(TensorOps, ConcatMismatchNamesBothTensors) {
  Error e = error_of([] { concat({int64_matrix(2, 2), int64_matrix(2, 3)}); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  std::string msg = e.what();
  EXPECT_NE(msg.find("int64[2,2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int64[2,3]"), std::string::npos) << msg;
  EXPECT_EQ(error_of([] {
              concat({int64_vector({1}), Tensor::zeros(DType::kInt32, Shape{1})});
            }).code(),
            Code::kInvalidArgument);
}

// The dummy batch of a replica without data: (None,3) and (4,3) both become (0,3); a
// scalar spec becomes a scalar 0, which the distributed iterator refuses to hand out
// (docs/semantics.md, "Partial batches and the end of data").
TEST(TensorOps, EmptyRows) {
  Tensor a = empty_rows(DType::kFloat32, Shape{kUnknownDim, 3});
  EXPECT_EQ(a.shape(), (Shape{0, 3}));
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_EQ(empty_rows(DType::kInt64, Shape{4, 3}).shape(), (Shape{0, 3}));
  EXPECT_EQ(empty_rows(DType::kInt64, Shape{4, kUnknownDim}).shape(), (Shape{0, 0}));
  Tensor s = empty_rows(DType::kInt32, Shape());
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(*s.data_as<int32_t>(), 0);
  EXPECT_EQ(empty_rows(DType::kBytes, Shape{kUnknownDim}).shape(), (Shape{0}));
}

// ---- float16 / bfloat16 ------------------------------------------------------------

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);  // the largest finite half
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(float_to_half(INFINITY), 0x7c00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // the smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);  // underflows to zero
  // Round to nearest even at a tie: 2049 lies between 2048 and 2050 (spacing 2).
  EXPECT_EQ(half_to_float(float_to_half(2049.0f)), 2048.0f);
  EXPECT_EQ(half_to_float(float_to_half(2051.0f)), 2052.0f);
  EXPECT_EQ(half_to_float(float_to_half(2049.5f)), 2050.0f);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  EXPECT_EQ(half_to_float(0x7c00), INFINITY);
  EXPECT_EQ(half_to_float(0xfc00), -INFINITY);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);  // (1 + 341/1024) * 2^-2
}

// Every half value converts to float and back to itself (NaNs stay NaN).
TEST(Half, EveryValueRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_EQ(h & 0x7c00, 0x7c00u) << h;
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << h;
      continue;
    }
    ASSERT_EQ(float_to_half(f), h) << "half 0x" << std::hex << h << " -> " << f;
  }
}

TEST(BFloat16, KnownValuesAndRounding) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(-1.0f), 0xbf80);
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16_to_float(0x4049), 3.140625f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -7)), 0x3f81);
  EXPECT_EQ(float_to_bfloat16(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(NAN))));
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    float f = bfloat16_to_float(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      ASSERT_EQ(float_to_bfloat16(f), b) << b;
    }
  }
}

// ---- element specs ------------------------------------------------------------------

TEST(ElementSpec, SpecOfAndToString) {
  Element e{int64_vector({1, 2}), Tensor::zeros(DType::kFloat32, Shape{4, 1})};
  ElementSpec spec = spec_of(e);
  ASSERT_EQ(spec.size(), 2u);
  EXPECT_EQ(spec[0], (TensorSpec{DType::kInt64, Shape{2}}));
  EXPECT_EQ(to_string(spec), "(int64[2], float32[4,1])");
  EXPECT_EQ(describe(e), "(int64[2], float32[4,1])");
  EXPECT_EQ(to_string(ElementSpec{{DType::kInt64, Shape{kUnknownDim}}}), "(int64[None])");
  EXPECT_EQ(to_string(ElementSpec{}), "()");
}

TEST(ElementSpec, Compatibility) {
  Tensor t = int64_matrix(2, 3);
  EXPECT_TRUE(is_compatible({DType::kInt64, Shape{2, 3}}, t));
  EXPECT_TRUE(is_compatible({DType::kInt64, Shape{kUnknownDim, 3}}, t));
  EXPECT_TRUE(is_compatible({DType::kInt64, Shape{kUnknownDim, kUnknownDim}}, t));
  EXPECT_FALSE(is_compatible({DType::kInt64, Shape{3, 3}}, t));               // known dim differs
  EXPECT_FALSE(is_compatible({DType::kInt64, Shape{kUnknownDim}}, t));        // rank differs
  EXPECT_FALSE(is_compatible({DType::kInt32, Shape{2, 3}}, t));               // dtype differs
  EXPECT_FALSE(is_compatible({DType::kInt64, Shape{2, 3, kUnknownDim}}, t));  // rank differs
}

TEST(ElementSpec, CheckMatchesNamesWhatComponentAndSpecs) {
  ElementSpec spec{{DType::kInt64, Shape{kUnknownDim}}, {DType::kFloat32, Shape{}}};
  Element good{int64_vector({1, 2, 3}), Tensor::zeros(DType::kFloat32, Shape{})};
  EXPECT_NO_THROW(check_matches(spec, good, "the producer"));

  Element bad{int64_vector({1}), Tensor::zeros(DType::kFloat64, Shape{})};
  Error e = error_of([&] { check_matches(spec, bad, "the producer"); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  std::string msg = e.what();
  EXPECT_NE(msg.find("the producer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("component 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float64[]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32[]"), std::string::npos) << msg;

  Element short_element{int64_vector({1})};
  Error count = error_of([&] { check_matches(spec, short_element, "gen"); });
  EXPECT_EQ(count.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(count.what()).find("1 component"), std::string::npos) << count.what();
}

TEST(ElementSpec, MergeMakesDifferingDimsUnknown) {
  ElementSpec a{{DType::kInt64, Shape{4, 3}}, {DType::kBytes, Shape{}}};
  ElementSpec b{{DType::kInt64, Shape{2, 3}}, {DType::kBytes, Shape{}}};
  ElementSpec m = merge_specs(a, b);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], (TensorSpec{DType::kInt64, Shape{kUnknownDim, 3}}));
  EXPECT_EQ(m[1], (TensorSpec{DType::kBytes, Shape{}}));
  EXPECT_EQ(merge_specs(a, a), a);
  // Merging is symmetric in the dimensions it forgets.
  EXPECT_EQ(merge_specs(b, a), m);
}

// ---- compact_elements (core/compact.h) -------------------------------------------------

// A reader's buffer of `size` bytes holding 'a', 'b', ... in turn, which says it holds bytes
// [offset, offset + size) of `path`, after 12 bytes of framing per record.
std::shared_ptr<Buffer> read_buffer(size_t size, const std::string& path, uint64_t offset) {
  std::shared_ptr<Buffer> b = allocate_host(size);
  for (size_t i = 0; i < size; ++i)
    static_cast<char*>(b->data())[i] = static_cast<char>('a' + i % 26);
  auto origin = std::make_shared<ByteOrigin>();
  origin->path = std::make_shared<const std::string>(path);
  origin->header_bytes = 12;
  origin->anchor = static_cast<const char*>(b->data());
  origin->offset = offset;
  b->set_origin(std::move(origin));
  return b;
}

// A bytes tensor of `shape` whose strings view `buffer` at the given (offset, size) pairs.
Tensor view_of(const std::shared_ptr<Buffer>& buffer, const Shape& shape,
               const std::vector<std::pair<size_t, size_t>>& at) {
  Tensor t = Tensor::allocate(DType::kBytes, shape);
  const char* base = static_cast<const char*>(buffer->data());
  for (size_t i = 0; i < at.size(); ++i)
    t.set_string_view(static_cast<int64_t>(i), base + at[i].first, at[i].second, buffer);
  return t;
}

std::vector<std::string> strings_and_origins(const Tensor& t) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out.emplace_back(t.string(i));
    out.push_back(describe_origin(t, i));
  }
  return out;
}

TEST(Compact, CopiesRecordsOutOfTheirReadBufferAndKeepsTheirOrigins) {
  std::shared_ptr<Buffer> chunk = read_buffer(64 << 10, "data-7.tfrecord", 1000);
  std::weak_ptr<Buffer> watch = chunk;
  Element a{view_of(chunk, Shape(), {{112, 100}})};
  Element b{view_of(chunk, Shape(), {{5000, 300}}), view_of(chunk, Shape(), {{9000, 200}})};
  const auto before_a = strings_and_origins(a[0]);
  const auto before_b0 = strings_and_origins(b[0]);
  const auto before_b1 = strings_and_origins(b[1]);
  ASSERT_EQ(before_a[1], " from 'data-7.tfrecord' at byte offset 1100");
  chunk.reset();

  EXPECT_EQ(compact_elements({&a, &b}, size_t{1} << 20), 600u);
  EXPECT_TRUE(watch.expired()) << "the copies still keep the read buffer alive";
  EXPECT_EQ(strings_and_origins(a[0]), before_a);
  EXPECT_EQ(strings_and_origins(b[0]), before_b0);
  EXPECT_EQ(strings_and_origins(b[1]), before_b1);
  // One storage and one buffer of copies for the whole call.
  EXPECT_EQ(a[0].buffer(), b[1].buffer());
  // A copy holds only its copies: a second call has nothing to do.
  EXPECT_EQ(compact_elements({&a, &b}, size_t{1} << 20), 0u);
  EXPECT_EQ(strings_and_origins(b[0]), before_b0);
}

TEST(Compact, CopiesEveryStringOfAVectorEmptyOnesIncluded) {
  std::shared_ptr<Buffer> chunk = read_buffer(64 << 10, "v.tfrecord", 0);
  Element e{view_of(chunk, Shape{4}, {{100, 0}, {200, 7}, {300, 0}, {400, 9}})};
  const auto before = strings_and_origins(e[0]);
  EXPECT_EQ(compact_elements({&e}, size_t{1} << 20), 16u);
  EXPECT_EQ(e[0].shape(), Shape{4});
  EXPECT_EQ(strings_and_origins(e[0]), before);
  // The empty strings name their own offsets, not their neighbours'.
  EXPECT_EQ(before[1], " from 'v.tfrecord' at byte offset 88");
  EXPECT_EQ(before[5], " from 'v.tfrecord' at byte offset 288");
}

TEST(Compact, LeavesViewsThatPinLittleOrTooMuchAndFileMappings) {
  std::shared_ptr<Buffer> chunk = read_buffer(64 << 10, "x.tfrecord", 0);
  // 8 KiB of a 64 KiB buffer: a ratio of 8, below kCompactMinRatio.
  Element big{view_of(chunk, Shape(), {{0, 8 << 10}})};
  // 100 bytes of it: a ratio of 655, above the caller's limit of 600.
  Element small{view_of(chunk, Shape(), {{0, 100}})};
  const void* before = small[0].string(0).data();
  EXPECT_EQ(compact_elements({&big, &small}, 600), 0u);
  EXPECT_EQ(small[0].string(0).data(), before);
  EXPECT_EQ(big[0].buffer()->bytes()->owners().at(0), chunk);

  // A mapping of a file costs no memory of the process's own.
  class Mapping final : public Buffer {
   public:
    explicit Mapping(std::shared_ptr<Buffer> over)
        : Buffer(over->data(), over->size(), MemoryKind::kHost, -1), over_(std::move(over)) {}
    bool maps_file() const override { return true; }

   private:
    std::shared_ptr<Buffer> over_;
  };
  auto mapping = std::make_shared<Mapping>(chunk);
  Element mapped{view_of(mapping, Shape(), {{0, 100}})};
  EXPECT_EQ(compact_elements({&mapped}, size_t{1} << 20), 0u);
  // Numbers are left alone (only strings view read buffers).
  Element numbers{Tensor::allocate(DType::kInt64, Shape{4})};
  EXPECT_EQ(compact_elements({&numbers}, size_t{1} << 20), 0u);
}

// Strings that view parts of one buffer (stored zstd blocks of one read chunk) hold that
// buffer once: the ratio is weighed against its size, not the parts' nor the parts' sum.
TEST(Compact, PartsOfOneBufferCountItOnce) {
  std::shared_ptr<Buffer> chunk = read_buffer(1 << 20, "parts.tfrecord", 0);
  const char* bytes = static_cast<const char*>(chunk->data());
  auto first = std::make_shared<BufferPart>(bytes, 64 << 10, chunk);
  auto second = std::make_shared<BufferPart>(bytes + (64 << 10), 64 << 10, chunk);
  auto two_strings = [&] {
    Tensor t = Tensor::allocate(DType::kBytes, Shape{2});
    t.set_string_view(0, static_cast<const char*>(first->data()), 16 << 10, first);
    t.set_string_view(1, static_cast<const char*>(second->data()), 16 << 10, second);
    return Element{t};
  };
  // 32 KiB of strings in a 1 MiB buffer: a ratio of 32. The parts alone (128 KiB, a ratio of
  // 4) would not be worth a copy, and the whole counted twice (64) would be over the limit.
  Element under = two_strings();
  EXPECT_EQ(compact_elements({&under}, 31), 0u);
  Element within = two_strings();
  EXPECT_EQ(compact_elements({&within}, 40), size_t{32} << 10);
  EXPECT_EQ(within[0].string(1), std::string(static_cast<const char*>(second->data()), 16 << 10));
}

}  // namespace
}  // namespace dinput
