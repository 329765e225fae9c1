// cache(): a first full pass over the input fills the cache (memory or a file); later
// iterators read it instead of the input. A pass that stops early leaves nothing behind.
// Each iterator decides at its first element whether it reads the cache or fills it, so an
// iterator made while another was filling reads what that one completed.
//
// The cache file is TFRecord-framed (so every record carries CRCs): a header record holding
// the magic, the input pipeline's fingerprint and its element spec, then one record per
// element, then a footer record with the element count, which marks the file complete.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "core/quote.h"
#include "data/state.h"
#include "io/cache.h"
#include "io/file_ops.h"
#include "io/record_reader.h"
#include "io/record_writer.h"

namespace dinput {

namespace {

constexpr char kHeaderMagic[] = "DINPUT-CACHE-1";
constexpr char kFooterMagic[] = "DINPUT-CACHE-END";

// What every iterator of one cache node shares.
struct CacheShared {
  std::mutex mu;
  bool complete = false;  // memory: `elements` holds a full pass
  std::vector<Element> elements;
  // The epochs the reshuffling operations of the input had drawn for the pass that is (or
  // is being) cached: a pass that has to be made again (after a restore) makes the same
  // one, and leaves the counters where they were.
  bool have_epochs = false;
  std::vector<uint64_t> fill_epochs;
};

void collect_counters(const Dataset& ds, std::vector<EpochCounter>& out) {
  if (EpochCounter c = ds.epoch_counter()) out.push_back(std::move(c));
  for (const auto& in : ds.inputs()) collect_counters(*in, out);
}

// ---- element encoding -----------------------------------------------------------------

std::string encode(const Element& e) {
  StateWriter w;
  w.u64(e.size());
  for (const Tensor& t : e) {
    w.u64(static_cast<uint64_t>(t.dtype()));
    w.u64(static_cast<uint64_t>(t.rank()));
    for (int d = 0; d < t.rank(); ++d) w.u64(static_cast<uint64_t>(t.dim(d)));
    if (t.dtype() == DType::kBytes) {
      for (int64_t i = 0; i < t.num_elements(); ++i) w.bytes(t.string(i));
    } else {
      w.bytes(std::string_view(static_cast<const char*>(t.data()), t.byte_size()));
    }
  }
  return w.take();
}

// Decodes one element record, checking it against the spec; a record that does not decode
// is DATA_LOSS naming the file and the record's offset.
class Decoder {
 public:
  Decoder(const char* data, size_t size, const std::string& path, uint64_t offset)
      : p_(data), end_(data + size), path_(path), offset_(offset) {}
  uint64_t u64() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) bad("truncated");
      auto byte = static_cast<unsigned char>(*p_++);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    bad("a number does not fit 64 bits");
  }
  std::string_view bytes() {
    uint64_t n = u64();
    if (n > static_cast<uint64_t>(end_ - p_)) bad("a length runs past the record");
    std::string_view out(p_, static_cast<size_t>(n));
    p_ += n;
    return out;
  }
  Element element(const ElementSpec& spec) {
    Element out(static_cast<size_t>(u64()));
    if (out.size() != spec.size()) bad("the number of components differs from the spec");
    for (size_t c = 0; c < out.size(); ++c) {
      uint64_t dtype = u64();
      uint64_t rank = u64();
      if (dtype != static_cast<uint64_t>(spec[c].dtype) ||
          rank != static_cast<uint64_t>(spec[c].shape.rank()))
        bad(str_cat("component ", c, " has another dtype or rank than ", to_string(spec[c])));
      std::vector<int64_t> dims(rank);
      for (auto& d : dims) {
        uint64_t v = u64();
        if (v > (uint64_t{1} << 48)) bad("a dimension is too large");
        d = static_cast<int64_t>(v);
      }
      Shape shape(dims.data(), static_cast<int>(rank));
      Tensor t = Tensor::allocate(spec[c].dtype, shape);
      if (!is_compatible(spec[c], t)) bad(str_cat("component ", c, " does not match the spec"));
      if (t.dtype() == DType::kBytes) {
        for (int64_t i = 0; i < t.num_elements(); ++i) t.set_string(i, bytes());
      } else {
        std::string_view b = bytes();
        if (b.size() != t.byte_size()) bad(str_cat("component ", c, " has the wrong byte count"));
        std::memcpy(t.mutable_data(), b.data(), b.size());
      }
      out[c] = std::move(t);
    }
    if (p_ != end_) bad("unexpected bytes after the element");
    return out;
  }
  [[noreturn]] void bad(const std::string& what) const {
    raise(Code::kDataLoss, "cache: the cache file ", quoted(path_),
          " is damaged: the record at offset ", offset_, ": ", what);
  }

 private:
  const char* p_;
  const char* end_;
  const std::string& path_;
  uint64_t offset_;
};

class CacheDataset final : public UnaryDataset {
 public:
  CacheDataset(DatasetPtr input, std::string filename)
      : UnaryDataset(std::move(input)), filename_(std::move(filename)) {
    collect_counters(*input_, counters_);
  }
  const char* name() const override { return "cache"; }
  std::string arguments() const override {
    return filename_.empty() ? "memory" : "filename=" + quoted(filename_);
  }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<CacheDataset>(in.at(0), filename_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  // The header record a cache file of this input starts with.
  std::string header() const {
    StateWriter w;
    w.bytes(kHeaderMagic);
    std::vector<std::string> fp = pipeline_fingerprint(*input_);
    w.u64(fp.size());
    for (const auto& d : fp) w.bytes(d);
    w.bytes(to_string(input_->element_spec()));
    return w.take();
  }

  std::string filename_;
  std::vector<EpochCounter> counters_;
  std::shared_ptr<CacheShared> shared_ = std::make_shared<CacheShared>();
};

class CacheIter final : public Iterator {
 public:
  CacheIter(const CacheDataset& node, IteratorContext ctx)
      : keep_(node.ptr()), node_(node), ctx_(std::move(ctx)) {}

  bool next(Element& out) override {
    if (ended_) return false;
    if (!started_) start();
    bool got = false;
    switch (mode_) {
      case Mode::kMemoryRead:
        got = index_ < cached_->size();
        if (got) out = (*cached_)[index_];
        break;
      case Mode::kFileRead:
        got = read_file_element(out);
        break;
      case Mode::kFill:
        got = input_->next(out);
        if (got && !partial_) keep(out);
        break;
    }
    if (got) {
      ++index_;
      return true;
    }
    if (mode_ == Mode::kFill && !partial_) publish();
    ended_ = true;
    input_.reset();
    reader_.reset();
    return false;
  }

  // Reading: the index of the next element (and, from a file, its record's offset); filling:
  // the index and the input's state. Both carry the epochs of the cached pass.
  void save(StateWriter& w) const override {
    w.section("cache", [&](StateWriter& s) {
      s.flag(ended_);
      s.flag(started_);
      if (ended_ || !started_) return;
      s.flag(mode_ == Mode::kFill);
      s.u64(index_);
      s.u64(epochs_.size());
      for (uint64_t e : epochs_) s.u64(e);
      if (mode_ == Mode::kFill)
        input_->save(s);
      else if (mode_ == Mode::kFileRead)
        s.u64(reader_->offset());
    });
  }
  void restore(StateReader& r) override {
    StateReader s = r.section("cache");
    ended_ = s.flag("ended");
    if (!s.flag("started") || ended_) {
      s.finish();
      return;  // a pass not started yet chooses when it is first read
    }
    bool filling = s.flag("filling");
    index_ = s.u64("element index");
    // No epochs: the pass was read from a file, whose input's epochs are not known.
    uint64_t n = s.u64_in("the number of epochs", 0, node_.counters_.size());
    std::vector<uint64_t> epochs(n);
    for (auto& e : epochs) e = s.u64("an epoch of the cached pass");
    if (n != node_.counters_.size() && (filling || node_.filename_.empty()))
      s.corrupt(str_cat("the cached pass has ", n, " epochs for ", node_.counters_.size(),
                        " reshuffling operations"));
    if (n == node_.counters_.size()) {
      std::lock_guard<std::mutex> lock(node_.shared_->mu);
      if (!node_.shared_->have_epochs) {
        node_.shared_->fill_epochs = epochs;
        node_.shared_->have_epochs = true;
      }
    }
    if (filling) {
      // The elements before the save are not at hand: this pass goes on without caching,
      // and a later full pass fills the cache.
      partial_ = true;
      mode_ = Mode::kFill;
      epochs_ = epochs;
      input_ = make_input_at(epochs);
      input_->restore(s);
      started_ = true;
    } else {
      uint64_t offset = node_.filename_.empty() ? 0 : s.u64("record offset");
      start();
      if (mode_ == Mode::kFileRead) {
        if (offset != 0) reader_ = open_at(offset);
      } else {
        // The cache is not at hand (another process): make the cached pass again up to
        // the saved element, filling the cache as the first pass did.
        uint64_t target = index_;
        index_ = 0;
        Element skip;
        while (index_ < target) {
          if (!next(skip)) s.corrupt(str_cat("the input ended before element ", target));
        }
      }
    }
    s.finish();
  }

 private:
  enum class Mode { kMemoryRead, kFileRead, kFill };

  void start() {
    started_ = true;
    if (node_.filename_.empty()) {
      std::lock_guard<std::mutex> lock(node_.shared_->mu);
      if (node_.shared_->complete) {
        mode_ = Mode::kMemoryRead;
        cached_ = &node_.shared_->elements;  // never changes once complete
        epochs_ = node_.shared_->fill_epochs;
        return;
      }
    } else if (file_exists()) {
      mode_ = Mode::kFileRead;
      reader_ = open_at(0);
      return;
    }
    mode_ = Mode::kFill;
    bool first;
    std::vector<uint64_t> epochs;
    {
      std::lock_guard<std::mutex> lock(node_.shared_->mu);
      first = !node_.shared_->have_epochs;
      epochs = node_.shared_->fill_epochs;
    }
    if (first) {
      for (const auto& c : node_.counters_) epochs_.push_back(peek_epoch(ctx_, c));
      input_ = node_.input()->make_iterator(ctx_);
      std::lock_guard<std::mutex> lock(node_.shared_->mu);
      if (!node_.shared_->have_epochs) {
        node_.shared_->fill_epochs = epochs_;
        node_.shared_->have_epochs = true;
      }
    } else {
      epochs_ = epochs;
      input_ = make_input_at(epochs);
    }
    if (!node_.filename_.empty()) {
      writer_ = std::make_unique<RecordWriter>(node_.filename_, Compression::kNone, 0);
      std::string h = node_.header();
      writer_->write(h.data(), h.size());
    }
  }

  // The input's iterator as the cached pass made it, the epoch counters left as they were.
  std::unique_ptr<Iterator> make_input_at(const std::vector<uint64_t>& epochs) {
    std::vector<uint64_t> before;
    for (const auto& c : node_.counters_) before.push_back(peek_epoch(ctx_, c));
    for (size_t i = 0; i < epochs.size() && i < node_.counters_.size(); ++i)
      set_epoch(ctx_, node_.counters_[i], epochs[i]);
    auto it = node_.input()->make_iterator(ctx_);
    for (size_t i = 0; i < before.size(); ++i) set_epoch(ctx_, node_.counters_[i], before[i]);
    return it;
  }

  bool file_exists() const {
    struct stat st;
    if (fileops::stat(node_.filename_.c_str(), &st) == 0) return true;
    if (errno == ENOENT) return false;
    raise(Code::kFailedPrecondition, "cache: cannot look at the cache file ",
          quoted(node_.filename_), ": ", std::strerror(errno));
  }

  // Opens the cache file, checks its header, and positions the reader at `offset` (0: the
  // first element).
  std::unique_ptr<RecordSource> open_at(uint64_t offset) {
    auto reader = open_record_file(node_.filename_, Compression::kNone, 0, false, nullptr,
                                   kMaxMaxRecordBytes);
    RecordView rec;
    if (!reader->next(rec))
      raise(Code::kDataLoss, "cache: the cache file ", quoted(node_.filename_),
            " is damaged: it holds no header record (offset 0)");
    if (std::string_view(rec.data, rec.size) != node_.header()) {
      Decoder d(rec.data, rec.size, node_.filename_, 0);
      std::string magic(d.bytes());
      if (magic != kHeaderMagic)
        raise(Code::kDataLoss, "cache: the file ", quoted(node_.filename_),
              " is not a dinput cache file (its first record at offset 0 has no cache header)");
      raise(Code::kFailedPrecondition, "cache: the cache file ", quoted(node_.filename_),
            " was written by another pipeline (its fingerprint or element spec differs from "
            "this input's); delete it, or give this pipeline another filename");
    }
    if (offset == 0) return reader;
    return open_record_file(node_.filename_, Compression::kNone, 0, false, nullptr,
                            kMaxMaxRecordBytes, FileReadOptions{}, offset);
  }

  bool read_file_element(Element& out) {
    uint64_t at = reader_->offset();
    RecordView rec;
    if (!reader_->next(rec))
      raise(Code::kDataLoss, "cache: the cache file ", quoted(node_.filename_),
            " is damaged: it ends at offset ", at, " without its footer (truncated)");
    Decoder d(rec.data, rec.size, node_.filename_, at);
    if (rec.size >= 1 && rec.data[0] == static_cast<char>(sizeof kFooterMagic - 1) &&
        std::string_view(rec.data + 1, std::min(rec.size - 1, sizeof kFooterMagic - 1)) ==
            kFooterMagic) {
      d.bytes();
      uint64_t count = d.u64();
      if (count != index_)
        d.bad(str_cat("the footer counts ", count, " elements but ", index_, " precede it"));
      RecordView extra;
      uint64_t after = reader_->offset();
      if (reader_->next(extra))
        raise(Code::kDataLoss, "cache: the cache file ", quoted(node_.filename_),
              " is damaged: a record follows the footer at offset ", after);
      return false;
    }
    out = d.element(node_.element_spec());
    return true;
  }

  void keep(const Element& e) {
    if (writer_) {
      std::string rec = encode(e);
      writer_->write(rec.data(), rec.size());
    } else {
      filling_.push_back(e);
    }
  }

  void publish() {
    if (writer_) {
      StateWriter w;
      w.bytes(kFooterMagic);
      w.u64(index_);
      writer_->write(w.data().data(), w.data().size());
      writer_->close();  // renames the complete file into place
      writer_.reset();
      return;
    }
    std::lock_guard<std::mutex> lock(node_.shared_->mu);
    if (node_.shared_->complete) return;  // another iterator finished first
    node_.shared_->elements = std::move(filling_);
    node_.shared_->complete = true;
  }

 public:
  ~CacheIter() override {
    if (writer_) writer_->discard();  // an unfinished pass leaves no file
  }

 private:
  DatasetPtr keep_;  // keeps node_ alive
  const CacheDataset& node_;
  IteratorContext ctx_;
  Mode mode_ = Mode::kFill;
  bool started_ = false;
  bool ended_ = false;
  bool partial_ = false;  // restored while filling: delivers without caching
  uint64_t index_ = 0;
  std::vector<uint64_t> epochs_;
  std::unique_ptr<Iterator> input_;
  std::vector<Element> filling_;
  const std::vector<Element>* cached_ = nullptr;
  std::unique_ptr<RecordSource> reader_;
  std::unique_ptr<RecordWriter> writer_;
};

std::unique_ptr<Iterator> CacheDataset::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<CacheIter>(*this, ctx);
}

}  // namespace

DatasetPtr make_cache(DatasetPtr input, std::string filename) {
  DINPUT_CHECK_ARG(input != nullptr, "cache: no input dataset");
  DINPUT_CHECK_ARG(filename.find('\0') == std::string::npos, "cache: filename contains a NUL");
  return std::make_shared<CacheDataset>(std::move(input), std::move(filename));
}

}  // namespace dinput
