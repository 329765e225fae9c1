// zstd frames of stored (raw) blocks: their bytes are handed out as views of the compressed
// input instead of being decoded, and the frames are checked as libzstd checks them. Each
// test compares with libzstd decoding the same bytes itself (docs/records.md, "Stored
// blocks").
#include <gtest/gtest.h>
// For ZSTD_getFrameHeader, which the frame header reader is compared with.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include <optional>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "io/input_stream.h"
#include "io/zstd_frame.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using namespace iotest;

// ---- frames written here, block by block ----

struct FrameSpec {
  bool checksum = true;  // 4 bytes after the last block (any value: the reader skips them)
  std::optional<uint64_t> content_size;  // declared in 8 bytes, or not at all
  unsigned window_log = 17;
};

std::string frame_header(const FrameSpec& f) {
  std::string h = le(kZstdFrameMagic, 4);
  h.push_back(static_cast<char>((f.content_size ? 3u << 6 : 0u) | (f.checksum ? 4u : 0u)));
  h.push_back(static_cast<char>((f.window_log - 10) << 3));
  if (f.content_size) h += le(*f.content_size, 8);
  return h;
}

std::string block_header(unsigned type, uint32_t size, bool last) {
  return le((uint64_t{size} << 3) | (type << 1) | (last ? 1u : 0u), 3);
}
std::string raw_block(const std::string& bytes, bool last) {
  return block_header(0, static_cast<uint32_t>(bytes.size()), last) + bytes;
}
std::string rle_block(char c, uint32_t n, bool last) {
  return block_header(1, n, last) + std::string(1, c);
}
const std::string kChecksum = "\x11\x22\x33\x44";

// ---- what libzstd writes ----

std::string compress(const std::string& src, int level, bool checksum, int window_log = 0) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  if (window_log) ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log);
  std::string out(ZSTD_compressBound(src.size()), '\0');
  const size_t n = ZSTD_compress2(cctx, out.data(), out.size(), src.data(), src.size());
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

// The block types of every data frame of z, in order (a skippable frame adds none).
std::vector<ZstdBlockType> block_types(const std::string& z) {
  std::vector<ZstdBlockType> types;
  const auto* p = reinterpret_cast<const unsigned char*>(z.data());
  size_t at = 0;
  while (at < z.size()) {
    ZstdFrameHeader h;
    if (read_zstd_frame_header(p + at, z.size() - at, &h) != ZstdHeaderRead::kFrame) {
      at += 8 + static_cast<size_t>(p[at + 4] | p[at + 5] << 8 | p[at + 6] << 16 |
                                    uint32_t{p[at + 7]} << 24);  // skippable
      continue;
    }
    at += h.header_bytes;
    for (;;) {
      const ZstdBlockHeader b = read_zstd_block_header(p + at);
      types.push_back(b.type);
      at += kZstdBlockHeaderBytes + (b.type == ZstdBlockType::kRle ? 1 : b.size);
      if (b.last) break;
    }
    if (h.has_checksum) at += 4;
  }
  return types;
}

// libzstd's own streaming decoder over z (content checksums not verified), for comparison:
// the bytes, and whether the stream was whole and sound.
struct Reference {
  std::string bytes;
  bool ok = false;
};
Reference libzstd_decode(const std::string& z) {
  Reference r;
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, kZstdWindowLogMax);
#ifdef ZSTD_d_forceIgnoreChecksum
  ZSTD_DCtx_setParameter(d, ZSTD_d_forceIgnoreChecksum, ZSTD_d_ignoreChecksum);
#endif
  ZSTD_inBuffer in{z.data(), z.size(), 0};
  std::string buf(1 << 16, '\0');
  size_t last = 0;
  for (;;) {
    ZSTD_outBuffer out{buf.data(), buf.size(), 0};
    last = ZSTD_decompressStream(d, &out, &in);
    if (ZSTD_isError(last)) break;
    r.bytes.append(buf.data(), out.pos);
    if (in.pos == in.size && out.pos < out.size) {
      r.ok = last == 0;
      break;
    }
  }
  ZSTD_freeDCtx(d);
  return r;
}

// ---- the reader ----

struct Decoded {
  std::string bytes;
  size_t viewed = 0;  // bytes handed out as views of the compressed input itself
  bool failed = false;
  bool truncated = false;
  bool window_too_large = false;
  uint64_t compressed_offset = 0;
  std::string message;
};

// decompress() over z fed in pieces of `piece` bytes (0: all at once).
Decoded decode(const std::string& z, size_t piece, bool content_checksum = false) {
  auto input = allocate_host(z.size() + 1);
  std::memcpy(input->data(), z.data(), z.size());
  const char* base = static_cast<const char*>(input->data());
  Decoded d;
  try {
    auto chunks = decompress(Compression::kZstd, memory_chunks(base, z.size(), input, piece), 0,
                             nullptr, content_checksum);
    Chunk c;
    while (chunks->next(c)) {
      EXPECT_GT(c.size, 0u);
      EXPECT_TRUE(c.owner);
      d.bytes.append(c.data, c.size);
      if (c.data >= base && c.data < base + z.size()) {
        d.viewed += c.size;
        // A part of the input of its own, which says where its bytes are.
        EXPECT_EQ(c.owner->data(), c.data);
        EXPECT_EQ(c.owner->size(), c.size);
        // Holding it holds the whole input, which is what a shuffle's compaction weighs.
        EXPECT_EQ(&c.owner->holder(), input.get());
      }
    }
  } catch (const StreamCorrupt& e) {
    d.failed = true;
    d.truncated = e.truncated();
    d.window_too_large = e.window_too_large();
    d.compressed_offset = e.compressed_offset();
    d.message = e.what();
  }
  return d;
}

const std::vector<size_t> kPieces = {0, 1, 2, 3, 5, 17, 4096, 65536 + 1, 1000003};

// Decodes z, a single frame whose first `stored` bytes are in raw blocks, fed in every size
// of kPieces: it gives `want`, and those bytes are views when the frame's header lies within
// the first piece (a frame header cut by a piece boundary leaves the frame to libzstd; block
// headers may straddle pieces).
void expect_decoded_in_pieces(const std::string& z, const std::string& want, size_t stored) {
  for (size_t piece : kPieces) {
    SCOPED_TRACE("pieces of " + std::to_string(piece));
    const Decoded got = decode(z, piece);
    ASSERT_FALSE(got.failed) << got.message;
    EXPECT_EQ(got.bytes, want);
    EXPECT_EQ(got.viewed, piece == 0 || piece >= 17 ? stored : 0u);
  }
}

size_t count(const std::vector<ZstdBlockType>& types, ZstdBlockType t) {
  return static_cast<size_t>(std::count(types.begin(), types.end(), t));
}

TEST(ZstdStored, IncompressibleBytesAreViewsOfTheCompressedInput) {
  const std::string src = random_bytes((size_t{1} << 20) + 12345, 1);
  for (bool checksum : {true, false}) {
    const std::string z = compress(src, 3, checksum);
    const auto types = block_types(z);
    ASSERT_EQ(count(types, ZstdBlockType::kRaw), types.size()) << "libzstd stored every block";
    ASSERT_EQ(libzstd_decode(z).bytes, src);
    SCOPED_TRACE(checksum ? "with a checksum" : "without a checksum");
    expect_decoded_in_pieces(z, src, src.size());
    // A caller that wants the content checksum verified gets libzstd's decoding.
    const Decoded verified = decode(z, 0, /*content_checksum=*/true);
    EXPECT_EQ(verified.bytes, src);
    EXPECT_EQ(verified.viewed, checksum ? 0u : src.size());
  }
}

TEST(ZstdStored, FramesOfEveryKindFollowOneAnother) {
  const std::string a = random_bytes(300000, 2), b(200000, 'b'), c = random_bytes(5000, 3),
                    d = random_bytes(140000, 4);
  std::string skippable = le(0x184D2A53u, 4) + le(6, 4) + "skip!!";
  FrameSpec no_checksum;
  no_checksum.checksum = false;
  no_checksum.content_size = d.size();
  no_checksum.window_log = 18;
  const std::string z = skippable + compress(a, 3, true) + compress(b, 3, true) + skippable +
                        compress(c, 19, false) + compress("", 3, true) + frame_header(no_checksum) +
                        raw_block(d.substr(0, 100000), false) + raw_block("", false) +
                        raw_block(d.substr(100000), true) + skippable;
  const std::string all = a + b + c + d;
  ASSERT_EQ(libzstd_decode(z).bytes, all);
  ASSERT_TRUE(libzstd_decode(z).ok);
  for (size_t piece : kPieces) {
    SCOPED_TRACE("pieces of " + std::to_string(piece));
    const Decoded got = decode(z, piece);
    ASSERT_FALSE(got.failed) << got.message;
    EXPECT_EQ(got.bytes, all);
    if (piece == 0) {
      EXPECT_EQ(got.viewed, a.size() + c.size() + d.size());
    }
  }
}

// After stored blocks, a compressed block may copy bytes from them: libzstd decodes the rest
// of the frame with the stored bytes as its history.
TEST(ZstdStored, BlocksAfterStoredOnesCopyFromThem) {
  const std::string r = random_bytes(300 << 10, 5);
  std::string text;
  for (int i = 0; text.size() < (100 << 10); ++i) text += "line " + std::to_string(i % 97) + "\n";
  const std::string src = r + r.substr(1000, 200 << 10) + text + r.substr(0, 50000);
  const std::string z = compress(src, 3, true, 20);
  const auto types = block_types(z);
  ASSERT_GE(types.size(), 3u);
  ASSERT_EQ(types[0], ZstdBlockType::kRaw);
  ASSERT_EQ(types[1], ZstdBlockType::kRaw);
  ASSERT_GE(count(types, ZstdBlockType::kCompressed), 1u);
  // The compressed blocks are much smaller than what they hold: they copy from the stored ones.
  ASSERT_LT(z.size(), r.size() + (100 << 10));
  size_t stored = 0;
  for (ZstdBlockType t : types) {
    if (t != ZstdBlockType::kRaw) break;
    stored += kZstdBlockSizeMax;
  }
  expect_decoded_in_pieces(z, src, stored);
}

TEST(ZstdStored, AnRleBlockAfterAStoredOne) {
  FrameSpec f;
  f.content_size = 3 + 1000 + 2;
  const std::string z = frame_header(f) + raw_block("abc", false) + rle_block('x', 1000, false) +
                        raw_block("yz", true) + kChecksum;
  const std::string want = "abc" + std::string(1000, 'x') + "yz";
  ASSERT_EQ(libzstd_decode(z).bytes, want);
  expect_decoded_in_pieces(z, want, 3);
}

// A frame whose window is over 8 MiB is decoded by libzstd: a stored frame keeps its last
// window of bytes alive, in case a block that is not raw follows.
TEST(ZstdStored, FramesOfLargeWindowsAreLeftToLibzstd) {
  const std::string body = random_bytes(100000, 8);
  for (unsigned window_log : {23u, 24u}) {
    FrameSpec f;
    f.window_log = window_log;
    const std::string z = frame_header(f) + raw_block(body, true) + kChecksum;
    const Decoded got = decode(z, 0);
    ASSERT_FALSE(got.failed) << got.message;
    EXPECT_EQ(got.bytes, body);
    EXPECT_EQ(got.viewed, window_log <= 23 ? body.size() : 0u) << "window 2^" << window_log;
  }
}

// Damaged frames fail as they do in libzstd, after the bytes before the damage.
TEST(ZstdStored, TheFrameIsCheckedAsLibzstdChecksIt) {
  const std::string body = random_bytes(1000, 6);
  FrameSpec plain;
  FrameSpec sized = plain;
  sized.content_size = 1000;
  FrameSpec oversized = plain;
  oversized.content_size = 2000;
  FrameSpec undersized = plain;
  undersized.content_size = 500;
  FrameSpec small_window = plain;
  small_window.window_log = 10;  // blocks of at most 1 KiB
  FrameSpec huge_window = plain;
  huge_window.window_log = 32;
  const std::string whole = frame_header(plain) + raw_block(body, true) + kChecksum;
  struct Case {
    const char* name;
    std::string z;
    bool truncated;
    std::string before;  // the bytes delivered first
  };
  const std::vector<Case> cases = {
      {"the file ends inside a raw block",
       frame_header(plain) + block_header(0, 1000, true) + body.substr(0, 600), true,
       body.substr(0, 600)},
      {"the file ends inside the checksum", whole.substr(0, whole.size() - 2), true, body},
      {"the file ends after a block that is not the last",
       frame_header(sized) + raw_block(body, false), true, body},
      {"the file ends inside a block header", frame_header(plain) + raw_block(body, false) + "\x01",
       true, body},
      {"fewer bytes than the declared content size",
       frame_header(oversized) + raw_block(body, true) + kChecksum, false, body},
      {"more bytes than the declared content size",
       frame_header(undersized) + raw_block(body, true) + kChecksum, false, ""},
      {"a raw block larger than the window",
       frame_header(small_window) + raw_block(body + body, true) + kChecksum, false, ""},
      {"a block of the reserved type after a stored one",
       frame_header(plain) + raw_block(body, false) + block_header(3, 10, true) + "0123456789" +
           kChecksum,
       false, body},
      {"a compressed block that is garbage after a stored one",
       frame_header(plain) + raw_block(body, false) + block_header(2, 10, true) +
           "\xff\xff\xff\xff" + "\xff\xff\xff\xff\xff\xff" + kChecksum,
       false, body},
      {"garbage after a whole frame", whole + "garbage!", false, body},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    EXPECT_FALSE(libzstd_decode(k.z).ok) << "libzstd accepts it";
    for (size_t piece : kPieces) {
      SCOPED_TRACE("pieces of " + std::to_string(piece));
      const Decoded got = decode(k.z, piece);
      EXPECT_TRUE(got.failed);
      EXPECT_EQ(got.truncated, k.truncated) << got.message;
      EXPECT_FALSE(got.window_too_large);
      EXPECT_EQ(got.message.rfind(k.truncated ? "the file ends inside a zstd frame" : "zstd: ", 0),
                0u)
          << got.message;
      // Where the failing frame starts: the stream's start, or the end of the whole frame.
      EXPECT_EQ(got.compressed_offset,
                k.z.size() > whole.size() && k.z.compare(0, whole.size(), whole) == 0 ? whole.size()
                                                                                      : 0u);
      // Everything before the damage came out first. libzstd, which reads the frames whose
      // header is cut by a piece boundary, may hold back part of a block or hand out part of
      // one that is too large.
      if (piece == 0) {
        EXPECT_EQ(got.bytes, k.before);
      }
      EXPECT_EQ(got.bytes, body.substr(0, got.bytes.size()));
    }
  }
  // A window over the reader's limit is refused as such, not called damage.
  const Decoded big = decode(frame_header(huge_window) + raw_block(body, true) + kChecksum, 0);
  EXPECT_TRUE(big.failed);
  EXPECT_TRUE(big.window_too_large) << big.message;
  EXPECT_EQ(big.bytes, "");
}

// The frame header reader against libzstd's own on the frames libzstd writes.
TEST(ZstdStored, FrameHeadersReadAsLibzstdReadsThem) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{70000}, size_t{300000}}) {
    for (bool checksum : {false, true}) {
      for (int window_log : {0, 10, 20, 27}) {
        const std::string z = compress(random_bytes(n, n + 7), 3, checksum, window_log);
        ZSTD_frameHeader want;
        ASSERT_EQ(ZSTD_getFrameHeader(&want, z.data(), z.size()), 0u);
        ZstdFrameHeader got;
        const auto* p = reinterpret_cast<const unsigned char*>(z.data());
        ASSERT_EQ(read_zstd_frame_header(p, z.size(), &got), ZstdHeaderRead::kFrame);
        EXPECT_EQ(got.header_bytes, want.headerSize);
        EXPECT_EQ(got.window, want.windowSize);
        EXPECT_EQ(got.has_checksum, want.checksumFlag != 0);
        EXPECT_EQ(got.has_content_size, want.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN);
        if (got.has_content_size) {
          EXPECT_EQ(got.content_size, want.frameContentSize);
        }
        EXPECT_EQ(got.dictionary_id, want.dictID);
        EXPECT_EQ(got.block_size_max(), want.blockSizeMax);
        for (size_t cut = 0; cut < got.header_bytes; ++cut)
          EXPECT_EQ(read_zstd_frame_header(p, cut, &got), ZstdHeaderRead::kNeedMore);
      }
    }
  }
  const unsigned char skippable[8] = {0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0};
  ZstdFrameHeader h;
  EXPECT_EQ(read_zstd_frame_header(skippable, 8, &h), ZstdHeaderRead::kOther);
  // A frame header that stands for a frame's remaining blocks reads back as it should.
  ZstdFrameHeader frame;
  frame.window = 3 << 17;
  frame.has_content_size = true;
  frame.content_size = 1000000;
  frame.has_checksum = true;
  const std::string resumed = zstd_resume_header(frame, 400000);
  ZSTD_frameHeader want;
  ASSERT_EQ(ZSTD_getFrameHeader(&want, resumed.data(), resumed.size()), 0u);
  EXPECT_EQ(want.windowSize, uint64_t{1} << 19);
  EXPECT_EQ(want.frameContentSize, 600000u);
  EXPECT_EQ(want.checksumFlag, 1u);
  EXPECT_EQ(want.dictID, 0u);
}

}  // namespace
}  // namespace dinput
