// White-box tests of src/io: the text_lines source (line endings, empty and missing files)
// and its FileSource interface used by FILE auto-sharding.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "data/datasets.h"
#include "data/iterator.h"
#include "data/nodes.h"
#include "io/copy_arena.h"
#include "io/file_sources.h"
#include "io/huge_pages.h"
#include "io/input_stream.h"
#include "temp_dir_test.h"

namespace dinput {
namespace {

// A fresh directory per test, removed with its files afterwards.
class TextLines : public test::TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr) << path;
    if (f) {
      std::fwrite(content.data(), 1, content.size(), f);
      std::fclose(f);
    }
    return path;
  }
};

// Read chunks are one transparent huge page by default, mapped at a huge-page boundary so
// that the kernel can back them with huge pages; a returned chunk is the next one handed
// out, and a chunk outlives its pool.
TEST(ChunkPool, DefaultChunksLieOnHugePageBoundariesAndAreReused) {
  constexpr size_t kHuge = size_t{2} << 20;
  EXPECT_EQ(kDefaultChunkBytes, kHuge);
  auto pool = make_chunk_pool(0);
  auto a = pool->get(kDefaultChunkBytes);
  auto b = pool->get(2 * kDefaultChunkBytes);
  for (const auto& buf : {a, b}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf->data()) % kHuge, 0u);
    std::memset(buf->data(), 0x5a, buf->size());  // all of it mapped and writable
  }
  // Not a multiple of a huge page: mapped as before, wherever the kernel puts it.
  auto odd = pool->get(kDefaultChunkBytes + 4096);
  std::memset(odd->data(), 1, odd->size());
  void* first = a->data();
  a.reset();
  EXPECT_EQ(pool->free_bytes(), kDefaultChunkBytes);
  auto again = pool->get(kDefaultChunkBytes);
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(pool->free_bytes(), 0u);
  pool.reset();
  std::memset(again->data(), 2, again->size());
  EXPECT_EQ(static_cast<const unsigned char*>(again->data())[kHuge - 1], 2);
}

// A pool's buffers outlive it: when it goes, its huge-page buffers are kept for the next
// iterator's pool (up to kKeptHugePages), which then needs no fresh memory to begin.
TEST(ChunkPool, BuffersOfAPoolThatWentServeTheNextOne) {
  while (void* p = take_kept_huge_page()) ::munmap(p, kHugePageBytes);  // none of ours
  void* probe = map_huge_page_aligned(kHugePageBytes);
  ASSERT_NE(probe, nullptr);
  keep_huge_page(probe);
  void* back = take_kept_huge_page();
  if (!back) GTEST_SKIP() << "this build keeps no huge pages (AddressSanitizer)";
  EXPECT_EQ(back, probe);
  ::munmap(back, kHugePageBytes);

  auto pool = make_chunk_pool(0);
  auto a = pool->get(kDefaultChunkBytes);
  std::memset(a->data(), 7, a->size());
  void* first = a->data();
  a.reset();
  pool.reset();
  auto next = make_chunk_pool(0);
  auto b = next->get(kDefaultChunkBytes);
  // The same memory, not a fresh mapping at the same address: it still holds the old bytes.
  EXPECT_EQ(b->data(), first);
  EXPECT_EQ(static_cast<const unsigned char*>(b->data())[kHugePageBytes - 1], 7);
  std::memset(b->data(), 8, b->size());

  // Beyond kKeptHugePages, pages given back are unmapped.
  std::vector<void*> many;
  for (size_t i = 0; i < kKeptHugePages + 2; ++i) {
    many.push_back(map_huge_page_aligned(kHugePageBytes));
    ASSERT_NE(many.back(), nullptr);
  }
  for (void* p : many) keep_huge_page(p);
  size_t kept = 0;
  while (void* p = take_kept_huge_page()) {
    ++kept;
    ::munmap(p, kHugePageBytes);
  }
  EXPECT_EQ(kept, kKeptHugePages);
}

// Decoder contexts given back are handed out again, most recent first; beyond
// kKeptDecoders they are destroyed at once, and the kept ones with the pool.
int destroyed = 0;
void count_destroyed(void*) { ++destroyed; }

TEST(ChunkPool, KeepsAFewDecodersForTheNextStreams) {
  destroyed = 0;
  int a = 0, b = 0, c = 0;
  {
    auto pool = make_chunk_pool(0);
    EXPECT_EQ(pool->take_decoder(), nullptr);
    pool->keep_decoder(&a, count_destroyed);
    EXPECT_EQ(pool->take_decoder(), &a);
    EXPECT_EQ(pool->take_decoder(), nullptr);
    static_assert(ChunkPool::kKeptDecoders == 2, "the test keeps two");
    pool->keep_decoder(&a, count_destroyed);
    pool->keep_decoder(&b, count_destroyed);
    pool->keep_decoder(&c, count_destroyed);
    EXPECT_EQ(destroyed, 1);
    EXPECT_EQ(pool->take_decoder(), &b);
    pool->keep_decoder(&b, count_destroyed);
  }
  EXPECT_EQ(destroyed, 3);
}

// Every copy in an arena knows where it was read from, found by any byte of it, also while
// later copies go in (and the notes move to larger arrays) on another thread, and across
// arenas. An empty copy has a place of its own.
TEST(CopyArena, EveryCopyNamesWhereItWasReadAcrossArenasAndThreads) {
  auto file = std::make_shared<ByteOrigin>();
  file->path = std::make_shared<const std::string>("small.tfrecord");
  const std::shared_ptr<const ByteOrigin> origin = file;
  constexpr int kCopies = 40000;
  const std::string bytes(8, 'x');
  CopyArena arena;
  struct Copy {
    const char* at;
    std::shared_ptr<Buffer> arena;
  };
  std::vector<Copy> copies;
  copies.reserve(kCopies + 1);
  std::atomic<size_t> published{0};
  std::atomic<bool> wrong{false};
  // Looks up the copies published so far while the others are made.
  std::thread reader([&] {
    while (published.load(std::memory_order_acquire) < kCopies) {
      const size_t n = published.load(std::memory_order_acquire);
      if (n == 0) continue;
      uint64_t offset = 0;
      const Copy& c = copies[n - 1];
      const auto* o = c.arena->origin_at(c.at + 3, &offset);
      if (!o || *o != origin || offset != 1000 + 16 * (n - 1) + 3) wrong = true;
    }
  });
  for (int i = 0; i < kCopies; ++i) {
    const char* at = arena.copy(bytes.data(), bytes.size(), /*huge=*/false, &origin,
                                1000 + 16 * static_cast<uint64_t>(i));
    copies.push_back(Copy{at, arena.buffer()});
    published.store(copies.size(), std::memory_order_release);
  }
  reader.join();
  EXPECT_FALSE(wrong) << "a copy's origin was wrong while copies went in";
  const char* empty = arena.copy(bytes.data(), 0, /*huge=*/false, &origin, 7);
  const char* after = arena.copy(bytes.data(), 8, /*huge=*/false, &origin, 9);
  EXPECT_NE(empty, after) << "an empty copy shares its place with the next";

  size_t arenas = 1;
  for (int i = 0; i < kCopies; ++i) {
    SCOPED_TRACE(i);
    if (i > 0 && copies[i].arena != copies[i - 1].arena) ++arenas;
    for (size_t byte : {size_t{0}, size_t{7}}) {
      uint64_t offset = 0;
      const auto* o = copies[i].arena->origin_at(copies[i].at + byte, &offset);
      ASSERT_NE(o, nullptr);
      EXPECT_EQ(*o, origin);
      EXPECT_EQ(offset, 1000 + 16 * static_cast<uint64_t>(i) + byte);
    }
  }
  // A 256 KiB heap arena holds 32,768 copies of 8 bytes.
  EXPECT_EQ(arenas, 2u);
  uint64_t offset = 0;
  ASSERT_NE(arena.buffer()->origin_at(empty, &offset), nullptr);
  EXPECT_EQ(offset, 7u);
  // Bytes copied without an origin have none.
  const char* unknown = arena.copy(bytes.data(), 8, /*huge=*/false);
  EXPECT_EQ(arena.buffer()->origin_at(unknown, &offset), nullptr);
}

std::vector<std::string> lines(const DatasetPtr& ds) {
  auto it = ds->make_iterator(IteratorContext{});
  std::vector<std::string> out;
  Element e;
  while (out.size() < 10000 && it->next(e)) {
    EXPECT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].dtype(), DType::kBytes);
    EXPECT_EQ(e[0].rank(), 0);
    out.emplace_back(e[0].string(0));
  }
  return out;
}

TEST_F(TextLines, NameSpecAndCardinality) {
  auto ds = make_text_lines({write("a.txt", "x\n")});
  EXPECT_STREQ(ds->name(), "text_lines");
  EXPECT_EQ(ds->element_spec(), (ElementSpec{{DType::kBytes, Shape()}}));
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  EXPECT_EQ(make_text_lines({})->cardinality(), 0);
  EXPECT_TRUE(lines(make_text_lines({})).empty());
}

TEST_F(TextLines, LfCrlfAndMissingFinalNewline) {
  EXPECT_EQ(lines(make_text_lines({write("lf.txt", "one\ntwo\n")})),
            (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(lines(make_text_lines({write("crlf.txt", "one\r\ntwo\r\n")})),
            (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(lines(make_text_lines({write("last.txt", "one\ntwo")})),
            (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(lines(make_text_lines({write("mixed.txt", "a\r\nb\nc")})),
            (std::vector<std::string>{"a", "b", "c"}));
  // A lone CR inside a line is content, not a line end.
  EXPECT_EQ(lines(make_text_lines({write("cr.txt", "a\rb\n")})),
            (std::vector<std::string>{"a\rb"}));
}

TEST_F(TextLines, EmptyLinesAndEmptyFiles) {
  EXPECT_EQ(lines(make_text_lines({write("blank.txt", "\n\nx\n\n")})),
            (std::vector<std::string>{"", "", "x", ""}));
  EXPECT_TRUE(lines(make_text_lines({write("empty.txt", "")})).empty());
  EXPECT_EQ(lines(make_text_lines({write("nl.txt", "\n")})), (std::vector<std::string>{""}));
  EXPECT_EQ(lines(make_text_lines({write("crlf_only.txt", "\r\n")})),
            (std::vector<std::string>{""}));
}

TEST_F(TextLines, FilesAreReadInOrderAcrossEmptyOnes) {
  auto a = write("a.txt", "a1\na2");  // no final newline: a2 must not merge with b1
  auto e = write("e.txt", "");
  auto b = write("b.txt", "b1\n");
  EXPECT_EQ(lines(make_text_lines({a, e, b, a})),
            (std::vector<std::string>{"a1", "a2", "b1", "a1", "a2"}));
}

TEST_F(TextLines, LongLinesAndEmbeddedNul) {
  std::string long_line(100000, 'q');
  auto all = lines(make_text_lines(
      {write("long.txt", long_line + "\nshort\n" + std::string("a\0b", 3) + "\n")}));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], long_line);
  EXPECT_EQ(all[1], "short");  // the reused line buffer must not leak the long line's tail
  EXPECT_EQ(all[2], std::string("a\0b", 3));
}

// A missing file is NOT_FOUND naming the file, after the lines of the files before it;
// building the dataset does not touch the files.
TEST_F(TextLines, MissingFileIsNotFoundNamingTheFile) {
  auto good = write("good.txt", "g\n");
  std::string missing = dir_ + "/does_not_exist.txt";
  auto ds = make_text_lines({good, missing});
  StickyIterator it(ds->make_iterator(IteratorContext{}));
  Element e;
  ASSERT_TRUE(it.next(e));
  EXPECT_EQ(e[0].string(0), "g");
  for (int i = 0; i < 2; ++i) {  // and the error sticks
    try {
      it.next(e);
      FAIL() << "expected NOT_FOUND";
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), Code::kNotFound);
      EXPECT_NE(std::string(err.what()).find(missing), std::string::npos) << err.what();
    }
  }
}

TEST_F(TextLines, ADirectoryIsNotReadableAsLines) {
  auto ds = make_text_lines({dir_});
  auto it = ds->make_iterator(IteratorContext{});
  Element e;
  try {
    it->next(e);
    FAIL() << "expected an error for a directory";
  } catch (const Error& err) {
    EXPECT_NE(err.code(), Code::kOk);
    EXPECT_NE(std::string(err.what()).find(dir_), std::string::npos) << err.what();
  }
}

// FILE auto-sharding rewrites the file list of a FileSource.
TEST_F(TextLines, IsAFileSourceWhoseListCanBeReplaced) {
  auto a = write("a.txt", "a\n");
  auto b = write("b.txt", "b\n");
  auto ds = make_text_lines({a, b});
  auto source = std::dynamic_pointer_cast<const FileSource>(ds);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->files(), (std::vector<std::string>{a, b}));
  auto only_b = source->with_files({b});
  EXPECT_EQ(lines(only_b), (std::vector<std::string>{"b"}));
  EXPECT_EQ(lines(ds), (std::vector<std::string>{"a", "b"}));  // the original is unchanged
}

std::vector<std::string> names(const DatasetPtr& ds) { return lines(ds); }

TEST_F(TextLines, ListFilesMatchesSortedAndIsAFileSource) {
  auto b = write("b.txt", "");
  auto a = write("a.txt", "");
  auto c = write("c.log", "");
  auto ds = make_list_files({dir_ + "/*.txt"}, false, 0);
  EXPECT_STREQ(ds->name(), "list_files");
  EXPECT_EQ(ds->cardinality(), 2);
  EXPECT_EQ(ds->element_spec(), (ElementSpec{{DType::kBytes, Shape()}}));
  EXPECT_EQ(names(ds), (std::vector<std::string>{a, b}));
  // Several patterns: the union, sorted, without duplicates.
  EXPECT_EQ(names(make_list_files({dir_ + "/*.log", dir_ + "/*", dir_ + "/a.txt"}, false, 0)),
            (std::vector<std::string>{a, b, c}));
  auto source = std::dynamic_pointer_cast<const FileSource>(ds);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->files(), (std::vector<std::string>{a, b}));
  EXPECT_EQ(names(source->with_files({b})), (std::vector<std::string>{b}));
}

TEST_F(TextLines, ListFilesWithoutMatchIsNotFoundNamingThePattern) {
  std::string pattern = dir_ + "/*.nothing";
  try {
    make_list_files({pattern}, false, 0);
    FAIL() << "expected NOT_FOUND";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
    EXPECT_NE(std::string(e.what()).find(pattern), std::string::npos) << e.what();
  }
  try {
    make_list_files({}, false, 0);
    FAIL() << "expected INVALID_ARGUMENT";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
  }
}

// Shuffled: a permutation, a new order per iterator, the same sequence of orders per seed.
TEST_F(TextLines, ListFilesShuffle) {
  std::vector<std::string> all;
  for (int i = 0; i < 12; ++i) all.push_back(write("f" + std::to_string(100 + i), ""));
  auto a = make_list_files({dir_ + "/f*"}, true, 7);
  auto a1 = names(a), a2 = names(a);
  EXPECT_NE(a1, a2);
  EXPECT_NE(a1, all);
  auto sorted = a1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, all);
  auto b = make_list_files({dir_ + "/f*"}, true, 7);
  EXPECT_EQ(names(b), a1);
  EXPECT_EQ(names(b), a2);
}

// The classic file pipeline: list_files feeding text_lines through interleave.
TEST_F(TextLines, InterleavedTextFiles) {
  write("p1.txt", "a1\na2\na3\n");
  write("p2.txt", "b1\nb2\n");
  auto fn = std::make_shared<const InterleaveFn>(
      [](const Element& in) { return make_text_lines({std::string(in[0].string(0))}); });
  auto ds = make_interleave(make_list_files({dir_ + "/p*.txt"}, false, 0), fn,
                            {{DType::kBytes, Shape()}}, 2, 1, 1, true);
  EXPECT_EQ(lines(ds), (std::vector<std::string>{"a1", "b1", "a2", "b2", "a3"}));
}

TEST_F(TextLines, BatchesOfLines) {
  auto ds = make_batch(make_text_lines({write("n.txt", "a\nbb\nccc\n")}), 2, false);
  auto it = ds->make_iterator(IteratorContext{});
  Element e;
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(e[0].shape(), (Shape{2}));
  EXPECT_EQ(e[0].string(1), "bb");
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(e[0].shape(), (Shape{1}));
  EXPECT_EQ(e[0].string(0), "ccc");
  EXPECT_FALSE(it->next(e));
}

}  // namespace
}  // namespace dinput
