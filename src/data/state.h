// Iterator states (checkpoints): the encoding of one iterator's section, and the container
// that holds a whole pipeline's state with its version, checksum and fingerprint. The format
// and what each operation stores are in docs/checkpoint.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/dataset.h"

namespace dinput {

// Appends fields: unsigned and zigzag-signed varints, flags, and length-prefixed bytes.
class StateWriter {
 public:
  void u64(uint64_t v);
  void i64(int64_t v) { u64((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void flag(bool b) { u64(b ? 1 : 0); }
  void bytes(std::string_view b);
  // Appends bytes another writer produced as they are: a section saved earlier (a snapshot
  // of an input) embedded where that input's section belongs.
  void raw(std::string_view b) { out_.append(b.data(), b.size()); }
  // The section of one iterator: the operation's name, then what `body` writes into a
  // writer of its own, length-prefixed so that a reader can check where it ends.
  template <typename Body>
  void section(const char* name, Body&& body) {
    StateWriter inner;
    std::forward<Body>(body)(inner);
    bytes(name);
    bytes(inner.out_);
  }
  const std::string& data() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what a StateWriter wrote, checking every read: running past the end, a value out of
// its range, or a section of another operation is DATA_LOSS naming the operation whose
// section is read, the field, and the byte offset in the whole state.
class StateReader {
 public:
  // `data` begins at byte `offset` of the state; `node` names its section in messages.
  StateReader(std::string_view data, uint64_t offset, std::string node)
      : data_(data), base_(offset), node_(std::move(node)) {}

  uint64_t u64(const char* field);
  int64_t i64(const char* field);
  bool flag(const char* field);
  std::string bytes(const char* field);
  // i64 that must lie in [lo, hi].
  int64_t i64_in(const char* field, int64_t lo, int64_t hi);
  uint64_t u64_in(const char* field, uint64_t lo, uint64_t hi);
  // The next section, which must be `name`'s; it is consumed from this reader whole.
  StateReader section(const char* name);
  // DATA_LOSS unless every byte was read.
  void finish() const;
  // Whether every byte was read: a field appended to a section later is absent from states
  // written before it.
  bool at_end() const { return pos_ == data_.size(); }
  // DATA_LOSS at the current offset: "... section 'node', offset N: what".
  [[noreturn]] void corrupt(const std::string& what) const;

  const std::string& node() const { return node_; }
  uint64_t offset() const { return base_ + pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  uint64_t base_;
  std::string node_;
};

// Saves `input`'s section into bytes of their own, for nodes that
// keep their input's state aside (snapshots of read-ahead, a shuffle's oldest position).
std::string save_to_bytes(const Iterator& input);

// Restores `it` from a bytes field of `r` that holds a section save_to_bytes wrote.
void restore_from_bytes(StateReader& r, const char* field, Iterator& it);

// The section of a node whose only state of its own is whether its input ended (batch,
// padded_batch): that flag, then the input's state while it has not ended.
void save_unless_ended(StateWriter& w, const char* section, bool ended, const Iterator& input);
// Restores what save_unless_ended wrote into `input`; returns the flag.
bool restore_unless_ended(StateReader& r, const char* section, Iterator& input);

// One canonical description per operation of the graph, in pre-order from `ds` (an
// operation, then its inputs): "name(arguments)".
std::vector<std::string> pipeline_fingerprint(const Dataset& ds);

// The whole state of `it`, an iterator of `ds` (ended: the iterator has
// delivered its last element and has no iterator left). `ds` is the pipeline as the caller
// built it, whose fingerprint the state carries; `effective` the one iterated, which may be
// a copy of it with other random seeds (RestoredIterator::dataset). UNIMPLEMENTED naming
// the first operation that cannot save.
std::string save_state(const Dataset& ds, const Dataset& effective, const Iterator* it, bool ended);
// The same from the root iterator's section saved earlier (null: ended), for callers that
// keep it aside (a distributed iterator's splitter holds its input's state from before a
// batch).
std::string save_state_of_section(const Dataset& ds, const Dataset& effective,
                                  const std::string* section);

// The container around a payload: magic, version, length and checksum (docs/checkpoint.md),
// and the payload of a container after checking them (DATA_LOSS saying what is wrong).
std::string seal_state(const std::string& payload);
std::string_view open_state(std::string_view state);

struct RestoredIterator {
  // `ds`, or a copy of it with the random seeds the saved pipeline had drawn.
  DatasetPtr dataset;
  // Positioned where the saved iterator was; null when the saved iterator had ended.
  std::unique_ptr<Iterator> iterator;
};

// Checks a state made by save_state against `ds`: DATA_LOSS for a damaged or truncated
// state or an unknown version, FAILED_PRECONDITION naming the first operation that differs
// when it was saved from another pipeline. Gives ctx epoch counters of its own (which the
// restored iterators set), then makes and restores the iterator.
RestoredIterator restore_state(const DatasetPtr& ds, IteratorContext& ctx, std::string_view state);

// The CRC32C of the bytes of a list of strings, for fingerprints of file lists: "N:crc".
std::string list_digest(const std::vector<std::string>& items);

}  // namespace dinput
