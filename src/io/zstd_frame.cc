#include "io/zstd_frame.h"

namespace dinput {

namespace {

uint64_t read_le(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

void append_le(std::string& s, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

ZstdHeaderRead read_zstd_frame_header(const unsigned char* p, size_t avail, ZstdFrameHeader* out) {
  if (avail < 5)
    return avail < 4 || read_le(p, 4) == kZstdFrameMagic ? ZstdHeaderRead::kNeedMore
                                                         : ZstdHeaderRead::kOther;
  if (read_le(p, 4) != kZstdFrameMagic) return ZstdHeaderRead::kOther;
  const unsigned descriptor = p[4];
  const unsigned content_size_flag = descriptor >> 6;
  const bool single_segment = (descriptor >> 5) & 1;
  if ((descriptor >> 3) & 1) return ZstdHeaderRead::kOther;  // reserved: must be zero
  const bool checksum = (descriptor >> 2) & 1;
  static constexpr size_t kDictionaryIdBytes[4] = {0, 1, 2, 4};
  static constexpr size_t kContentSizeBytes[4] = {0, 2, 4, 8};
  const size_t id_bytes = kDictionaryIdBytes[descriptor & 3];
  const size_t size_bytes =
      content_size_flag == 0 && single_segment ? 1 : kContentSizeBytes[content_size_flag];
  const size_t header = 5 + (single_segment ? 0 : 1) + id_bytes + size_bytes;
  if (avail < header) return ZstdHeaderRead::kNeedMore;
  ZstdFrameHeader h;
  h.header_bytes = header;
  h.has_checksum = checksum;
  size_t at = 5;
  if (!single_segment) {
    const unsigned log = 10 + (p[at] >> 3);
    const uint64_t base = uint64_t{1} << log;
    h.window = base + (base / 8) * (p[at] & 7);
    ++at;
  }
  h.dictionary_id = static_cast<uint32_t>(read_le(p + at, id_bytes));
  at += id_bytes;
  if (size_bytes > 0) {
    h.has_content_size = true;
    h.content_size = read_le(p + at, size_bytes) + (size_bytes == 2 ? 256 : 0);
  }
  if (single_segment) h.window = h.content_size;
  *out = h;
  return ZstdHeaderRead::kFrame;
}

ZstdBlockHeader read_zstd_block_header(const unsigned char* p) {
  const auto bits = static_cast<uint32_t>(read_le(p, kZstdBlockHeaderBytes));
  ZstdBlockHeader h;
  h.last = bits & 1;
  h.type = static_cast<ZstdBlockType>((bits >> 1) & 3);
  h.size = bits >> 3;
  return h;
}

bool zstd_stored_frame_at(const unsigned char* p, size_t avail, bool checksum_skipped,
                          ZstdFrameHeader* out) {
  ZstdFrameHeader h;
  if (read_zstd_frame_header(p, avail, &h) != ZstdHeaderRead::kFrame) return false;
  if (h.dictionary_id != 0 || h.window > kZstdMaxStoredWindow) return false;
  if (h.has_checksum && !checksum_skipped) return false;
  if (avail < h.header_bytes + kZstdBlockHeaderBytes) return false;
  const ZstdBlockHeader first = read_zstd_block_header(p + h.header_bytes);
  if (first.type != ZstdBlockType::kRaw || first.size > h.block_size_max()) return false;
  *out = h;
  return true;
}

std::string zstd_resume_header(const ZstdFrameHeader& frame, uint64_t decoded) {
  unsigned log = 10;  // the smallest window a descriptor can state
  while (log < 63 && (uint64_t{1} << log) < frame.window) ++log;
  std::string h;
  append_le(h, kZstdFrameMagic, 4);
  // Content size in 8 bytes (flag 3) when known; no single segment, dictionary or reserved bit.
  h.push_back(static_cast<char>((frame.has_content_size ? 3u << 6 : 0u) |
                                (frame.has_checksum ? 1u << 2 : 0u)));
  h.push_back(static_cast<char>((log - 10) << 3));
  if (frame.has_content_size)
    append_le(h, frame.content_size >= decoded ? frame.content_size - decoded : 0, 8);
  return h;
}

}  // namespace dinput
