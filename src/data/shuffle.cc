// shuffle: a buffer of elements from which a seeded generator picks the next one.
//
// Its saved state holds no element (docs/checkpoint.md): the seed, the epoch, how many
// elements were drawn and read, and the input's state at a position no later than the
// oldest element still buffered. Which input element sits in which slot depends only on the
// generator, so a restore replays the draws on input indices, then reads the input again
// from that position, keeping the elements the buffer held and passing over the others.
// Over an addressable input (uncompressed record files) the position is only a few buffers
// back: the elements held longer than that (a few hundred of the buffer's) are saved as
// their addresses and read one by one. Over records of one size the addresses of the whole
// buffer follow from a few segments of the input, and the restore reads it all by address.
#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <new>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "core/compact.h"
#include "core/seed.h"
#include "core/thread.h"
#include "data/input_snapshots.h"
#include "data/nodes.h"
#include "data/stage_stats.h"
#include "data/state.h"

namespace dinput {

namespace {

class ShuffleIterator final : public Iterator, public BufferedIterator {
 public:
  int64_t buffered() const override { return static_cast<int64_t>(buffer_.size()); }
  int64_t buffer_capacity() const override { return static_cast<int64_t>(capacity_); }
  void count_copies_into(std::atomic<int64_t>* bytes) override { copied_bytes_ = bytes; }

  // input_size: the input's cardinality (negative: infinite or unknown), which bounds what a
  // restored state may claim to have read (the draws are replayed one by one).
  ShuffleIterator(std::unique_ptr<Iterator> input, int64_t buffer_size, uint64_t seed,
                  uint64_t epoch, int64_t input_size)
      : input_(std::move(input)),
        input_size_(input_size),
        capacity_(static_cast<size_t>(buffer_size)),
        addressable_(input_->addressable()),
        addresses_(input_->unwrapped()),
        // Over an addressable input the save point is chosen among the snapshots, and
        // finer ones shorten the re-read.
        snapshot_every_(addressable_ ? (buffer_size + 31) / 32 : (buffer_size + 7) / 8),
        seed_(seed),
        epoch_(epoch),
        rng_(seed) {}

  bool next(Element& out) override {
    while (filling()) {
      Element e;
      if (!read(e)) break;
      if (index_.empty()) oldest_ = read_ - 1;  // later elements are younger
      buffer_.push_back(std::move(e));
      index_.push_back(read_ - 1);
      if (addressable_) {
        address_.push_back(addresses_->last_address());
        track(read_ - 1, address_.back());
      }
    }
    if (buffer_.empty()) return false;
    const size_t pick = draw();
    // The caller's element array takes the drawn one's place, to be filled in place by the
    // input (a record source reuses it: no allocation per element).
    out.swap(buffer_[pick]);
    Element& hole = buffer_[pick];
    hole.clear();
    ++drawn_;
    // Only drawing the oldest element (1 in buffer_size) changes which is oldest.
    const bool drew_oldest = index_[pick] == oldest_;
    // Refill the hole with a fresh input element when there is one, else close it.
    if (!input_done_ && read(hole)) {
      index_[pick] = read_ - 1;
      if (addressable_) {
        address_[pick] = addresses_->last_address();
        track(read_ - 1, address_[pick]);
      }
    } else {
      buffer_[pick] = std::move(buffer_.back());
      buffer_.pop_back();
      index_[pick] = index_.back();
      index_.pop_back();
      if (addressable_) {
        address_[pick] = address_.back();
        address_.pop_back();
      }
    }
    if (drew_oldest && !index_.empty()) oldest_ = *std::min_element(index_.begin(), index_.end());
    if (drawn_ >= next_compaction_) compact_long_held();
    draw_ahead();
    return true;
  }

  void save(StateWriter& w) const override {
    snapshots_.check();
    w.section("shuffle", [&](StateWriter& s) {
      s.u64(seed_);
      s.u64(epoch_);
      s.i64(drawn_);
      s.i64(read_);
      s.flag(input_done_);
      if (input_done_ && buffer_.empty()) return;  // nothing left to read again
      if (snapshots_.list().empty()) {  // nothing read yet: the input is where it started
        s.i64(read_);
        s.bytes(save_to_bytes(*input_));
        save_stragglers(s, read_, {});  // nothing read: nothing buffered
        return;
      }
      std::vector<std::pair<int64_t, size_t>> older;
      // Every buffered element by address, computed from its input index (records of one
      // size), where the segments cover the buffer: the input is pointed back to the newest
      // snapshot, and the restore reads the buffer by address alone.
      const bool by_segments = segments_cover(oldest_needed());
      const InputSnapshots::Snapshot& base =
          snapshots_.at_or_before(by_segments ? read_ : save_point(older));
      s.i64(base.position);
      s.bytes(base.state);
      // (save_split weighs addresses only for a run long enough to split, which the
      // segments' form, pointing back to the newest snapshot, seldom has.)
      size_t addresses = 0;
      if (by_segments)
        save_segments(s, base.position);
      else
        addresses = save_stragglers(s, base.position, older);
      save_split(s, base.position, addresses);
    });
  }

  void restore(StateReader& r) override {
    StateReader s = r.section("shuffle");
    seed_ = s.u64("seed");
    epoch_ = s.u64("epoch");
    const int64_t drawn = s.i64_in("elements drawn", 0, INT64_MAX);
    const int64_t read =
        s.i64_in("elements read", drawn, input_size_ >= 0 ? input_size_ : INT64_MAX);
    const bool done = s.flag("input ended");
    if (read - drawn > static_cast<int64_t>(capacity_))
      s.corrupt(str_cat(read - drawn, " elements buffered but the buffer holds ", capacity_));
    rng_.seed(seed_);
    next_pick_ = kNoPick;
    // The rest does not depend on the replay, and is read first (a state that holds no
    // buffered element ends here), so that the memory for the buffer's records can be
    // faulted in on another thread while this one replays the draws.
    const bool holds = !(done && read == drawn);  // read - drawn elements are buffered
    int64_t position = 0;
    std::string base_state;
    uint64_t base_at = 0, form = 0;
    std::deque<Segment> saved;
    if (holds) {
      position = s.i64_in("position of the input's state", 0, read);
      base_state = s.bytes("the input's state");
      base_at = s.offset() - base_state.size();
      form = s.at_end() ? 0 : s.u64("stragglers");  // absent before addresses existed
      if (form == kSegmentAddresses) saved = read_segments(s, read);
    }
    Thread prefault;
    if (!saved.empty()) {
      uint64_t stride = 0;
      for (const Segment& g : saved) stride = std::max(stride, g.stride);
      const uint64_t bytes = static_cast<uint64_t>(read - drawn) * stride;
      try {
        prefault = Thread([this, bytes] { input_->prepare_reads(bytes); });
      } catch (const std::system_error&) {  // only a head start: the restore goes on without
      }
    }
    replay(s, drawn, read, done);
    if (done && index_.empty()) {
      input_done_ = true;
      s.finish();
      return;
    }
    const int64_t oldest = index_.empty() ? read : *std::min_element(index_.begin(), index_.end());
    oldest_ = oldest;
    InputSnapshots::Snapshot base{position, std::move(base_state)};
    StateReader in(base.state, base_at, "shuffle");
    input_->restore(in);
    in.finish();
    const std::vector<std::pair<int64_t, size_t>> wanted = slots_by_index(oldest, read);
    buffer_.assign(index_.size(), Element());
    address_.assign(addressable_ ? index_.size() : 0, Address());
    // The segments start again here unless the state has them.
    segments_.clear();
    segments_from_ = read;
    // The elements held since before the snapshot, by their addresses.
    const std::vector<Address> addresses =
        form == kSegmentAddresses ? segment_addresses(s, std::move(saved), wanted, position)
                                  : restore_stragglers(s, form, wanted, position);
    size_t next_wanted = addresses.size();
    // Where the run may be split (save_split); absent from states saved before it existed.
    int64_t split = 0;
    std::string split_state;
    if (!s.at_end()) {
      split = s.i64_in("middle of the run", position + 1, std::max(position + 1, read - 1));
      split_state = s.bytes("the input's state in the middle of the run");
    }
    s.finish();
    if (next_wanted < wanted.size() && wanted[next_wanted].first < position)
      s.corrupt("the input's saved position is after an element the buffer held");
    // They are read on a thread of their own while this one passes over the run below:
    // reading by address does not move the input (Iterator::read_at), and each fills slots
    // of its own. Its error, if any, is raised first, as when they were read before the run.
    // When every element but the few of a short run is saved by address (records of one
    // size), this thread reads the older half of them itself before the run.
    static const bool parallel = std::thread::hardware_concurrency() > 1;
    const auto run = static_cast<size_t>(read - position);  // about an address's work each
    const size_t own = parallel && split == 0 && addresses.size() >= kShareAbove + run
                           ? (addresses.size() - run) / 2
                           : 0;
    StragglerReader stragglers(*this, addresses, own, wanted);
    if (own > 0) read_stragglers(addresses, 0, own, wanted);
    // Read the input again from the snapshot up to where the saved shuffle had read,
    // keeping the elements that were in the buffer and passing over the others.
    auto ended = [&](int64_t at) {
      raise(Code::kDataLoss, "shuffle: restoring the iterator state: the input ended after ", at,
            " elements but the saved shuffle had read ", read,
            " (did the input data change since the save?)");
    };
    std::vector<int64_t> keep;
    keep.reserve(wanted.size() - next_wanted);
    for (size_t j = next_wanted; j < wanted.size() && wanted[j].first < read; ++j)
      keep.push_back(wanted[j].first - position);
    // Kept in input order first, then moved to their slots: the pass streams the files
    // through the cache, and writes to random slots during it would miss every time.
    std::vector<Element> kept(keep.size());
    std::vector<Address> kept_at(addressable_ ? keep.size() : 0);
    int64_t got = 0;
    try {
      const Iterator::Take take = [&](size_t k, Element& e) {
        kept[k] = std::move(e);
        if (addressable_) kept_at[k] = input_->last_address();
      };
      got = split > 0 && split < read
                ? input_->select_split(read - position, keep, take, split - position, split_state)
                : input_->select(read - position, keep, take);
    } catch (...) {
      stragglers.finish();  // its error first
      throw;
    }
    stragglers.finish();
    if (got < read - position) ended(position + got);
    for (size_t k = 0; k < kept.size(); ++k) {
      const size_t slot = wanted[next_wanted + k].second;
      buffer_[slot] = std::move(kept[k]);
      if (addressable_) address_[slot] = kept_at[k];
    }
    // The segments the state gave go on over the run read again, as its reads would have.
    if (!segments_.empty())
      for (size_t k = 0; k < kept.size(); ++k)
        if (wanted[next_wanted + k].first >= segments_.back().end)
          track(wanted[next_wanted + k].first, kept_at[k]);
    next_wanted += keep.size();
    if (next_wanted != wanted.size())
      s.corrupt("the buffer held elements the saved shuffle had not read");
    read_ = read;
    drawn_ = drawn;
    input_done_ = done;
    compacted_below_ = 0;
    next_compaction_ = drawn;
    snapshots_.list().clear();
    snapshots_.list().push_back(std::move(base));
  }

 private:
  // Whether next() reads into the buffer before it draws.
  bool filling() const { return !input_done_ && buffer_.size() < capacity_; }

  // The slot next() hands out: the one draw_ahead drew, or a new draw.
  size_t draw() {
    if (next_pick_ != kNoPick) return std::exchange(next_pick_, kNoPick);
    return std::uniform_int_distribution<size_t>(0, buffer_.size() - 1)(rng_);
  }

  // Draws the next call's slot now, and asks the CPU for it: the slot is anywhere in a
  // buffer of thousands, and waiting for it was most of next()'s time. The draw is the one
  // that call would make, from the same generator over the same number of slots: nothing is
  // drawn ahead while that call would read into the buffer first (filling). A save records
  // the draws handed out, not the generator, and a restore replays them (replay), so the
  // extra draw is not in any state.
  void draw_ahead() {
    if (buffer_.empty() || filling()) return;
    next_pick_ = std::uniform_int_distribution<size_t>(0, buffer_.size() - 1)(rng_);
    __builtin_prefetch(&buffer_[next_pick_]);
    __builtin_prefetch(&index_[next_pick_]);
    if (addressable_) __builtin_prefetch(&address_[next_pick_]);
  }

  // Reads the next input element, first saving the input's state every snapshot_every_
  // elements so that a save can point the input back at the oldest buffered element.
  bool read(Element& e) {
    if (snapshots_.list().empty() || read_ % snapshot_every_ == 0) {
      snapshots_.take(*input_, read_);
      // Drop the snapshots that the oldest buffered element no longer needs.
      snapshots_.drop_before(oldest_needed());
    }
    if (!input_->next(e)) {
      input_done_ = true;
      return false;
    }
    ++read_;
    return true;
  }

  // Copies the records read kCompactAfter buffers or more before the newest out of the read
  // buffers they view (core/compact.h), every half buffer of draws, each pass's into one
  // block. A record stays in the buffer for a buffer's worth of draws on average, so a
  // fraction e^-kCompactAfter of them (about 14%) are copied; in exchange a read buffer lives
  // about 2.5 buffers' worth of reads after it was read, where the last of its n records to
  // leave the shuffle buffer would have kept it for H(n) buffers (H(2048) is 8.2). Records
  // whose read buffers hold more than 8 shuffle buffers' worth of records are left alone: the
  // shuffle never holds enough of one for the copies to free it. See docs/records.md,
  // "Memory behind a shuffle".
  void compact_long_held() {
    next_compaction_ = drawn_ + std::max<int64_t>(1, static_cast<int64_t>(capacity_) / 2);
    const int64_t below = read_ - kCompactAfter * static_cast<int64_t>(capacity_);
    if (below <= compacted_below_) return;
    compacting_.clear();
    for (size_t slot = 0; slot < index_.size(); ++slot)
      if (index_[slot] >= compacted_below_ && index_[slot] < below)
        compacting_.push_back(&buffer_[slot]);
    try {
      const size_t copied = compact_elements(compacting_, 8 * capacity_);
      if (copied_bytes_) bump(*copied_bytes_, static_cast<int64_t>(copied));
    } catch (const std::bad_alloc&) {
      // Only memory is at stake: the records not copied yet stay views, and the element
      // drawn is still delivered.
    }
    compacted_below_ = below;
  }

  // The earliest input position the buffer still needs: its oldest element, or the next
  // element to read when it is empty.
  int64_t oldest_needed() const { return index_.empty() ? read_ : oldest_; }

  // Where a save points the input back to (a snapshot at or before it is used): the oldest
  // element still buffered, or over an addressable input kSpanEighths/8 buffers before the
  // read position, when the addresses of the elements older than that fit kAddressBytes;
  // else just before the oldest whose address does not fit. `older` gets the buffered
  // (input index, slot) pairs older than the point returned, oldest first. A save is made
  // at every step of a distributed iterator: this sorts only those few.
  int64_t save_point(std::vector<std::pair<int64_t, size_t>>& older) const {
    older.clear();
    const int64_t oldest = oldest_needed();
    if (!addressable_ || index_.empty()) return oldest;
    const int64_t point = read_ - kSpanEighths * static_cast<int64_t>(capacity_) / 8;
    if (point <= oldest) return oldest;
    for (size_t slot = 0; slot < index_.size(); ++slot)
      if (index_[slot] < point) older.emplace_back(index_[slot], slot);
    // An address takes a byte at least: no more than kAddressBytes of them fit.
    if (older.size() > kAddressBytes) {
      std::nth_element(older.begin(), older.begin() + kAddressBytes, older.end());
      older.resize(kAddressBytes + 1);
    }
    sort_by_index(older, oldest, point);
    AddressCoder coder;
    StateWriter sized;
    for (size_t k = 0; k < older.size(); ++k) {
      coder.put(sized, older[k].first, address_[older[k].second]);
      if (sized.data().size() > kAddressBytes) {
        const int64_t cut = older[k].first;
        older.resize(k);
        return cut;
      }
    }
    return point;
  }

  // The buffer's (input index, slot) pairs by index. The indices are distinct and lie in
  // [oldest, read): when that range is not much wider than the buffer, marking each index
  // and collecting them in order is cheaper than sorting the pairs.
  std::vector<std::pair<int64_t, size_t>> slots_by_index(int64_t oldest, int64_t read) const {
    std::vector<std::pair<int64_t, size_t>> out;
    out.reserve(index_.size());
    const int64_t range = read - oldest;
    if (index_.size() < UINT32_MAX && range <= 16 * static_cast<int64_t>(index_.size()) + 4096) {
      std::vector<uint32_t> slot_at(static_cast<size_t>(std::max<int64_t>(range, 0)), 0);
      for (size_t slot = 0; slot < index_.size(); ++slot)
        slot_at[static_cast<size_t>(index_[slot] - oldest)] = static_cast<uint32_t>(slot + 1);
      for (size_t i = 0; i < slot_at.size(); ++i)
        if (slot_at[i] != 0) out.emplace_back(oldest + static_cast<int64_t>(i), slot_at[i] - 1);
      return out;
    }
    for (size_t slot = 0; slot < index_.size(); ++slot) out.emplace_back(index_[slot], slot);
    std::sort(out.begin(), out.end());
    return out;
  }

  // Sorts (input index, slot) pairs whose distinct indices lie in [lo, hi) by index: placed
  // by index into as many buckets as pairs, then put in order by insertion (the indices are
  // spread about evenly, so few move far). Linear, where std::sort of the 1,000 pairs a save
  // at every step sorts cost a few percent of W1's throughput.
  static void sort_by_index(std::vector<std::pair<int64_t, size_t>>& v, int64_t lo, int64_t hi) {
    const size_t n = v.size();
    const uint64_t range = static_cast<uint64_t>(hi - lo);
    if (n < 64 || range > (uint64_t{1} << 40)) {
      std::sort(v.begin(), v.end());
      return;
    }
    auto bucket = [&](int64_t i) {
      return std::min(n - 1, static_cast<size_t>(static_cast<uint64_t>(i - lo) * n / range));
    };
    std::vector<size_t> start(n + 1, 0);
    for (const auto& e : v) ++start[bucket(e.first) + 1];
    for (size_t b = 0; b < n; ++b) start[b + 1] += start[b];
    std::vector<std::pair<int64_t, size_t>> out(n);
    for (const auto& e : v) out[start[bucket(e.first)]++] = e;
    for (size_t k = 1; k < n; ++k)
      for (size_t j = k; j > 0 && out[j].first < out[j - 1].first; --j)
        std::swap(out[j], out[j - 1]);
    v.swap(out);
  }

  // The addresses of elements in input order, a byte or so each for records of one size: an
  // element's offset is predicted from the one before and the bytes per input element
  // between the two before (its stride), and only the difference is stored. Reader and
  // writer know the elements' input indices (the restore from replaying the draws), so the
  // indices are not stored. Per element one varint v: v odd starts a file (a zigzag varint,
  // the file index minus the one before, then the offset); v even is the difference from
  // the prediction, zigzag-encoded, times 2. All arithmetic wraps, as uint64_t: a bad state
  // gives a bad address, which reading it refuses.
  struct AddressCoder {
    Address at;
    uint64_t stride = 0;
    int64_t index = 0;
    bool started = false;

    void put(StateWriter& s, int64_t i, const Address& a) {
      const uint64_t step = static_cast<uint64_t>(i - index);
      const uint64_t miss = a.offset - (at.offset + step * stride);
      const uint64_t zigzag =
          (miss << 1) ^ (static_cast<uint64_t>(static_cast<int64_t>(miss) >> 63));
      if (started && a.file == at.file && zigzag < (uint64_t{1} << 63)) {
        s.u64(zigzag << 1);
        advance(i, a.offset);
      } else {
        s.u64(1);
        s.i64(static_cast<int64_t>(a.file - at.file));
        s.u64(a.offset);
        at = a;
        index = i;
        started = true;
      }
    }
    Address get(StateReader& s, int64_t i) {
      const uint64_t v = s.u64("straggler's address");
      if (v & 1) {
        at.file += static_cast<uint64_t>(s.i64("straggler's file"));
        at.offset = s.u64("straggler's offset");
        index = i;
        started = true;
        return at;
      }
      if (!started) s.corrupt("the first address saved names no file");
      const uint64_t zigzag = v >> 1;
      const uint64_t miss = (zigzag >> 1) ^ (~(zigzag & 1) + 1);
      advance(i, at.offset + static_cast<uint64_t>(i - index) * stride + miss);
      return at;
    }
    void advance(int64_t i, uint64_t offset) {
      stride = static_cast<uint64_t>(static_cast<int64_t>(offset - at.offset) / (i - index));
      at.offset = offset;
      index = i;
    }
  };

  // The buffered elements older than `position` (the saved input position), by address: the
  // marker kPackedAddresses, their count, then the addresses (AddressCoder). Without any, a
  // count of 0 alone, as before the marker existed. `older`: what save_point() gave, which
  // holds them first.
  size_t save_stragglers(StateWriter& s, int64_t position,
                         const std::vector<std::pair<int64_t, size_t>>& older) const {
    size_t count = 0;
    while (count < older.size() && older[count].first < position) ++count;
    if (count == 0) {
      s.u64(0);
      return 0;
    }
    s.u64(kPackedAddresses);
    s.u64(count);
    AddressCoder coder;
    for (size_t k = 0; k < count; ++k) coder.put(s, older[k].first, address_[older[k].second]);
    return count;
  }

  // Over an addressable input, where a restore splits the run it reads again, [position,
  // read_), between two threads (Iterator::select_split): the position and the input's state
  // of the snapshot near the point that leaves the second thread as much work as the first,
  // counting the `addresses` read meanwhile on a third (one costs about as much as passing
  // over kAddressRecords records). Written after the addresses, and only for a run of at
  // least kSplitAbove elements.
  void save_split(StateWriter& s, int64_t position, size_t addresses) const {
    const int64_t n = read_ - position;
    if (!addressable_ || n < kSplitAbove) return;
    const int64_t weighted = n + kAddressRecords * static_cast<int64_t>(addresses);
    const int64_t target = position + std::min(n - 1, weighted / 2);
    const InputSnapshots::Snapshot& mid = snapshots_.at_or_before(target);
    if (mid.position <= position || mid.position >= read_) return;
    s.i64(mid.position);
    s.bytes(mid.state);
  }

  // Reads what save_stragglers wrote: the addresses of the first elements of `wanted` (the
  // buffer's (input index, slot) pairs by index), as many as were saved. Also reads the form
  // written before kPackedAddresses (a count, then per element the differences of input
  // index, file and offset from the element before).
  // `count`: its first number, read already.
  std::vector<Address> restore_stragglers(StateReader& s, uint64_t count,
                                          const std::vector<std::pair<int64_t, size_t>>& wanted,
                                          int64_t position) {
    const bool packed = count == kPackedAddresses;
    if (packed) count = s.u64_in("stragglers", 1, wanted.size());
    if (count > wanted.size())
      s.corrupt(str_cat(count, " elements saved by address but the buffer holds ", wanted.size()));
    if (count > 0 && !addressable_)
      s.corrupt("elements saved by address but the input has no addresses");
    if (count > 0 && wanted[count - 1].first >= position)
      s.corrupt(str_cat("element ", wanted[count - 1].first,
                        " is saved by address but the buffer reads it again from the input"));
    std::vector<Address> at(count);
    AddressCoder coder;
    int64_t index = 0;
    for (uint64_t k = 0; k < count; ++k) {
      if (packed) {
        at[k] = coder.get(s, wanted[k].first);
        continue;
      }
      index += s.i64_in("straggler's input index", k == 0 ? 0 : 1, position);
      if (wanted[k].first != index)
        s.corrupt(
            str_cat("element ", index, " is saved by address but the buffer does not hold it"));
      at[k].file = (k == 0 ? 0 : at[k - 1].file) + static_cast<uint64_t>(s.i64("straggler's file"));
      at[k].offset =
          (k == 0 ? 0 : at[k - 1].offset) + static_cast<uint64_t>(s.i64("straggler's offset"));
    }
    return at;
  }

  // Runs of input elements of one file, each `stride` bytes after the one before (records of
  // one size): the element of input index i in [first, end) that the buffer may hold lies
  // at byte offset offset + (i - first) * stride of file `file` (stride 0: the segment knows
  // one element, at `first`). Over an addressable input they cover the input elements
  // [segments_from_, read_) (segments_), so that a save can give the address of every
  // buffered element in a few bytes per file (save_segments). Records of many sizes make a
  // segment every record or two: past kMaxSegments the oldest go, and a save falls back to
  // the addresses of the oldest elements (save_point).
  struct Segment {
    int64_t first;
    int64_t end;
    uint64_t file;
    uint64_t offset;
    uint64_t stride;
  };

  // Adds the element of input index i, at or after the segments' end, read at address a.
  // Elements between the end and i (passed over by a restore) join the last segment: they
  // are not buffered, so what it predicts for them is never used.
  void track(int64_t i, const Address& a) {
    if (!segments_.empty()) {
      Segment& g = segments_.back();
      const auto steps = static_cast<uint64_t>(i - g.first);
      if (g.file == a.file && i >= g.end) {
        if (g.stride == 0 && a.offset > g.offset && (a.offset - g.offset) % steps == 0) {
          g.stride = (a.offset - g.offset) / steps;
          g.end = i + 1;
          return;
        }
        if (g.stride != 0 && a.offset == g.offset + steps * g.stride) {
          g.end = i + 1;
          return;
        }
      }
      g.end = std::max(g.end, i);
    } else {
      segments_from_ = i;
    }
    segments_.push_back(Segment{i, i + 1, a.file, a.offset, 0});
    // Those that hold only elements older than the buffer's are no longer needed.
    const int64_t oldest = oldest_needed();
    while (segments_.size() > 1 &&
           (segments_.front().end <= oldest || segments_.size() > kMaxSegments)) {
      segments_from_ = segments_.front().end;
      segments_.pop_front();
    }
  }

  // Whether the segments give the address of every buffered element (the oldest is `oldest`).
  bool segments_cover(int64_t oldest) const {
    return addressable_ && !index_.empty() && !segments_.empty() && segments_from_ <= oldest &&
           segments_.back().end == read_;
  }

  // The segments' form of save_stragglers: the marker kSegmentAddresses, the count of
  // segments holding buffered elements older than `position`, then per segment its first
  // input index (the first segment's; the others begin where the one before ends), its
  // length, its file (the difference from the one before), its offset and its stride.
  // The restore computes each buffered element's address from its input index. A save with
  // no element older than `position` writes a count of 0 alone, as save_stragglers does.
  void save_segments(StateWriter& s, int64_t position) const {
    const int64_t oldest = oldest_needed();
    size_t from = 0;
    while (from < segments_.size() && segments_[from].end <= oldest) ++from;
    size_t to = from;
    while (to < segments_.size() && segments_[to].first < position) ++to;
    if (oldest >= position || to == from) {
      s.u64(0);
      return;
    }
    s.u64(kSegmentAddresses);
    s.u64(to - from);
    uint64_t file = 0;
    for (size_t k = from; k < to; ++k) {
      const Segment& g = segments_[k];
      if (k == from) s.i64(g.first);
      s.i64(g.end - g.first);
      s.i64(static_cast<int64_t>(g.file - file));
      s.u64(g.offset);
      s.u64(g.stride);
      file = g.file;
    }
  }

  // Reads the segments save_segments wrote (after the marker).
  std::deque<Segment> read_segments(StateReader& s, int64_t read) const {
    if (!addressable_) s.corrupt("elements saved by address but the input has no addresses");
    const uint64_t n = s.u64_in("segments", 1, kMaxSegments);
    std::deque<Segment> segments;
    uint64_t file = 0;
    for (uint64_t k = 0; k < n; ++k) {
      Segment g{};
      g.first =
          k == 0 ? s.i64_in("first element of the segments", 0, read - 1) : segments.back().end;
      g.end = g.first + s.i64_in("length of a segment", 1, read - g.first);
      file += static_cast<uint64_t>(s.i64("file of a segment"));
      g.file = file;
      g.offset = s.u64("offset of a segment");
      g.stride = s.u64("stride of a segment");
      segments.push_back(g);
    }
    return segments;
  }

  // The addresses of the elements of `wanted` older than `position`, from the segments,
  // which are kept for the next save.
  std::vector<Address> segment_addresses(StateReader& s, std::deque<Segment> segments,
                                         const std::vector<std::pair<int64_t, size_t>>& wanted,
                                         int64_t position) {
    std::vector<Address> at;
    size_t j = 0;
    for (size_t k = 0; k < wanted.size() && wanted[k].first < position; ++k) {
      const int64_t i = wanted[k].first;
      while (j < segments.size() && segments[j].end <= i) ++j;
      if (j == segments.size() || i < segments[j].first)
        s.corrupt(str_cat("element ", i, " is buffered but no saved segment holds it"));
      const Segment& g = segments[j];
      at.push_back(Address{g.file, g.offset + static_cast<uint64_t>(i - g.first) * g.stride});
    }
    segments_ = std::move(segments);
    segments_from_ = segments_.front().first;
    return at;
  }

  // Reads the elements at[from, to) into their slots (wanted[k].second for at[k]).
  void read_stragglers(const std::vector<Address>& at, size_t from, size_t to,
                       const std::vector<std::pair<int64_t, size_t>>& wanted) {
    const std::vector<Address> part(at.begin() + static_cast<std::ptrdiff_t>(from),
                                    at.begin() + static_cast<std::ptrdiff_t>(to));
    input_->read_at(part, [&](size_t k, Element& e) {
      buffer_[wanted[from + k].second] = std::move(e);
      address_[wanted[from + k].second] = at[from + k];
    });
  }

  // Reads the elements at[from, end) into their slots on a thread of its own, started at
  // construction; finish() waits for it and raises its error. The destructor waits too
  // (without raising), so no path leaves the thread running.
  class StragglerReader {
   public:
    StragglerReader(ShuffleIterator& shuffle, const std::vector<Address>& at, size_t from,
                    const std::vector<std::pair<int64_t, size_t>>& wanted) {
      if (from >= at.size()) return;
      thread_ = Thread([&shuffle, &at, from, &wanted, this] {
        try {
          shuffle.read_stragglers(at, from, at.size(), wanted);
        } catch (...) {
          error_ = std::current_exception();
        }
      });
    }
    ~StragglerReader() {
      if (thread_.joinable()) thread_.join();
    }
    StragglerReader(const StragglerReader&) = delete;
    StragglerReader& operator=(const StragglerReader&) = delete;
    void finish() {
      if (thread_.joinable()) thread_.join();
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }

   private:
    Thread thread_;
    std::exception_ptr error_;
  };

  // The draws of next() on input indices alone: leaves index_ as the saved buffer's slots
  // and rng_ where the saved generator was.
  void replay(StateReader& s, int64_t drawn, int64_t read, bool done) {
    index_.clear();
    int64_t next_in = 0;
    bool ended = false;
    auto try_read = [&](int64_t& out) {
      if (next_in < read) {
        out = next_in++;
        return true;
      }
      if (!done) s.corrupt("the draws read past the saved position of the input");
      ended = true;
      return false;
    };
    for (int64_t d = 0; d < drawn; ++d) {
      int64_t in;
      while (!ended && index_.size() < capacity_ && try_read(in)) index_.push_back(in);
      if (index_.empty()) s.corrupt(str_cat("the buffer is empty at draw ", d, " of ", drawn));
      size_t pick = std::uniform_int_distribution<size_t>(0, index_.size() - 1)(rng_);
      if (!ended && try_read(in)) {
        index_[pick] = in;
      } else {
        index_[pick] = index_.back();
        index_.pop_back();
      }
    }
    if (next_in != read || (done && !ended && !(drawn == 0 && read == 0)))
      s.corrupt(str_cat("the draws read ", next_in, " elements but the state says ", read,
                        done ? " and that the input ended" : ""));
  }

  using Address = Iterator::Address;
  // Over an addressable input a save points the input back this many eighths of a buffer,
  // and stores the elements held longer (a fraction e^-2.25 of the buffer) by address, in at
  // most kAddressBytes (a byte or a few each). Reading an element by its address costs
  // about as much as passing over ten (1 KiB records): elements closer together than that
  // are cheaper to read again in the run.
  static constexpr int64_t kSpanEighths = 18;
  static constexpr size_t kAddressBytes = 2048;
  // A restore splits a run of this many elements or more between two threads, and counts a
  // read by address as this many elements passed over (1 KiB records) in balancing them.
  static constexpr int64_t kSplitAbove = 4096;
  static constexpr int64_t kAddressRecords = 7;
  // A restore whose elements are nearly all saved by address shares reading them between two
  // threads from this many on.
  static constexpr size_t kShareAbove = 1024;
  // Starts the addresses' form of save_stragglers: a count no buffer reaches, which readers
  // older than that form refuse (DATA_LOSS) rather than misread.
  static constexpr uint64_t kPackedAddresses = ~uint64_t{0};
  // Starts the segments' form (save_segments), refused the same way by older readers.
  static constexpr uint64_t kSegmentAddresses = ~uint64_t{0} - 1;
  // The most segments kept (and saved: about 12 bytes each).
  static constexpr size_t kMaxSegments = 32;
  // Records read this many buffers before the newest are copied (compact_long_held).
  static constexpr int64_t kCompactAfter = 2;

  std::unique_ptr<Iterator> input_;
  int64_t input_size_;
  size_t capacity_;
  bool addressable_;
  // Whose last_address() is read for each element: the input behind the statistics'
  // wrapper, which only forwards it (one call less per element).
  Iterator* addresses_;
  int64_t snapshot_every_;
  uint64_t seed_;   // of this epoch's order
  uint64_t epoch_;  // saved for reading; the order comes from seed_
  std::mt19937_64 rng_;
  static constexpr size_t kNoPick = ~size_t{0};
  size_t next_pick_ = kNoPick;  // drawn by draw_ahead for the next call
  std::vector<Element> buffer_;
  std::vector<int64_t> index_;    // the input index of each buffer slot's element
  std::vector<Address> address_;  // and its address, over an addressable input
  int64_t oldest_ = 0;            // the smallest of index_ (when it is not empty)
  bool input_done_ = false;
  int64_t read_ = 0;   // input elements read
  int64_t drawn_ = 0;  // elements handed out
  // The elements read before compacted_below_ were looked at by compact_long_held, which
  // runs again once next_compaction_ elements have been drawn.
  int64_t compacted_below_ = 0;
  int64_t next_compaction_ = 0;
  std::atomic<int64_t>* copied_bytes_ = nullptr;  // its stage's counter (count_copies_into)
  std::vector<Element*> compacting_;              // compact_long_held's, reused
  InputSnapshots snapshots_;
  // Over an addressable input: the segments, oldest first, of the input elements
  // [segments_from_, read_).
  std::deque<Segment> segments_;
  int64_t segments_from_ = 0;
};

}  // namespace

ShuffleDataset::ShuffleDataset(DatasetPtr input, int64_t buffer_size, uint64_t seed, bool reshuffle,
                               bool random_seed)
    : UnaryDataset(std::move(input)),
      buffer_size_(buffer_size),
      seed_(seed),
      reshuffle_(reshuffle),
      random_seed_(random_seed),
      epoch_(std::make_shared<std::atomic<uint64_t>>(0)) {}

std::string ShuffleDataset::arguments() const {
  return str_cat("buffer_size=", buffer_size_,
                 ", seed=", random_seed_ ? "random" : std::to_string(seed_),
                 ", reshuffle_each_iteration=", reshuffle_ ? 1 : 0);
}

DatasetPtr ShuffleDataset::with_inputs(std::vector<DatasetPtr> in) const {
  auto copy =
      std::make_shared<ShuffleDataset>(in.at(0), buffer_size_, seed_, reshuffle_, random_seed_);
  copy->epoch_ = epoch_;  // a rewritten pipeline continues the same sequence of orders
  return copy;
}

DatasetPtr ShuffleDataset::with_seed(uint64_t seed) const {
  auto copy = std::make_shared<ShuffleDataset>(input_, buffer_size_, seed, reshuffle_, false);
  copy->epoch_ = epoch_;
  return copy;
}

std::unique_ptr<Iterator> ShuffleDataset::make_iterator(const IteratorContext& ctx) const {
  uint64_t epoch = reshuffle_ ? next_epoch(ctx, epoch_) : 0;
  return std::make_unique<ShuffleIterator>(input_->make_iterator(ctx), buffer_size_,
                                           epoch_seed(seed_, epoch), epoch, input_->cardinality());
}

DatasetPtr make_shuffle(DatasetPtr input, int64_t buffer_size, int64_t seed,
                        bool reshuffle_each_iteration) {
  DINPUT_CHECK_ARG(input != nullptr, "shuffle: no input dataset");
  DINPUT_CHECK_ARG(buffer_size > 0, "shuffle: buffer_size must be greater than zero, got ",
                   buffer_size);
  return std::make_shared<ShuffleDataset>(std::move(input), buffer_size, seed_or_random(seed),
                                          reshuffle_each_iteration, seed < 0);
}

}  // namespace dinput
