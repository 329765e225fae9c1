// The rule that decides where reduce may use NCCL (nccl_reduce_is_exact, finish_nccl_sum in
// distribute/replica_ops.h), checked on the CPU: NCCL's sum over two GPUs is emulated as
// one addition rounded to the dtype, and the path built on it must give the host path's
// result bit for bit. tests/gpu/nccl_test.cc checks the same against the real NCCL.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/half.h"
#include "distribute/replica_ops.h"
#include "harness.h"

namespace dinput::testing {
namespace {

template <typename Bits>
Tensor of_bits(DType dtype, const std::vector<Bits>& bits) {
  Tensor t = Tensor::allocate(dtype, Shape{static_cast<int64_t>(bits.size())});
  std::memcpy(t.mutable_data(), bits.data(), bits.size() * sizeof(Bits));
  return t;
}

template <typename Bits>
std::vector<Bits> bits_of(const Tensor& t) {
  std::vector<Bits> out(static_cast<size_t>(t.num_elements()));
  std::memcpy(out.data(), t.data(), out.size() * sizeof(Bits));
  return out;
}

template <typename To, typename From>
To cast_bits(From f) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To t;
  std::memcpy(&t, &f, sizeof t);
  return t;
}

// NCCL's sum of two values: one addition, rounded once to the dtype. float16 and bfloat16
// are added in float, as NCCL does on GPUs without native half arithmetic (float has more
// than 2p + 2 bits for both, so this is the correctly rounded sum).
uint16_t nccl_sum16(DType dtype, uint16_t a, uint16_t b) {
  if (dtype == DType::kFloat16) return float_to_half(half_to_float(a) + half_to_float(b));
  return float_to_bfloat16(bfloat16_to_float(a) + bfloat16_to_float(b));
}
uint32_t nccl_sum32(uint32_t a, uint32_t b) {
  return cast_bits<uint32_t>(cast_bits<float>(a) + cast_bits<float>(b));
}
uint64_t nccl_sum64(uint64_t a, uint64_t b) {
  return cast_bits<uint64_t>(cast_bits<double>(a) + cast_bits<double>(b));
}

double value(DType dtype, uint64_t bits) {
  switch (dtype) {
    case DType::kFloat16:
      return half_to_float(static_cast<uint16_t>(bits));
    case DType::kBFloat16:
      return bfloat16_to_float(static_cast<uint16_t>(bits));
    case DType::kFloat32:
      return cast_bits<float>(static_cast<uint32_t>(bits));
    default:
      return cast_bits<double>(bits);
  }
}

double smallest_normal(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return std::ldexp(1.0, -14);
    case DType::kFloat64:
      return std::ldexp(1.0, -1022);
    default:
      return std::ldexp(1.0, -126);
  }
}

// For pairs (a[i], b[i]) of one dtype: wherever NCCL's sum s is finite, the host path's
// arithmetic on s (replica 0 holds it, replica 1 zeros) equals the host path on a and b,
// bit for bit, for SUM and MEAN, subnormal results included. finish_nccl_sum gives that
// result where it accepts, and it accepts every finite sum (SUM) and every mean that is
// zero or normal (MEAN); it refuses a nonzero mean below the smallest normal and any
// non-finite sum.
template <typename Bits>
void check_pairs(DType dtype, const std::vector<Bits>& a, const std::vector<Bits>& b,
                 Bits (*nccl_sum)(DType, Bits, Bits)) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  std::vector<Bits> fa, fb, fs, non_finite;
  for (size_t i = 0; i < a.size(); ++i) {
    Bits v = nccl_sum(dtype, a[i], b[i]);
    if (!std::isfinite(value(dtype, v))) {
      non_finite.push_back(v);
      continue;
    }
    fa.push_back(a[i]);
    fb.push_back(b[i]);
    fs.push_back(v);
  }
  ASSERT_GT(fs.size(), a.size() / 2) << dtype_name(dtype);
  ASSERT_FALSE(non_finite.empty()) << dtype_name(dtype);
  const Tensor ta = of_bits(dtype, fa), tb = of_bits(dtype, fb), ts = of_bits(dtype, fs);
  const Tensor zeros = Tensor::zeros(dtype, ts.shape());
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean}) {
    const char* op_name = op == ReduceOp::kSum ? "SUM" : "MEAN";
    const std::vector<Bits> host = bits_of<Bits>(reduce(*s, op, {{ta}, {tb}}, kAxisNone)[0]);
    const std::vector<Bits> path = bits_of<Bits>(reduce(*s, op, {{ts}, {zeros}}, kAxisNone)[0]);
    size_t mismatches = 0;
    for (size_t i = 0; i < host.size(); ++i)
      if (host[i] != path[i] && mismatches++ < 5)
        ADD_FAILURE() << dtype_name(dtype) << " " << op_name << " of bits 0x" << std::hex << +fa[i]
                      << " and 0x" << +fb[i] << ": host 0x" << +host[i] << ", from NCCL's sum 0x"
                      << +path[i];
    EXPECT_EQ(mismatches, 0u) << dtype_name(dtype) << " " << op_name << " over " << host.size()
                              << " pairs";
    // Split by what finish_nccl_sum must do: accept all of `kept` in one call, refuse each
    // of `tiny` (a nonzero mean below the smallest normal).
    std::vector<Bits> kept, kept_host, tiny;
    for (size_t i = 0; i < fs.size(); ++i) {
      const double m = std::fabs(value(dtype, host[i]));
      if (op == ReduceOp::kMean && m != 0 && m < smallest_normal(dtype)) {
        tiny.push_back(fs[i]);
      } else {
        kept.push_back(fs[i]);
        kept_host.push_back(host[i]);
      }
    }
    Tensor out;
    ASSERT_TRUE(finish_nccl_sum(*s, op, of_bits(dtype, kept), &out))
        << dtype_name(dtype) << " " << op_name;
    EXPECT_EQ(out.dtype(), dtype);
    EXPECT_TRUE(bits_of<Bits>(out) == kept_host) << dtype_name(dtype) << " " << op_name;
    if (op == ReduceOp::kMean) EXPECT_FALSE(tiny.empty()) << dtype_name(dtype);
    for (size_t i = 0; i < tiny.size() && i < 100; ++i)
      EXPECT_FALSE(finish_nccl_sum(*s, op, of_bits(dtype, std::vector<Bits>{tiny[i]}), &out))
          << dtype_name(dtype) << " " << op_name << " of a sum with bits 0x" << std::hex
          << +tiny[i];
    for (size_t i = 0; i < non_finite.size() && i < 100; ++i)
      EXPECT_FALSE(
          finish_nccl_sum(*s, op, of_bits(dtype, std::vector<Bits>{non_finite[i], fs[0]}), &out))
          << dtype_name(dtype) << " " << op_name << " of a sum with bits 0x" << std::hex
          << +non_finite[i];
  }
}

// Every float16 or bfloat16 value, each paired with values that exercise rounding: fixed
// ones (zeros, the smallest subnormals, values near the largest finite), its neighbours,
// its negation's neighbours (cancellation) and spread patterns.
void check_16(DType dtype) {
  const std::vector<uint16_t> fixed =
      dtype == DType::kFloat16
          ? std::vector<uint16_t>{0x0000, 0x8000, 0x0001, 0x8001, 0x0003,
                                  0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7b53 /* 60000 */,
                                  0x7bff, 0xfbff, 0x7c00}
          : std::vector<uint16_t>{0x0000, 0x8000, 0x0001, 0x8001, 0x0003, 0x007f, 0x0080,
                                  0x3f80, 0xbf80, 0x7f00, 0x7f7f, 0xff7f, 0x7f80};
  std::vector<uint16_t> a, b;
  for (uint32_t x = 0; x < 0x10000; ++x) {
    const uint16_t v = static_cast<uint16_t>(x);
    std::vector<uint16_t> partners = fixed;
    for (uint16_t d : {0, 1, 2, 0x11, 0x400})
      partners.push_back(static_cast<uint16_t>(v + d)),
          partners.push_back(static_cast<uint16_t>((v ^ 0x8000) + d));
    for (uint32_t k = 1; k <= 6; ++k)
      partners.push_back(static_cast<uint16_t>(x * 40503u + k * 7919u));
    for (uint16_t p : partners) {
      a.push_back(v);
      b.push_back(p);
    }
  }
  check_pairs<uint16_t>(dtype, a, b, &nccl_sum16);
}

// Random float32 or float64 pairs: exponents close (where rounding happens), anywhere, and
// near the subnormal and overflow edges.
template <typename Bits>
void check_wide(DType dtype, Bits (*sum)(DType, Bits, Bits)) {
  const int mantissa = dtype == DType::kFloat32 ? 23 : 52;
  const int exponent_max = dtype == DType::kFloat32 ? 255 : 2047;
  std::mt19937_64 rng(16);
  auto make = [&](uint64_t sign, int64_t exponent, uint64_t frac) {
    exponent = std::max<int64_t>(0, std::min<int64_t>(exponent_max - 1, exponent));
    return static_cast<Bits>((sign << (mantissa + (dtype == DType::kFloat32 ? 8 : 11))) |
                             (static_cast<uint64_t>(exponent) << mantissa) |
                             (frac & ((uint64_t{1} << mantissa) - 1)));
  };
  std::vector<Bits> a, b;
  for (int i = 0; i < 400000; ++i) {
    const int64_t e = static_cast<int64_t>(rng() % static_cast<uint64_t>(exponent_max));
    int64_t f;
    switch (i % 4) {
      case 0:  // close exponents
        f = e + static_cast<int64_t>(rng() % 60) - 30;
        break;
      case 1:  // anywhere
        f = static_cast<int64_t>(rng() % static_cast<uint64_t>(exponent_max));
        break;
      case 2:  // subnormal edge
        a.push_back(make(rng() & 1, static_cast<int64_t>(rng() % 3), rng()));
        b.push_back(make(rng() & 1, static_cast<int64_t>(rng() % 3), rng()));
        continue;
      default:  // overflow edge
        a.push_back(make(rng() & 1, exponent_max - 1 - static_cast<int64_t>(rng() % 2), rng()));
        b.push_back(make(rng() & 1, exponent_max - 1 - static_cast<int64_t>(rng() % 2), rng()));
        continue;
    }
    a.push_back(make(rng() & 1, e, rng()));
    b.push_back(make(rng() & 1, f, rng()));
  }
  check_pairs<Bits>(dtype, a, b, sum);
}

TEST(NcclRule, OnlyFloatingDtypesOverExactlyTwoDistinctGpus) {
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    EXPECT_TRUE(nccl_reduce_is_exact(d, {0, 1})) << dtype_name(d);
    EXPECT_TRUE(nccl_reduce_is_exact(d, {3, 1})) << dtype_name(d);
    EXPECT_FALSE(nccl_reduce_is_exact(d, {0})) << dtype_name(d);
    // NCCL needs one rank per GPU: one GPU listed twice is reduced on the host.
    EXPECT_FALSE(nccl_reduce_is_exact(d, {1, 1})) << dtype_name(d);
    // Three or more ranks round after each addition, in NCCL's order.
    EXPECT_FALSE(nccl_reduce_is_exact(d, {0, 1, 2})) << dtype_name(d);
    EXPECT_FALSE(nccl_reduce_is_exact(d, {0, 1, 2, 3})) << dtype_name(d);
  }
  // Integers wrap in NCCL; the host path is exact or an error, and MEAN gives float64.
  for (DType d : {DType::kInt8, DType::kUInt8, DType::kInt32, DType::kUInt32, DType::kInt64,
                  DType::kUInt64, DType::kBool, DType::kInt16, DType::kUInt16, DType::kBytes})
    EXPECT_FALSE(nccl_reduce_is_exact(d, {0, 1})) << dtype_name(d);
}

TEST(NcclRule, Float16MeanOfTwo60000sComesFromTheHost) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  const uint16_t h60000 = float_to_half(60000.0f);
  const uint16_t sum = nccl_sum16(DType::kFloat16, h60000, h60000);
  ASSERT_EQ(sum, 0x7c00) << "NCCL's float16 sum overflows to inf";
  Tensor out;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean})
    EXPECT_FALSE(
        finish_nccl_sum(*s, op, of_bits(DType::kFloat16, std::vector<uint16_t>{sum}), &out));
  const Tensor v = of_bits(DType::kFloat16, std::vector<uint16_t>{h60000});
  EXPECT_EQ(bits_of<uint16_t>(reduce(*s, ReduceOp::kMean, {{v}, {v}}, kAxisNone)[0])[0], h60000);
  // A finite sum is kept: SUM of the smallest subnormals, and their sum's MEAN only where
  // the mean is normal.
  const uint16_t two_tiny = nccl_sum16(DType::kFloat16, 0x0001, 0x0001);
  ASSERT_TRUE(finish_nccl_sum(*s, ReduceOp::kSum,
                              of_bits(DType::kFloat16, std::vector<uint16_t>{two_tiny}), &out));
  EXPECT_EQ(bits_of<uint16_t>(out)[0], 0x0002);
  EXPECT_FALSE(finish_nccl_sum(*s, ReduceOp::kMean,
                               of_bits(DType::kFloat16, std::vector<uint16_t>{two_tiny}), &out));
}

TEST(NcclRule, Float16PathEqualsTheHostPath) { check_16(DType::kFloat16); }
TEST(NcclRule, BFloat16PathEqualsTheHostPath) { check_16(DType::kBFloat16); }
TEST(NcclRule, Float32PathEqualsTheHostPath) {
  check_wide<uint32_t>(DType::kFloat32,
                       [](DType, uint32_t a, uint32_t b) { return nccl_sum32(a, b); });
}
TEST(NcclRule, Float64PathEqualsTheHostPath) {
  check_wide<uint64_t>(DType::kFloat64,
                       [](DType, uint64_t a, uint64_t b) { return nccl_sum64(a, b); });
}

}  // namespace
}  // namespace dinput::testing
