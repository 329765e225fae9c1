// The shuffle's restore over record files (docs/checkpoint.md, "Shuffle"): the elements it
// has held longest come back by their addresses, the others are read again from a snapshot a
// few buffers back, and the records in between are passed over by their headers. Each test
// checks that the resumed stream equals the uninterrupted one, and what damage in the files
// is caught (or, where it cannot change what is delivered, is not read at all).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/origin.h"
#include "core/tensor.h"
#include "data/datasets.h"
#include "data/stage_stats.h"
#include "data/state.h"
#include "io/file_sources.h"
#include "io/record_writer.h"
#include "resume_check.h"
#include "temp_dir_test.h"
#include "test_text.h"

namespace dinput {
namespace {

using test::error_of;

// Every record is "r" + a six-digit index + padding: kPayload bytes, so that record i of a
// file starts at byte i * kStride. With varied_, records are of three sizes in turn
// (offset_of gives where they start): a shuffle over them cannot describe its buffer's
// addresses by segments of one stride (docs/checkpoint.md), and saves the span form.
constexpr size_t kPayload = 24;
constexpr uint64_t kStride = kPayload + 16;

std::string text(const Element& e) { return std::string(e.at(0).string(0)); }

std::vector<std::string> all_of(const DatasetPtr& ds) { return test::all_as(ds, text); }
std::vector<std::string> resumed(const DatasetPtr& ds, size_t k, std::string* state = nullptr) {
  return test::resumed_as(ds, k, text, state);
}

// The index a record's payload names.
int64_t index_of(const std::string& record) { return std::stoll(record.substr(1, 6)); }

class ShuffleRestore : public test::TempDirTest {
 protected:
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string records(const std::string& name, Compression c, int first, int count) {
    std::string p = path(name);
    RecordWriter w(p, c, 0);
    for (int i = first; i < first + count; ++i) {
      char rec[kPayload + 9];
      std::snprintf(rec, sizeof rec, "r%06d%0*d", i, static_cast<int>(payload_of(i) - 7), 0);
      w.write(rec, payload_of(i));
    }
    w.close();
    return p;
  }
  size_t payload_of(int64_t i) const {
    return varied_ ? kPayload + 4 * static_cast<size_t>(i % 3) : kPayload;
  }
  // Where record i of a file that starts with record 0 begins.
  uint64_t offset_of(int64_t i) const {
    if (!varied_) return static_cast<uint64_t>(i) * kStride;
    uint64_t at = 0;
    for (int64_t m = 0; m < i; ++m) at += payload_of(m) + 16;
    return at;
  }
  std::string read(const std::string& p) {
    std::string content;
    std::FILE* f = std::fopen(p.c_str(), "rb");
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) content.append(buf, n);
    std::fclose(f);
    return content;
  }
  void write(const std::string& p, const std::string& content) {
    std::FILE* f = std::fopen(p.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(content.data(), 1, content.size(), f);
    std::fclose(f);
  }
  // Flips a byte of record i's data (its CRC then fails), or of its length field (its
  // framing then fails), keeping the file's size.
  void damage_data(std::string& content, int64_t i) const {
    content[static_cast<size_t>(offset_of(i) + 12 + 3)] ^= 0x20;
  }
  void damage_length(std::string& content, int64_t i) const {
    content[static_cast<size_t>(offset_of(i) + 1)] ^= 0x01;
  }
  bool varied_ = false;
};

// A file of n records shuffled with buffer b, saved after k elements: what was delivered
// before the save, the oldest record still buffered, the newest delivered, and the newest
// buffered below that one.
struct SavePoint {
  std::vector<std::string> before, after;
  std::string state;
  int64_t oldest_buffered = 0, newest_delivered = -1, buffered_below_newest = 0;
};

SavePoint save_after(const DatasetPtr& ds, size_t k) {
  SavePoint p;
  std::vector<std::string> all = resumed(ds, k, &p.state);
  p.before.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k));
  p.after.assign(all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
  std::vector<bool> delivered(all.size() + 1, false);
  for (const auto& r : p.before) {
    delivered[static_cast<size_t>(index_of(r))] = true;
    p.newest_delivered = std::max(p.newest_delivered, index_of(r));
  }
  while (delivered[static_cast<size_t>(p.oldest_buffered)]) ++p.oldest_buffered;
  p.buffered_below_newest = p.newest_delivered - 1;
  while (delivered[static_cast<size_t>(p.buffered_below_newest)]) --p.buffered_below_newest;
  return p;
}

std::vector<std::string> restored_rest(const DatasetPtr& ds, const std::string& state) {
  IteratorContext ctx;
  RestoredIterator restored = restore_state(ds, ctx, state);
  return test::drain_as(*restored.iterator, text);
}

// Every source under a shuffle, saved everywhere: uncompressed records (addresses, read or
// mapped), compressed ones (no addresses: the input is restored before the oldest element),
// records skipping corrupt data (passed over with their data checked), text lines and
// fixed-length records (passed over by reading them).
TEST_F(ShuffleRestore, ResumesEverywhereOverEverySource) {
  for (Compression c : {Compression::kNone, Compression::kZstd, Compression::kGzip}) {
    if (!compression_supported(c)) continue;
    std::string name = compression_name(c);
    SCOPED_TRACE(name);
    std::vector<std::string> files = {records(name + "0", c, 0, 90), records(name + "1", c, 90, 0),
                                      records(name + "2", c, 90, 70)};
    DatasetPtr ds = make_shuffle(make_records(files, c, 4096), 8, 11, true);
    test::expect_resumes_everywhere_as(ds, text);
    Options mapped;
    mapped.map_files = true;
    test::expect_resumes_everywhere_as(make_with_options(make_repeat(ds, 2), mapped), text);
  }
  std::string damaged = records("damaged", Compression::kNone, 0, 120);
  std::string content = read(damaged);
  damage_data(content, 30);
  damage_data(content, 31);
  damage_length(content, 80);  // the reader finds the next header again
  write(damaged, content);
  Options skip;
  skip.skip_corrupt_records = true;
  DatasetPtr skipping = make_with_options(
      make_shuffle(make_records({damaged}, Compression::kNone, 0), 6, 3, false), skip);
  EXPECT_LT(all_of(skipping).size(), 119u);
  test::expect_resumes_everywhere_as(skipping, text);

  std::string lines;
  for (int i = 0; i < 150; ++i) lines += "r" + std::to_string(1000000 + i).substr(1) + "\n";
  std::string txt = path("lines.txt");
  write(txt, lines);
  test::expect_resumes_everywhere_as(make_shuffle(make_text_lines({txt}), 9, 5, false), text);
  std::string fixed = path("fixed.bin");
  write(fixed, lines);
  test::expect_resumes_everywhere_as(
      make_shuffle(make_fixed_length_records({fixed}, 8, 0, 0), 7, 5, false), text);
}

// Every record still names the file and offset it was read from, restored or not, though
// many are copies: those a restore reads by their addresses (read into a window or viewed in
// a mapping), those it reads again from a snapshot (compressed files, which have no
// addresses), and those a reader keeps after a skipped corrupt record. Errors about a record
// later on (parse_example's) name it so (docs/records.md).
TEST_F(ShuffleRestore, EveryRecordNamesWhereItWasReadAfterARestoreOrASkip) {
  struct Case {
    Compression compression;
    bool mapped, damaged;
  };
  for (const Case& k :
       {Case{Compression::kNone, false, false}, Case{Compression::kNone, true, false},
        Case{Compression::kZstd, false, false}, Case{Compression::kNone, false, true}}) {
    if (!compression_supported(k.compression)) continue;
    const std::string name = std::string(compression_name(k.compression)) +
                             (k.mapped ? "-mapped" : "") + (k.damaged ? "-damaged" : "");
    SCOPED_TRACE(name);
    const std::string f = records(name, k.compression, 0, 400);
    if (k.damaged) {
      std::string content = read(f);
      damage_data(content, 3);
      damage_data(content, 150);
      write(f, content);
    }
    Options options;
    options.map_files = k.mapped;
    options.skip_corrupt_records = k.damaged;
    DatasetPtr ds = make_with_options(
        make_shuffle(make_records({f}, k.compression, 4096), 32, 7, false), options);
    const std::string stream =
        k.compression == Compression::kZstd ? " of its decompressed zstd stream" : "";
    auto located = [](const Element& e) { return text(e) + "|" + describe_origin(e.at(0), 0); };
    for (size_t saved : {size_t{0}, size_t{40}, size_t{200}}) {
      const std::vector<std::string> all = test::resumed_as(ds, saved, located);
      ASSERT_EQ(all.size(), k.damaged ? 398u : 400u) << "saved after " << saved;
      for (const std::string& s : all)
        EXPECT_EQ(s.substr(s.find('|') + 1), " from '" + f + "' at byte offset " +
                                                 std::to_string(offset_of(index_of(s))) + stream)
            << s.substr(0, 7) << ", saved after " << saved;
    }
  }
}

// Records longer than the tail a restore reads after each address (4 KiB) are read alone;
// they too name where they were read from.
TEST_F(ShuffleRestore, LongRecordsReadAloneNameWhereTheyWereRead) {
  const std::string f = path("long");
  std::vector<uint64_t> offsets;
  {
    RecordWriter w(f, Compression::kNone, 0);
    uint64_t at = 0;
    for (int i = 0; i < 120; ++i) {
      char index[8];
      std::snprintf(index, sizeof index, "r%06d", i);
      const std::string record = index + std::string(5000 - 7, 'p');
      w.write(record.data(), record.size());
      offsets.push_back(at);
      at += 16 + record.size();
    }
    w.close();
  }
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), 16, 3, false);
  auto located = [](const Element& e) {
    return std::string(e.at(0).string(0).substr(0, 7)) + describe_origin(e.at(0), 0);
  };
  for (size_t saved : {size_t{0}, size_t{30}, size_t{80}}) {
    const std::vector<std::string> all = test::resumed_as(ds, saved, located);
    ASSERT_EQ(all.size(), 120u) << "saved after " << saved;
    for (const std::string& s : all)
      EXPECT_EQ(s.substr(7), " from '" + f + "' at byte offset " +
                                 std::to_string(offsets[static_cast<size_t>(index_of(s))]))
          << s.substr(0, 7) << ", saved after " << saved;
  }
}

// Records of random bytes in a zstd file are stored blocks, handed out as views of the
// compressed file's read buffers (docs/records.md, "Stored blocks"): each still names its
// offset in the decompressed stream, with chunks that cut records and block headers
// (buffer_size 4096) or not, and a restored iterator delivers what an uninterrupted one does.
TEST_F(ShuffleRestore, RecordsOfStoredZstdBlocksNameWhereTheyWereRead) {
  if (!compression_supported(Compression::kZstd)) GTEST_SKIP() << "zstd is not compiled in";
  const std::string f = path("stored.zst");
  std::vector<uint64_t> offsets;
  std::vector<std::string> written;
  uint64_t at = 0;
  {
    RecordWriter w(f, Compression::kZstd, 0);
    uint64_t bits = 88172645463325252ull;
    for (int i = 0; i < 600; ++i) {
      char index[8];
      std::snprintf(index, sizeof index, "r%06d", i);
      std::string record = index;
      record.resize(7 + 1017 + static_cast<size_t>(i % 5));
      for (size_t k = 7; k < record.size(); ++k) {
        bits ^= bits << 13, bits ^= bits >> 7, bits ^= bits << 17;
        record[k] = static_cast<char>(bits >> 56);
      }
      w.write(record.data(), record.size());
      written.push_back(record);
      offsets.push_back(at);
      at += 16 + record.size();
    }
    w.close();
  }
  // Random bytes do not shrink: zstd stored them, the file is a little longer than its content.
  ASSERT_GT(read(f).size(), at);
  auto located = [&](const Element& e) {
    const std::string record(e.at(0).string(0));
    const auto i = static_cast<size_t>(index_of(record));
    EXPECT_EQ(record, written[i]);
    return record.substr(0, 7) + describe_origin(e.at(0), 0);
  };
  for (size_t buffer_size : {size_t{0}, size_t{4096}}) {
    DatasetPtr ds = make_shuffle(make_records({f}, Compression::kZstd, buffer_size), 64, 9, false);
    const std::vector<std::string> uninterrupted = test::all_as(ds, located);
    ASSERT_EQ(uninterrupted.size(), 600u);
    for (const std::string& s : uninterrupted)
      EXPECT_EQ(s.substr(7), " from '" + f + "' at byte offset " +
                                 std::to_string(offsets[static_cast<size_t>(index_of(s))]) +
                                 " of its decompressed zstd stream")
          << s.substr(0, 7) << ", buffer_size " << buffer_size;
    for (size_t saved : {size_t{0}, size_t{100}, size_t{400}})
      EXPECT_EQ(test::resumed_as(ds, saved, located), uninterrupted)
          << "saved after " << saved << ", buffer_size " << buffer_size;
  }
}

// The records delivered before a save are passed over by their headers: damaging their data
// afterwards changes nothing that is delivered, and the restore does not read it.
TEST_F(ShuffleRestore, DeliveredRecordsAreNotCheckedAgain) {
  std::string f = records("w", Compression::kNone, 0, 600);
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), 32, 5, false);
  SavePoint p = save_after(ds, 300);
  std::string content = read(f);
  for (const auto& r : p.before) damage_data(content, index_of(r));
  write(f, content);
  EXPECT_EQ(restored_rest(ds, p.state), p.after);
}

// Damage that matters is caught: a broken length field among the records read again (the
// rest of the file could not be framed), and the data of a record still buffered.
TEST_F(ShuffleRestore, DamageThatMattersIsDataLoss) {
  varied_ = true;  // the span form: no segments of one stride
  std::string f = records("w", Compression::kNone, 0, 600);
  const std::string intact = read(f);
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), 32, 5, false);
  SavePoint p = save_after(ds, 300);

  std::string content = intact;
  damage_length(content, p.newest_delivered);  // read again: the restore walks over it
  write(f, content);
  Error e = error_of([&] { restored_rest(ds, p.state); });
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  EXPECT_NE(std::string(e.what()).find("CRC of its length field"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();

  for (int64_t i : {p.oldest_buffered, p.buffered_below_newest}) {
    SCOPED_TRACE(i);
    content = intact;
    damage_data(content, i);  // buffered (the oldest one is read by its address)
    write(f, content);
    e = error_of([&] { restored_rest(ds, p.state); });
    EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
    EXPECT_NE(std::string(e.what()).find("at byte offset " + std::to_string(offset_of(i))),
              std::string::npos)
        << e.what();
  }
}

// The elements held longest are read by their addresses, not by reading the input again
// from before them: records between the oldest buffered one and the snapshot a few buffers
// before the read position are not read at all, so even a broken length field there does
// not stop the restore.
TEST_F(ShuffleRestore, OldestElementsAreReadByAddress) {
  varied_ = true;  // the span form: no segments of one stride
  constexpr int64_t kBuffer = 32;
  std::string f = records("w", Compression::kNone, 0, 2000);
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), kBuffer, 9, false);
  SavePoint p = save_after(ds, 1000);
  // The saved shuffle had read past the newest delivered record; it points its input back
  // about 3 buffers from there, at the latest.
  const int64_t unread_below = p.newest_delivered - 3 * kBuffer - 1;
  ASSERT_LT(p.oldest_buffered + 1, unread_below) << "this seed keeps no element long enough";
  std::string content = read(f);
  int damaged = 0;
  for (const auto& r : p.before) {
    const int64_t i = index_of(r);
    if (i > p.oldest_buffered && i < unread_below) {
      damage_length(content, i);
      ++damaged;
    }
  }
  ASSERT_GT(damaged, 0);
  write(f, content);
  EXPECT_EQ(restored_rest(ds, p.state), p.after);
}

// A large buffer keeps more old elements than a state holds addresses for (30,000 keeps about
// 3,200 longer than 2.25 buffers, and 2 KiB holds about 2,000): the save then points its
// input further back, and the state stays small at every point of the epoch.
TEST_F(ShuffleRestore, AddressesAreBoundedAndTheStateStaysSmall) {
  varied_ = true;  // the span form: no segments of one stride
  std::vector<std::string> files = {records("a", Compression::kNone, 0, 60000),
                                    records("b", Compression::kNone, 60000, 40000)};
  DatasetPtr ds = make_shuffle(make_records(files, Compression::kNone, 0), 30000, 1, false);
  std::vector<std::string> expected = all_of(ds);
  size_t largest = 0;
  for (size_t k :
       {size_t{0}, size_t{15000}, size_t{50000}, size_t{59990}, size_t{80000}, size_t{99999}}) {
    std::string state;
    ASSERT_EQ(resumed(ds, k, &state), expected) << "saved after " << k;
    largest = std::max(largest, state.size());
  }
  EXPECT_GT(largest, 1900u);  // the addresses filled their 2 KiB
  EXPECT_LE(largest, 2400u);
}

// A buffer of 4,000 keeps about 420 elements longer than the 2.25 buffers a save points its
// input back, more than the 320 addresses states once held: all of them are read by their
// addresses, none by reading the input again from before them (the length fields of the
// records delivered there are broken, and the restore does not notice).
TEST_F(ShuffleRestore, MoreThan320ElementsAreReadByAddress) {
  varied_ = true;  // the span form: no segments of one stride
  constexpr int64_t kBuffer = 4000;
  std::string f = records("w", Compression::kNone, 0, 30000);
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), kBuffer, 3, false);
  SavePoint p = save_after(ds, 15000);
  // The shuffle had read past the newest delivered record and points its input back 2.25
  // buffers from there, to a snapshot at most kBuffer/32 earlier: nothing before
  // unread_below is read again.
  const int64_t unread_below = p.newest_delivered - kBuffer * 5 / 2;
  std::vector<bool> delivered(30000, false);
  for (const auto& r : p.before) delivered[static_cast<size_t>(index_of(r))] = true;
  int64_t by_address = 0;
  for (int64_t i = 0; i < unread_below; ++i)
    by_address += delivered[static_cast<size_t>(i)] ? 0 : 1;
  EXPECT_GT(by_address, 320);
  EXPECT_LE(p.state.size(), 2400u);
  std::string content = read(f);
  for (int64_t i = p.oldest_buffered + 1; i < unread_below; ++i)
    if (delivered[static_cast<size_t>(i)]) damage_length(content, i);
  write(f, content);
  EXPECT_EQ(restored_rest(ds, p.state), p.after);
}

// Records of many sizes (the packed addresses then store differences from their predicted
// offsets), over several files with an empty one, shuffled anew in each of two epochs, saved
// at every point of both epochs and after the end, with the statistics on and off on both
// sides (their wrapper forwards select, read_at and the addresses).
TEST_F(ShuffleRestore, VariableRecordsResumeEverywhereWithStatisticsOnAndOff) {
  std::vector<std::string> files;
  int index = 0;
  for (int f = 0; f < 4; ++f) {
    const int count = f == 2 ? 0 : 110 + 40 * f;
    std::string p = path("v" + std::to_string(f));
    RecordWriter w(p, Compression::kNone, 0);
    for (int i = 0; i < count; ++i, ++index) {
      char rec[16];
      std::snprintf(rec, sizeof rec, "r%06d", index);
      const std::string record =
          std::string(rec) + std::string(static_cast<size_t>((index * 37) % 300), 'x');
      w.write(record.data(), record.size());
    }
    w.close();
    files.push_back(p);
  }
  for (bool statistics : {true, false}) {
    SCOPED_TRACE(statistics ? "statistics on" : "statistics off");
    Options o;
    o.statistics = statistics;
    DatasetPtr ds = make_with_options(
        make_repeat(make_shuffle(make_records(files, Compression::kNone, 4096), 40, 6, true), 2),
        o);
    std::vector<std::string> expected = all_of(ds);
    ASSERT_EQ(expected.size(), 2u * static_cast<size_t>(index));
    for (size_t k = 0; k <= expected.size() + 1; k += (k % 7 == 0 ? 1 : 3)) {
      IteratorContext ctx;
      ctx.epochs = std::make_shared<EpochCounters>();
      auto it = make_pipeline_iterator(ds, ctx);
      std::vector<std::string> got;
      Element e;
      bool ended = false;
      while (got.size() < k && !(ended = !it->next(e))) got.push_back(text(e));
      const std::string state = save_state(*ds, *ds, ended ? nullptr : it.get(), ended);
      IteratorContext again;
      RestoredIterator restored = restore_state(ds, again, state);
      if (restored.iterator)
        for (const std::string& t : test::drain_as(*restored.iterator, text)) got.push_back(t);
      ASSERT_EQ(got, expected) << "saved after " << k << " elements";
    }
  }
}

// The shuffle section of a state, taken apart where its addresses begin: `head` is the
// payload before the section, `fields` the section up to the address form's marker, `rest`
// what follows the marker. with() puts a changed section back and seals the state again.
struct ShuffleSection {
  std::string head, fields, rest;
  uint64_t marker = 0;
  int64_t read = 0;
  explicit ShuffleSection(const std::string& state) {
    const std::string payload(open_state(state));
    StateReader r(payload, 0, "test");
    for (uint64_t n = r.u64("operations"); n > 0; --n) r.bytes("operation");
    for (uint64_t n = r.u64("seeds"); n > 0; --n) r.u64("index"), r.u64("seed");
    EXPECT_FALSE(r.flag("ended"));
    head = payload.substr(0, r.offset());
    StateReader sh = r.section("shuffle");
    const uint64_t inner_at = sh.offset();
    sh.u64("seed"), sh.u64("epoch"), sh.i64("drawn");
    read = sh.i64("read");
    sh.flag("ended"), sh.i64("position"), sh.bytes("input");
    const uint64_t marker_at = sh.offset();
    marker = sh.u64("marker");
    fields = payload.substr(inner_at, marker_at - inner_at);
    rest = payload.substr(sh.offset());
  }
  std::string with(uint64_t new_marker, const std::string& new_rest) const {
    StateWriter m;
    m.u64(new_marker);
    StateWriter section;
    section.bytes("shuffle");
    section.bytes(fields + m.data() + new_rest);
    return seal_state(head + section.data());
  }
};

constexpr uint64_t kSegmentsMarker = ~uint64_t{0} - 1;

// Records of one size: every buffered element's address follows from its input index, so a
// save describes the buffer by segments (a few bytes per file) and points the input back to
// the read position. The restore reads the buffer by address alone: the records delivered
// before the save are not read again, not even their length fields.
TEST_F(ShuffleRestore, RecordsOfOneSizeAreAllReadByAddress) {
  std::string f = records("w", Compression::kNone, 0, 2000);
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), 32, 9, false);
  SavePoint p = save_after(ds, 1000);
  EXPECT_EQ(ShuffleSection(p.state).marker, kSegmentsMarker);
  EXPECT_LT(p.state.size(), 200u);
  std::string content = read(f);
  for (const auto& r : p.before) damage_length(content, index_of(r));
  write(f, content);
  EXPECT_EQ(restored_rest(ds, p.state), p.after);
  // A buffered record's damage is still DATA_LOSS naming its offset.
  content = read(f);
  damage_data(content, p.oldest_buffered);
  write(f, content);
  Error e = error_of([&] { restored_rest(ds, p.state); });
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  EXPECT_NE(
      std::string(e.what()).find("at byte offset " + std::to_string(offset_of(p.oldest_buffered))),
      std::string::npos)
      << e.what();
}

// A large buffer over records of one size: the state stays a few hundred bytes at every
// point, where the span form fills its 2 KiB of addresses; the restore, which reads 30,000
// elements by address on two threads, resumes exactly.
TEST_F(ShuffleRestore, SegmentStatesStaySmall) {
  std::vector<std::string> files = {records("a", Compression::kNone, 0, 60000),
                                    records("b", Compression::kNone, 60000, 40000)};
  DatasetPtr ds = make_shuffle(make_records(files, Compression::kNone, 0), 30000, 1, false);
  std::vector<std::string> expected = all_of(ds);
  size_t largest = 0;
  for (size_t k : {size_t{0}, size_t{15000}, size_t{50000}, size_t{59990}, size_t{99999}}) {
    std::string state;
    ASSERT_EQ(resumed(ds, k, &state), expected) << "saved after " << k;
    largest = std::max(largest, state.size());
    if (k == 50000) {
      EXPECT_EQ(ShuffleSection(state).marker, kSegmentsMarker);
    }
  }
  EXPECT_LE(largest, 300u);
}

// A restore from segments keeps them: a save after it, a few elements on, uses segments
// again and resumes exactly; so does a third generation.
TEST_F(ShuffleRestore, SegmentsCarryOverARestore) {
  std::vector<std::string> files = {records("a", Compression::kNone, 0, 700),
                                    records("b", Compression::kNone, 700, 500)};
  DatasetPtr ds = make_shuffle(make_records(files, Compression::kNone, 0), 64, 4, false);
  const std::vector<std::string> expected = all_of(ds);
  std::string state;
  std::vector<std::string> got = test::resumed_as(ds, 600, text, &state);
  ASSERT_EQ(got, expected);
  size_t taken = 600;
  for (int generation = 0; generation < 2; ++generation) {
    SCOPED_TRACE(generation);
    ASSERT_EQ(ShuffleSection(state).marker, kSegmentsMarker);
    IteratorContext ctx;
    RestoredIterator restored = restore_state(ds, ctx, state);
    Element e;
    for (int k = 0; k < 150; ++k, ++taken) {
      ASSERT_TRUE(restored.iterator->next(e));
      ASSERT_EQ(text(e), expected[taken]);
    }
    state = save_state(*ds, *ds, restored.iterator.get(), false);
    std::vector<std::string> rest = restored_rest(ds, state);
    ASSERT_EQ(rest, std::vector<std::string>(expected.begin() + static_cast<std::ptrdiff_t>(taken),
                                             expected.end()));
  }
}

// Segments that leave a buffered element out, or claim more elements than were read, are
// DATA_LOSS.
TEST_F(ShuffleRestore, DamagedSegmentsAreDataLoss) {
  std::string f = records("w", Compression::kNone, 0, 2000);
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), 32, 9, false);
  SavePoint p = save_after(ds, 1000);
  const ShuffleSection section(p.state);
  ASSERT_EQ(section.marker, kSegmentsMarker);
  StateReader r(section.rest, 0, "test");
  const uint64_t n = r.u64("segments");
  const int64_t first = r.i64("first");
  const int64_t length = r.i64("length");
  const std::string after_length = section.rest.substr(r.offset());
  // The first segment made to begin at new_first and end at first + length + longer.
  auto with_first = [&](int64_t new_first, int64_t longer) {
    StateWriter w;
    w.u64(n);
    w.i64(new_first);
    w.i64(first + length + longer - new_first);
    return section.with(kSegmentsMarker, w.data() + after_length);
  };
  EXPECT_EQ(restored_rest(ds, with_first(first, 0)), p.after);  // re-sealed as it was
  ASSERT_LE(first, p.oldest_buffered);
  Error e = error_of([&] { restored_rest(ds, with_first(p.oldest_buffered + 1, 0)); });
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  EXPECT_NE(std::string(e.what()).find("no saved segment holds it"), std::string::npos) << e.what();
  e = error_of([&] { restored_rest(ds, with_first(first, section.read)); });
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  EXPECT_NE(std::string(e.what()).find("length of a segment"), std::string::npos) << e.what();
}

// States written before the addresses were packed hold, per element, the differences of its
// input index, file and offset from the element before: they still restore. The test turns
// a state's packed addresses into that form (the records lie kStride apart in one file).
TEST_F(ShuffleRestore, AddressesInTheEarlierFormRestore) {
  varied_ = true;  // the span form: no segments of one stride
  std::string f = records("w", Compression::kNone, 0, 2000);
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), 32, 9, false);
  SavePoint p = save_after(ds, 1000);
  const std::string payload(open_state(p.state));
  StateReader r(payload, 0, "test");
  for (uint64_t n = r.u64("operations"); n > 0; --n) r.bytes("operation");
  for (uint64_t n = r.u64("seeds"); n > 0; --n) r.u64("index"), r.u64("seed");
  ASSERT_FALSE(r.flag("ended"));
  const uint64_t section_at = r.offset();
  StateReader sh = r.section("shuffle");
  const uint64_t inner_at = sh.offset();
  sh.u64("seed"), sh.u64("epoch"), sh.i64("drawn");
  const int64_t read_count = sh.i64("read");
  sh.flag("ended"), sh.i64("position"), sh.bytes("input");
  const uint64_t addresses_at = sh.offset();
  ASSERT_EQ(sh.u64("marker"), ~uint64_t{0});
  const uint64_t count = sh.u64("count");
  ASSERT_GT(count, 0u);
  // The oldest `count` elements still buffered, by input index.
  std::vector<bool> delivered(2000, false);
  for (const auto& rec : p.before) delivered[static_cast<size_t>(index_of(rec))] = true;
  StateWriter earlier;
  earlier.u64(count);
  int64_t previous = 0, found = 0;
  for (int64_t i = 0; i < read_count && found < static_cast<int64_t>(count); ++i) {
    if (delivered[static_cast<size_t>(i)]) continue;
    earlier.i64(i - previous);
    earlier.i64(0);
    earlier.i64(static_cast<int64_t>(offset_of(i) - offset_of(previous)));
    previous = i;
    ++found;
  }
  StateWriter section;
  section.bytes("shuffle");
  section.bytes(payload.substr(inner_at, addresses_at - inner_at) + earlier.data());
  const std::string state = seal_state(payload.substr(0, section_at) + section.data());
  EXPECT_EQ(restored_rest(ds, state), p.after);
}

// A shuffle section written before addresses existed ends before their count: it restores
// as one without addresses.
TEST(ShuffleState, ASectionWithoutTheAddressCountRestores) {
  DatasetPtr ds = make_shuffle(make_range(0, 100, 1), 10, 4, false);
  auto as_text = [](const Element& e) { return std::to_string(e[0].data_as<int64_t>()[0]); };
  std::vector<std::string> expected = test::all_as(ds, as_text);
  std::string state;
  ASSERT_EQ(test::resumed_as(ds, 40, as_text, &state), expected);
  // The root section is last: "shuffle", its length L as a varint, L bytes ending in the
  // count 0. Drop that byte, shorten L, and seal the payload again.
  std::string payload(open_state(state));
  auto varint = [](uint64_t v) {
    std::string out;
    for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>(v | 0x80));
    out.push_back(static_cast<char>(v));
    return out;
  };
  ASSERT_EQ(payload.back(), '\0');
  bool found = false;
  for (size_t len = 1; len + 8 < payload.size() && !found; ++len) {
    const std::string l = varint(len);
    const size_t at = payload.size() - len - l.size();
    if (payload.compare(at, l.size(), l) != 0 || payload.compare(at - 7, 7, "shuffle") != 0)
      continue;
    payload = payload.substr(0, at) + varint(len - 1) + payload.substr(at + l.size(), len - 1);
    found = true;
  }
  ASSERT_TRUE(found);
  IteratorContext ctx;
  RestoredIterator restored = restore_state(ds, ctx, seal_state(payload));
  EXPECT_EQ(test::drain_as(*restored.iterator, as_text),
            std::vector<std::string>(expected.begin() + 40, expected.end()));
}

// The record iterator's own skip and addresses.
TEST_F(ShuffleRestore, RecordIteratorSkipsAndReadsAtAddresses) {
  std::vector<std::string> files = {records("a", Compression::kNone, 0, 50),
                                    records("b", Compression::kNone, 50, 0),
                                    records("c", Compression::kNone, 50, 50)};
  IteratorContext ctx;
  auto it = make_records(files, Compression::kNone, 4096)->make_iterator(ctx);
  ASSERT_TRUE(it->addressable());
  Element e;
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(it->skip(30), 30);
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(index_of(text(e)), 31);
  EXPECT_EQ(it->skip(40), 40);  // across the empty file
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(index_of(text(e)), 72);
  Iterator::Address at = it->last_address();
  EXPECT_EQ(at.file, 2u);
  EXPECT_EQ(at.offset, 22 * kStride);
  Element again;
  it->read_at(at, again);
  EXPECT_EQ(text(again), text(e));
  EXPECT_EQ(it->skip(100), 27);  // the end
  EXPECT_FALSE(it->next(e));
  Error bad = error_of([&] { it->read_at(Iterator::Address{2, 22 * kStride + 1}, again); });
  EXPECT_EQ(bad.code(), Code::kDataLoss) << bad.what();
  bad = error_of([&] { it->read_at(Iterator::Address{0, 10000 * kStride}, again); });
  EXPECT_EQ(bad.code(), Code::kDataLoss) << bad.what();
  bad = error_of([&] { it->read_at(Iterator::Address{3, 0}, again); });
  EXPECT_EQ(bad.code(), Code::kDataLoss) << bad.what();
  // Compressed files have no addresses.
  if (compression_supported(Compression::kGzip)) {
    auto gz = make_records({records("g", Compression::kGzip, 0, 3)}, Compression::kGzip, 0)
                  ->make_iterator(ctx);
    EXPECT_FALSE(gz->addressable());
  }
}

// select() passes over a run and hands out the records at the offsets asked for, as skip()
// and next() would, also when some records were parsed already, across an empty file and
// at the end of the data; last_address() is the handed record's.
TEST_F(ShuffleRestore, RecordIteratorSelectsAsSkipAndNextWould) {
  std::vector<std::string> files = {records("a", Compression::kNone, 0, 130),
                                    records("b", Compression::kNone, 130, 0),
                                    records("c", Compression::kNone, 130, 170)};
  IteratorContext ctx;
  const DatasetPtr ds = make_records(files, Compression::kNone, 4096);
  for (int64_t before : {0, 1, 5}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE(std::to_string(before) + " taken first, seed " + std::to_string(seed));
      auto it = ds->make_iterator(ctx);
      Element e;
      for (int64_t i = 0; i < before; ++i) ASSERT_TRUE(it->next(e));
      std::vector<int64_t> keep;
      uint32_t x = seed;
      for (int64_t i = 0; i < 280; ++i) {
        x = x * 1103515245u + 12345u;
        if ((x >> 16) % 3 == 0) keep.push_back(i);
      }
      std::vector<std::string> got;
      std::vector<size_t> order;
      const int64_t passed = it->select(280, keep, [&](size_t k, Element& el) {
        order.push_back(k);
        got.push_back(text(el));
        Element again;
        it->read_at(it->last_address(), again);
        EXPECT_EQ(text(again), text(el));
      });
      EXPECT_EQ(passed, 280);
      ASSERT_EQ(got.size(), keep.size());
      for (size_t k = 0; k < keep.size(); ++k) {
        EXPECT_EQ(order[k], k);
        EXPECT_EQ(index_of(got[k]), before + keep[k]);
      }
      ASSERT_TRUE(it->next(e));
      EXPECT_EQ(index_of(text(e)), before + 280);
      // Past the end: fewer passed, the kept records before the end handed out.
      got.clear();
      const int64_t last = 300 - before - 281 - 1;  // the last record's offset
      EXPECT_EQ(it->select(100, {0, last, last + 1},
                           [&](size_t, Element& el) { got.push_back(text(el)); }),
                last + 1);
      ASSERT_EQ(got.size(), 2u);
      EXPECT_EQ(index_of(got[1]), 299);
      EXPECT_FALSE(it->next(e));
    }
  }
}

// select_split() with the records iterator's state `at` elements on passes over the two
// parts on two threads and hands out the same records in the same order as select(), with
// their addresses, whether the middle lies inside a file or at the start of one (the two
// parts then run in turn), and goes on after the run; a middle that does not lie where the
// first part ends is DATA_LOSS, and so is the first part's damage before the second's.
TEST_F(ShuffleRestore, RecordIteratorSelectsInTwoPartsAsInOne) {
  std::vector<std::string> files = {records("a", Compression::kNone, 0, 130),
                                    records("b", Compression::kNone, 130, 0),
                                    records("c", Compression::kNone, 130, 170)};
  IteratorContext ctx;
  const DatasetPtr ds = make_records(files, Compression::kNone, 4096);
  // The iterator's state before element i.
  auto state_before = [&](int64_t i) {
    auto it = ds->make_iterator(ctx);
    Element e;
    for (int64_t k = 0; k < i; ++k) EXPECT_TRUE(it->next(e));
    return save_to_bytes(*it);
  };
  // 5 taken with next() leave parsed records behind (then it is one pass), 7 passed over by
  // skip() do not.
  for (int64_t before : {0, 5, 7}) {
    for (int64_t at : {int64_t{1}, int64_t{60}, 125 - before, 130 - before, int64_t{200}}) {
      SCOPED_TRACE(std::to_string(before) + " taken first, split at " + std::to_string(at));
      auto it = ds->make_iterator(ctx);
      Element e;
      if (before == 7) {
        ASSERT_EQ(it->skip(before), before);
      }
      for (int64_t i = 0; before == 5 && i < before; ++i) ASSERT_TRUE(it->next(e));
      std::vector<int64_t> keep;
      for (int64_t i = 0; i < 280; i += 1 + i % 4) keep.push_back(i);
      std::vector<std::string> got;
      std::vector<size_t> order;
      const int64_t passed = it->select_split(
          280, keep,
          [&](size_t k, Element& el) {
            order.push_back(k);
            got.push_back(text(el));
            Element again;
            it->read_at(it->last_address(), again);
            EXPECT_EQ(text(again), text(el));
          },
          at, state_before(before + at));
      EXPECT_EQ(passed, 280);
      ASSERT_EQ(got.size(), keep.size());
      for (size_t k = 0; k < keep.size(); ++k) {
        EXPECT_EQ(order[k], k);
        EXPECT_EQ(index_of(got[k]), before + keep[k]);
      }
      ASSERT_TRUE(it->next(e));
      EXPECT_EQ(index_of(text(e)), before + 280);
      // Past the end: fewer passed, the kept records before the end handed out.
      got.clear();
      const int64_t left = 300 - before - 281;
      EXPECT_EQ(it->select_split(
                    100, {0, left - 1, left}, [&](size_t, Element& el) { got.push_back(text(el)); },
                    5, state_before(before + 281 + 5)),
                left);
      ASSERT_EQ(got.size(), 2u);
      EXPECT_EQ(index_of(got[1]), 299);
      EXPECT_FALSE(it->next(e));
    }
  }
  // The state of element 61 given as element 60's.
  const std::string at_200 = state_before(200);
  auto it = ds->make_iterator(ctx);
  Error e = error_of([&] {
    it->select_split(
        280, {0, 100}, [](size_t, Element&) {}, 60, state_before(61));
  });
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  EXPECT_NE(std::string(e.what()).find("did the files change"), std::string::npos) << e.what();
  // Broken length fields in both parts: the first part's is the one reported.
  const std::string intact = read(files[0]), intact_c = read(files[2]);
  std::string content = intact;
  damage_length(content, 40);
  write(files[0], content);
  content = intact_c;
  damage_length(content, 100);  // record 230 of the run
  write(files[2], content);
  it = ds->make_iterator(ctx);
  e = error_of([&] {
    it->select_split(
        280, {0}, [](size_t, Element&) {}, 200, at_200);
  });
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  EXPECT_NE(std::string(e.what()).find("at byte offset " + std::to_string(40 * kStride) + " of"),
            std::string::npos)
      << e.what();
  write(files[0], intact);
  it = ds->make_iterator(ctx);
  e = error_of([&] {
    it->select_split(
        280, {0}, [](size_t, Element&) {}, 200, at_200);
  });
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  EXPECT_NE(std::string(e.what()).find("at byte offset " + std::to_string(100 * kStride) + " of"),
            std::string::npos)
      << e.what();
}

// A run long enough to be split between two threads (a buffer of 4,000 reads about 9,000
// elements again), over three files, saved at points of the epoch and after its end, with
// the statistics on and off: the resumed stream is the uninterrupted one.
TEST_F(ShuffleRestore, SplitRunsResumeWithStatisticsOnAndOff) {
  varied_ = true;  // the span form: no segments of one stride
  std::vector<std::string> files = {records("a", Compression::kNone, 0, 11000),
                                    records("b", Compression::kNone, 11000, 9000),
                                    records("c", Compression::kNone, 20000, 10000)};
  for (bool statistics : {true, false}) {
    SCOPED_TRACE(statistics ? "statistics on" : "statistics off");
    Options o;
    o.statistics = statistics;
    DatasetPtr ds = make_with_options(
        make_shuffle(make_records(files, Compression::kNone, 0), 4000, 11, false), o);
    std::vector<std::string> expected = all_of(ds);
    for (size_t k : {size_t{9000}, size_t{15000}, size_t{21000}, size_t{29990}, size_t{30000}})
      ASSERT_EQ(resumed(ds, k), expected) << "saved after " << k;
  }
}

// The shuffle's section ends with where the run may be split: the position and the input's
// state there. A state without it (written before it existed) restores with one pass, and
// one whose middle is moved by an element is DATA_LOSS.
TEST_F(ShuffleRestore, ASectionWithoutTheSplitRestores) {
  varied_ = true;  // the span form: no segments of one stride
  std::string f = records("w", Compression::kNone, 0, 30000);
  DatasetPtr ds = make_shuffle(make_records({f}, Compression::kNone, 0), 4000, 3, false);
  SavePoint p = save_after(ds, 15000);
  const std::string payload(open_state(p.state));
  StateReader r(payload, 0, "test");
  for (uint64_t n = r.u64("operations"); n > 0; --n) r.bytes("operation");
  for (uint64_t n = r.u64("seeds"); n > 0; --n) r.u64("index"), r.u64("seed");
  ASSERT_FALSE(r.flag("ended"));
  const uint64_t section_at = r.offset();
  StateReader sh = r.section("shuffle");
  const uint64_t inner_at = sh.offset();
  const std::string body = payload.substr(inner_at);
  // The split is the shortest tail that reads as a position and a records section and starts
  // a varint (the byte before it ends one).
  size_t split_at = body.size();
  int64_t middle = 0;
  std::string middle_state;
  for (size_t j = body.size() - 1; j > 0 && split_at == body.size(); --j) {
    if (static_cast<unsigned char>(body[j - 1]) & 0x80) continue;
    try {
      StateReader t(std::string_view(body).substr(j), 0, "test");
      const int64_t position = t.i64("position");
      const std::string state = t.bytes("state");
      if (!t.at_end() ||
          state.compare(0, 1 + std::strlen("records"), std::string(1, '\x07') + "records") != 0)
        continue;
      split_at = j;
      middle = position;
      middle_state = state;
    } catch (const Error&) {
    }
  }
  ASSERT_LT(split_at, body.size()) << "the state has no split";
  ASSERT_GT(middle, 15000);
  auto with_body = [&](const std::string& inner) {
    StateWriter section;
    section.bytes("shuffle");
    section.bytes(inner);
    return seal_state(payload.substr(0, section_at) + section.data());
  };
  EXPECT_EQ(restored_rest(ds, with_body(body)), p.after);  // the state re-sealed as it was
  EXPECT_EQ(restored_rest(ds, with_body(body.substr(0, split_at))), p.after);
  StateWriter moved;
  moved.i64(middle + 1);
  moved.bytes(middle_state);
  Error e =
      error_of([&] { restored_rest(ds, with_body(body.substr(0, split_at) + moved.data())); });
  EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  // A split cut short (its position without the input's state), one outside the run, and one
  // whose input state is not a records section: DATA_LOSS, not a restore of another stream.
  StateWriter cut, outside, garbled;
  cut.i64(middle);
  outside.i64(middle + 100000);
  outside.bytes(middle_state);
  garbled.i64(middle);
  garbled.bytes("not a section");
  for (const StateWriter* w : {&cut, &outside, &garbled}) {
    e = error_of([&] { restored_rest(ds, with_body(body.substr(0, split_at) + w->data())); });
    EXPECT_EQ(e.code(), Code::kDataLoss) << e.what();
  }
}

}  // namespace
}  // namespace dinput
