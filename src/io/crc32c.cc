#include "io/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define DINPUT_CRC32C_X86 1
#endif

#ifdef DINPUT_HAVE_ISAL
#include <isa-l/crc.h>
#endif

namespace dinput::crc32c {

namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // Castagnoli, bit-reflected

// ---- software: slicing-by-8 ---------------------------------------------------------
// table[k][b] is the register after feeding byte b followed by k zero bytes to a zero
// register, so eight bytes can be folded in with eight independent lookups.
struct SliceTables {
  uint32_t t[8][256];
};

constexpr SliceTables make_slice_tables() {
  SliceTables s{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t r = b;
    for (int i = 0; i < 8; ++i) r = (r >> 1) ^ ((r & 1u) ? kPoly : 0u);
    s.t[0][b] = r;
  }
  for (int k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b)
      s.t[k][b] = (s.t[k - 1][b] >> 8) ^ s.t[0][s.t[k - 1][b] & 0xffu];
  return s;
}

constexpr SliceTables kSlice = make_slice_tables();

inline uint64_t load_le64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#ifdef DINPUT_CRC32C_X86

// ---- hardware: three interleaved crc32 streams -----------------------------------------
// The crc32 instruction has a latency of three cycles but a throughput of one per cycle, so
// one dependent chain uses a third of the unit. Long inputs are cut into three consecutive
// blocks whose CRCs are computed together and then joined: the register after block A then
// block B equals shift(crc(A), |B|) xor crc(B from a zero register), where shift feeds
// |B| zero bytes. Shifting is linear over GF(2), so it is four table lookups per join.

// A linear operator on the 32-bit register, stored as the images of the 32 unit vectors.
struct Operator {
  uint32_t col[32];
};

uint32_t apply(const Operator& m, uint32_t x) {
  uint32_t r = 0;
  for (int i = 0; x; ++i, x >>= 1)
    if (x & 1u) r ^= m.col[i];
  return r;
}

Operator compose(const Operator& a, const Operator& b) {  // a after b
  Operator r{};
  for (int i = 0; i < 32; ++i) r.col[i] = apply(a, b.col[i]);
  return r;
}

// The operator that feeds `bytes` zero bytes (bytes >= 1), by repeated squaring.
Operator zero_bytes_operator(size_t bytes) {
  Operator bit{};  // one zero bit: shift right, folding the polynomial in for bit 0
  bit.col[0] = kPoly;
  for (int i = 1; i < 32; ++i) bit.col[i] = 1u << (i - 1);
  Operator power = compose(bit, bit);  // 2 bits
  power = compose(power, power);       // 4 bits
  power = compose(power, power);       // 8 bits = one byte
  Operator result{};
  bool have = false;
  for (; bytes; bytes >>= 1) {
    if (bytes & 1u) {
      result = have ? compose(power, result) : power;
      have = true;
    }
    if (bytes > 1) power = compose(power, power);
  }
  return result;
}

// shift(x) = t[0][x & 0xff] ^ t[1][(x >> 8) & 0xff] ^ t[2][...] ^ t[3][x >> 24].
struct ShiftTable {
  uint32_t t[4][256];
  explicit ShiftTable(size_t bytes) {
    Operator m = zero_bytes_operator(bytes);
    for (int k = 0; k < 4; ++k)
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = apply(m, b << (8 * k));
  }
  uint32_t shift(uint32_t x) const {
    return t[0][x & 0xffu] ^ t[1][(x >> 8) & 0xffu] ^ t[2][(x >> 16) & 0xffu] ^ t[3][x >> 24];
  }
};

// Block sizes: long blocks keep the join cost negligible on big records, short ones let a
// 1 KiB record still use the three streams.
constexpr size_t kLongBlock = 4096;
constexpr size_t kShortBlock = 256;

struct HardwareTables {
  ShiftTable long_shift{kLongBlock};
  ShiftTable short_shift{kShortBlock};
};

const HardwareTables& hardware_tables() {
  static const HardwareTables tables;
  return tables;
}

__attribute__((target("sse4.2"))) inline uint64_t crc_u64(uint64_t crc, const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return _mm_crc32_u64(crc, v);
}

// Three blocks of `block` bytes each, in one pass. `block` is a multiple of 8.
__attribute__((target("sse4.2"))) inline uint32_t three_blocks(uint32_t crc, const unsigned char* p,
                                                               size_t block,
                                                               const ShiftTable& shift) {
  uint64_t c0 = crc, c1 = 0, c2 = 0;
  const unsigned char* p1 = p + block;
  const unsigned char* p2 = p + 2 * block;
  for (size_t i = 0; i < block; i += 8) {
    c0 = crc_u64(c0, p + i);
    c1 = crc_u64(c1, p1 + i);
    c2 = crc_u64(c2, p2 + i);
  }
  uint32_t r = shift.shift(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
  return shift.shift(r) ^ static_cast<uint32_t>(c2);
}

__attribute__((target("sse4.2"))) uint32_t hardware_impl(uint32_t crc, const void* data, size_t n) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint32_t l = ~crc;
  // Align to 8 bytes so that the 8-byte loads below never straddle a cache line.
  while (n && (reinterpret_cast<uintptr_t>(p) & 7u)) {
    l = _mm_crc32_u8(l, *p++);
    --n;
  }
  if (n >= 3 * kShortBlock) {
    const HardwareTables& tables = hardware_tables();
    while (n >= 3 * kLongBlock) {
      l = three_blocks(l, p, kLongBlock, tables.long_shift);
      p += 3 * kLongBlock;
      n -= 3 * kLongBlock;
    }
    while (n >= 3 * kShortBlock) {
      l = three_blocks(l, p, kShortBlock, tables.short_shift);
      p += 3 * kShortBlock;
      n -= 3 * kShortBlock;
    }
  }
  uint64_t l64 = l;
  while (n >= 8) {
    l64 = crc_u64(l64, p);
    p += 8;
    n -= 8;
  }
  l = static_cast<uint32_t>(l64);
  while (n) {
    l = _mm_crc32_u8(l, *p++);
    --n;
  }
  return ~l;
}

__attribute__((target("sse4.2"))) uint32_t hardware_value8(const void* data) {
  return ~static_cast<uint32_t>(crc_u64(0xFFFFFFFFu, static_cast<const unsigned char*>(data)));
}

bool detect_hardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

#endif  // DINPUT_CRC32C_X86

using ExtendFn = uint32_t (*)(uint32_t, const void*, size_t);

// From this length on, extend uses ISA-L when the library is built with it.
constexpr size_t kIsalMinBytes = 256;

ExtendFn choose() {
#ifdef DINPUT_CRC32C_X86
  if (detect_hardware()) return hardware_impl;
#endif
  return extend_software;
}

}  // namespace

uint32_t extend_software(uint32_t crc, const void* data, size_t n) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint32_t l = ~crc;
  while (n >= 8) {
    uint64_t w = load_le64(p) ^ l;
    l = kSlice.t[7][w & 0xff] ^ kSlice.t[6][(w >> 8) & 0xff] ^ kSlice.t[5][(w >> 16) & 0xff] ^
        kSlice.t[4][(w >> 24) & 0xff] ^ kSlice.t[3][(w >> 32) & 0xff] ^
        kSlice.t[2][(w >> 40) & 0xff] ^ kSlice.t[1][(w >> 48) & 0xff] ^ kSlice.t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) l = kSlice.t[0][(l ^ *p++) & 0xffu] ^ (l >> 8);
  return ~l;
}

bool hardware_available() {
#ifdef DINPUT_CRC32C_X86
  static const bool available = detect_hardware();
  return available;
#else
  return false;
#endif
}

uint32_t extend_hardware(uint32_t crc, const void* data, size_t n) {
#ifdef DINPUT_CRC32C_X86
  return hardware_impl(crc, data, n);
#else
  return extend_software(crc, data, n);
#endif
}

uint32_t value8(const void* data) {
#ifdef DINPUT_CRC32C_X86
  if (hardware_available()) return hardware_value8(data);
#endif
  return extend_software(0, data, 8);
}

bool isal_available() {
#ifdef DINPUT_HAVE_ISAL
  return true;
#else
  return false;
#endif
}

uint32_t extend_isal(uint32_t crc, const void* data, size_t n) {
#ifdef DINPUT_HAVE_ISAL
  // crc32_iscsi neither inverts its register before nor after, and takes an int length.
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint32_t l = ~crc;
  constexpr size_t kStep = size_t{1} << 30;
  while (n > 0) {
    const size_t take = n < kStep ? n : kStep;
    l = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(take), l);
    p += take;
    n -= take;
  }
  return ~l;
#else
  return extend_software(crc, data, n);
#endif
}

uint32_t extend(uint32_t crc, const void* data, size_t n) {
  static const ExtendFn impl = choose();
#ifdef DINPUT_HAVE_ISAL
  // ISA-L folds with carry-less multiplication (AVX-512 where the CPU has it) and is 1.7 to
  // 5 times faster from 256 bytes on, but its set-up makes it slower on shorter buffers,
  // such as the 8-byte length field of every record (bench/README.md, bench_crc32c). It is
  // only chosen on CPUs with SSE4.2: on older ones its fallback is a byte-wise table, slower
  // than the library's slicing-by-8.
  static const bool use_isal = hardware_available();
  if (use_isal && n >= kIsalMinBytes) return extend_isal(crc, data, n);
#endif
  return impl(crc, data, n);
}

}  // namespace dinput::crc32c
