// The parts of zstd's frame format (RFC 8878) a reader needs in order to hand out stored
// blocks without decoding them: zstd writes a block it cannot shrink (random bytes, JPEG
// or other compressed payloads) as a raw block, its bytes as they are, so a record in one
// can be a view of the compressed file's read buffer, as in a plain file. The decoder that
// does this is ZstdChunks (input_stream.cc); docs/records.md, "Stored blocks", tells the
// user's side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dinput {

constexpr uint32_t kZstdFrameMagic = 0xFD2FB528u;
constexpr size_t kZstdBlockHeaderBytes = 3;
// The largest block a frame may hold (and its window, if smaller, lowers the limit).
constexpr uint64_t kZstdBlockSizeMax = uint64_t{128} << 10;

struct ZstdFrameHeader {
  size_t header_bytes = 0;  // magic number included
  uint64_t window = 0;      // how far back a match may reach; a single segment's is its size
  bool has_content_size = false;
  uint64_t content_size = 0;
  bool has_checksum = false;  // 4 bytes of XXH64 follow the last block
  uint32_t dictionary_id = 0;
  uint64_t block_size_max() const {
    return window < kZstdBlockSizeMax ? window : kZstdBlockSizeMax;
  }
};

enum class ZstdHeaderRead {
  kFrame,     // a frame header, read whole
  kNeedMore,  // the bytes given end inside the header
  kOther,     // not the header of a data frame: a skippable frame, another magic number, or a
              // reserved bit set (libzstd says which)
};

// Reads the frame header at p[0, avail).
ZstdHeaderRead read_zstd_frame_header(const unsigned char* p, size_t avail, ZstdFrameHeader* out);

enum class ZstdBlockType { kRaw = 0, kRle = 1, kCompressed = 2, kReserved = 3 };

struct ZstdBlockHeader {
  bool last = false;
  ZstdBlockType type = ZstdBlockType::kRaw;
  uint32_t size = 0;  // bytes that follow the header; an RLE block's decoded size
};

// Reads the kZstdBlockHeaderBytes at p.
ZstdBlockHeader read_zstd_block_header(const unsigned char* p);

// The largest window of a frame read as stored blocks. Such a frame keeps its last window of
// bytes alive, for libzstd's history should a block that is not raw follow; frames of
// larger windows (`zstd --ultra -22`, `--long`), whose window libzstd fills only as far as
// the data goes, are left to libzstd.
constexpr uint64_t kZstdMaxStoredWindow = uint64_t{8} << 20;

// Whether the frame at p[0, avail) is read as stored blocks (ZstdChunks in input_stream.cc):
// its header and first block header lie within the bytes given, it names no dictionary,
// declares a window of at most kZstdMaxStoredWindow, has no content checksum unless
// `checksum_skipped`, and its first block is raw and of a valid size. *out: its header.
bool zstd_stored_frame_at(const unsigned char* p, size_t avail, bool checksum_skipped,
                          ZstdFrameHeader* out);

// The header of a frame that holds the blocks after `decoded` bytes of the frame `frame`:
// no single segment, a window of at least frame.window (a power of two), the content size
// left when frame has one, the same checksum flag, no dictionary. libzstd decodes a frame's
// remaining blocks under it, given the decoded bytes' last window as a prefix
// (ZSTD_DCtx_refPrefix), as it would decode them in the frame itself when the blocks before
// were all raw: raw blocks change none of the decoder's state but its history.
std::string zstd_resume_header(const ZstdFrameHeader& frame, uint64_t decoded);

}  // namespace dinput
