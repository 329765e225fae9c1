// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord framing.
// extend() uses the SSE4.2 crc32 instruction when the CPU has it (decided once, at run
// time, so one binary runs everywhere) and a slicing-by-8 table otherwise; in a build with
// ISA-L, buffers of 256 bytes or more on such CPUs go to ISA-L's crc32_iscsi, which is faster
// there (bench/bench_crc32c.cc). Every path is exposed so that tests can check them against
// each other.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dinput::crc32c {

// The CRC of `data` appended to data whose CRC is `crc` (0 for none): value(a+b) ==
// extend(value(a), b). Pre- and post-inversion are included, so value("123456789") is
// the published check value 0xE3069283.
uint32_t extend(uint32_t crc, const void* data, size_t n);
inline uint32_t value(const void* data, size_t n) { return extend(0, data, n); }
// value(data, 8): the CRC of a record's length field, one crc32 instruction where the CPU has
// it. The general path spent about 60 instructions a record on those 8 bytes (its alignment
// loop and block dispatch), as many as the reader's own framing work.
uint32_t value8(const void* data);

// The table-driven path (any CPU).
uint32_t extend_software(uint32_t crc, const void* data, size_t n);
// True when extend_hardware can run on this CPU.
bool hardware_available();
// The SSE4.2 path; only call it when hardware_available(). On other architectures it
// forwards to extend_software.
uint32_t extend_hardware(uint32_t crc, const void* data, size_t n);

// True when the library was built with ISA-L (DINPUT_HAVE_ISAL), whose crc32_iscsi
// extend_isal calls.
bool isal_available();
// ISA-L's CRC32C, with the conventions of extend; only call it when isal_available(). Without
// ISA-L it forwards to extend_software.
uint32_t extend_isal(uint32_t crc, const void* data, size_t n);

// TFRecord stores CRCs masked: a CRC computed over data that itself contains CRCs is
// weak, so the stored value is rotated and offset.
constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace dinput::crc32c
