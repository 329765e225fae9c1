// Iterators produce elements one at a time. They report the end by returning false and
// failures by throwing dinput::Error.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/element.h"
#include "core/status.h"
#include "data/dispose.h"

namespace dinput {

// Adds `by` to a counter that only one thread writes and others may read (the statistics'
// counters, Iterator::count_output_into): a relaxed load and store, which costs what a plain
// add does, where a read-modify-write would be a locked instruction.
inline void bump(std::atomic<int64_t>& counter, int64_t by) {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

class StateWriter;
class StateReader;

class Iterator {
 public:
  virtual ~Iterator() = default;
  // Fills `out` and returns true, or returns false at the end of data.
  virtual bool next(Element& out) = 0;

  // Up to `n` consecutive elements stacked along a new first dimension, returning the
  // number of rows; fewer than `n` only when the data ends, 0 at the end. The default pulls
  // elements one at a time and copies them; sources override it to fill or slice batches
  // directly, which is what makes batch() cheap.
  virtual int64_t next_batch(int64_t n, Element& out);

  // Fills out[0], out[1], ... with up to `n` consecutive elements, returning how many; fewer
  // than `n` only when the data ends. A distributed step takes its R pieces of one source in
  // one call: the splitters override it to cut them in one loop, without a virtual call and
  // its checks per piece, which were much of a step's cost over many replicas.
  // The elements of `out` may hold anything before; those not filled are left empty.
  virtual size_t next_many(Element* out, size_t n) {
    size_t filled = 0;
    for (; filled < n; ++filled) {
      out[filled].clear();
      if (!next(out[filled])) break;
    }
    for (size_t k = filled; k < n; ++k) out[k].clear();
    return filled;
  }

  // Writes this iterator's section of a saved state (data/state.h, docs/checkpoint.md): the
  // position of the next element the consumer will take, never buffered elements. Called
  // between next() calls only. UNIMPLEMENTED naming the operation when it cannot save yet.
  virtual void save(StateWriter& w) const;
  // Reads the section save() wrote into this iterator, which must be new (no next() yet),
  // so that it continues where the saved one stopped. Damaged sections are DATA_LOSS.
  virtual void restore(StateReader& r);

  // Passes over up to `n` elements without handing them out, for a restore that reads again
  // elements delivered before the save (a shuffle rebuilding its buffer); returns how many,
  // fewer only at the end. The default takes them with next(); record sources pass over
  // records by their headers, without checking or building what they pass over.
  virtual int64_t skip(int64_t n);

  // Passes over the next `n` elements as skip() does, except those at the offsets `keep`
  // (from the current position, increasing, each below n), which it hands to
  // take(k, element) in order, k being the offset's index in `keep`; during the call
  // last_address() is that element's. Returns how many elements it passed, fewer than n
  // only at the end (the kept ones before the end are handed out). What a shuffle's restore
  // does to rebuild its buffer. The default calls skip() and next(); record sources parse
  // the whole run in one pass and pack the kept records together.
  using Take = std::function<void(size_t k, Element& e)>;
  virtual int64_t select(int64_t n, const std::vector<int64_t>& keep, const Take& take);
  // select() where the caller also knows this iterator's state `at` elements on (0 < at < n;
  // `state`: what save() wrote there, perhaps in another process): a source may pass over
  // [at, n) on a thread of its own while this thread passes over [0, at), then continue
  // from where the second part ended. take() is called on this thread, in order, as
  // select() calls it. The default is select(), ignoring the hint.
  virtual int64_t select_split(int64_t n, const std::vector<int64_t>& keep, const Take& take,
                               int64_t at, const std::string& state);

  // Where an element can be read again on its own: an index into the source's file list and
  // the byte offset of the record in that file. Only sources that say addressable() give
  // one; a shuffle then stores the few elements it has held longest as addresses
  // (docs/checkpoint.md, "Shuffle").
  struct Address {
    uint64_t file = 0;
    uint64_t offset = 0;
  };
  // Whether last_address() and read_at() work (uncompressed record files).
  virtual bool addressable() const { return false; }
  // The address of the element next() returned last.
  virtual Address last_address() const;
  // Reads the one element at `at` (an address last_address() gave, perhaps in another
  // process), checked as next() checks it, without moving this iterator. A bad address,
  // or a file that changed since, is DATA_LOSS naming the file and the offset.
  virtual void read_at(const Address& at, Element& out);
  // Reads the elements at the addresses `at` as read_at() would, handing each to
  // take(k, element) in order (k: its index in `at`). Sources read neighbours together.
  // Neither form moves the iterator: a restore calls this one on a thread of its own while
  // its thread calls select() or select_split(), or on two threads at once.
  virtual void read_at(const std::vector<Address>& at, const Take& take);
  // A restore is about to read about `bytes` of elements with read_at(): a source may get
  // ready meanwhile (fault in the memory it will copy them into). Called on another thread
  // while this iterator is being restored, so it must not touch the iterator's state.
  // Does nothing by default.
  virtual void prepare_reads(uint64_t bytes) noexcept { (void)bytes; }

  // The per-stage statistics (data/stage_stats.h) count the elements a stage hands out and
  // measure their payload bytes by reading them, in a wrapper around the stage's iterator. An
  // iterator that knows both as it makes them (a record file reader) may add them to
  // `elements` and `bytes` itself instead, for the elements next() and next_batch() hand out
  // (not those skip() passes over, or a restore's select() and read_at() read): it keeps the
  // pointers and returns true. The wrapper's untimed calls then only count the call and pass
  // it on. Only the thread calling the iterator writes the counters (a relaxed load and
  // store). Wrappers do not forward this: the counters are the asking stage's.
  virtual bool count_output_into(std::atomic<int64_t>* elements, std::atomic<int64_t>* bytes) {
    (void)elements;
    (void)bytes;
    return false;
  }

  // The iterator that does the work, for code that needs a particular iterator type (elastic
  // resume asks an interleave for its open readers): this one, unless this one only forwards
  // to another (the per-stage statistics' wrapper, data/stage_stats.h).
  virtual Iterator* unwrapped() { return this; }

 protected:
  // UNIMPLEMENTED: operation `op` cannot save or restore its iterator state (`why`, if given).
  [[noreturn]] static void state_unsupported(const char* op, const char* why = nullptr);
};

// Stacks rows (elements with the same number of components and equal shapes) into one
// element with a new leading dimension; the rows are left as they are. Rows that differ are
// INVALID_ARGUMENT. `rows` must not be empty. What next_batch and the parallel batch do.
Element stack_rows(const std::vector<Element>& rows);

// Gives an iterator the behaviour users rely on at the API surface: once it has ended it
// stays ended, and once it has failed every later call repeats the same error (a half-done
// pipeline must not resume silently and lose elements).
class StickyIterator {
 public:
  explicit StickyIterator(std::unique_ptr<Iterator> inner) : inner_(std::move(inner)) {}
  // An iterator restored from a state saved after its end: ended from the start.
  StickyIterator() : ended_(true) {}

  bool next(Element& out) {
    if (error_) std::rethrow_exception(error_);
    if (ended_) return false;
    try {
      if (inner_->next(out)) return true;
      ended_ = true;
      inner_.reset();  // release sources and threads as soon as the data is done
      return false;
    } catch (...) {
      // Any failure (out of memory too) finishes the iterator: resuming would skip the
      // element that was being produced. A cancel fails it on purpose while other threads
      // of the pipeline may be inside slow callbacks: that error is returned without
      // waiting for them. After other errors the threads are stopped here, so that what
      // they hold (user_data too) is released before the error is reported.
      error_ = std::current_exception();
      if (cancelled(error_))
        dispose(std::move(inner_), std::chrono::milliseconds(0));
      else
        inner_.reset();
      throw;
    }
  }

  // True once ended or failed: the pipeline is gone.
  bool finished() const { return inner_ == nullptr; }
  // The live iterator to save (null once ended); a failed iterator has no state to save:
  // FAILED_PRECONDITION, as its pipeline is gone.
  const Iterator* for_save() const {
    if (error_)
      raise(Code::kFailedPrecondition,
            "the iterator has failed; a failed iterator has no state to save (save before the "
            "error, or restore an earlier state)");
    return inner_.get();
  }
  bool ended() const { return ended_; }

 private:
  std::unique_ptr<Iterator> inner_;
  bool ended_ = false;
  std::exception_ptr error_;

  static bool cancelled(const std::exception_ptr& error) {
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      return e.code() == Code::kCancelled;
    } catch (...) {
      return false;
    }
  }
};

}  // namespace dinput
