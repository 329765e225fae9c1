// text_lines: the lines of text files, file after file.
//
// Files are read through the same chunk streams as record files: read in chunks of 1 MiB
// (or, with map_files, a regular file is mapped whole), every line a view of its chunk;
// only a line that spans two chunks is copied. "\n" ends a line and a "\r" before it is
// dropped; the last line needs no "\n" (a trailing "\r" is dropped there too). Any other
// byte, "\r" and NUL included, is content. A line whose content is longer than
// max_record_bytes is RESOURCE_EXHAUSTED naming the file and the line's offset; at most the
// limit plus one byte (a "\r" that may turn out to precede the "\n") is gathered before
// that, so a file without line ends (/dev/zero, when non-regular files are allowed) cannot
// take memory without bound.
#include <cstring>

#include "core/quote.h"
#include "core/status.h"

#include "data/nodes.h"
#include "data/state.h"
#include "io/file_sources.h"
#include "io/input_stream.h"
#include "io/record_iterator.h"
#include "io/record_reader.h"

namespace dinput {

namespace {

class LineReader final : public RecordSource {
 public:
  // start: the file offset at which `input` begins (a saved position at a line's start).
  LineReader(std::string path, std::unique_ptr<ChunkSource> input, uint64_t max_line_bytes,
             uint64_t start = 0)
      : path_(std::move(path)),
        input_(std::move(input)),
        max_line_bytes_(max_line_bytes),
        base_(start) {}

  bool next(RecordView& out) override {
    copy_.reset();
    held_.reset();
    pieces_.clear();
    for (;;) {
      const size_t avail = cur_.size - pos_;
      if (avail) {
        const char* begin = cur_.data + pos_;
        const char* nl = static_cast<const char*>(std::memchr(begin, '\n', avail));
        if (pieces_.empty()) line_start_ = base_ + pos_;
        if (nl && pieces_.empty() && static_cast<uint64_t>(nl - begin) <= max_raw_bytes()) {
          // The common case: the whole line is in this chunk.
          pos_ += static_cast<size_t>(nl - begin) + 1;
          return checked(view(out, begin, static_cast<size_t>(nl - begin), &cur_.owner), out);
        }
        size_t take = nl ? static_cast<size_t>(nl - begin) : avail;
        pieces_total_ = (pieces_.empty() ? 0 : pieces_total_) + take;
        if (pieces_total_ > max_raw_bytes()) too_long();
        pieces_.push_back(Chunk{begin, take, cur_.owner});
        pos_ += nl ? take + 1 : take;
        if (nl) return checked(assemble(out), out);
      }
      if (!advance()) {
        if (pieces_.empty()) return false;   // ended right after a "\n" (or an empty file)
        return checked(assemble(out), out);  // a last line without "\n"
      }
    }
  }
  uint64_t offset() const override { return base_ + pos_; }

 private:
  static bool view(RecordView& out, const char* data, size_t size,
                   const std::shared_ptr<const Buffer>* owner) {
    if (size && data[size - 1] == '\r') --size;
    out.data = data;
    out.size = size;
    out.owner = owner;
    out.copied = false;
    return true;
  }

  // A line made of pieces of consecutive chunks: still a view when it is one piece.
  bool assemble(RecordView& out) {
    if (pieces_.size() == 1) {
      held_ = pieces_[0].owner;
      return view(out, pieces_[0].data, pieces_[0].size, &held_);
    }
    size_t total = 0;
    for (const auto& p : pieces_) total += p.size;
    auto buf = allocate_host(total);
    char* dst = static_cast<char*>(buf->data());
    for (const auto& p : pieces_) {
      if (p.size) std::memcpy(dst, p.data, p.size);
      dst += p.size;
    }
    pieces_.clear();
    copy_ = std::move(buf);
    view(out, static_cast<const char*>(copy_->data()), total, &copy_);
    out.copied = true;
    return true;
  }

  // The bytes of a line before its "\n": the content limit plus a "\r" that is dropped.
  uint64_t max_raw_bytes() const { return max_line_bytes_ + 1; }

  // The content limit itself, once the line (and whether it ended in "\r") is known.
  bool checked(bool found, const RecordView& out) {
    if (found && out.size > max_line_bytes_) too_long();
    return found;
  }

  [[noreturn]] void too_long() {
    pieces_.clear();
    cur_ = Chunk{};
    input_.reset();
    raise(Code::kResourceExhausted, "text_lines: the line at byte offset ", line_start_, " of ",
          quoted(path_), " is longer than ", max_line_bytes_,
          " bytes (the limit is max_record_bytes; raise it "
          "with dinput_options_set_max_record_bytes if lines this long are expected)");
  }

  bool advance() {
    base_ += cur_.size;
    cur_ = Chunk{};  // let the source reuse its buffer when no line views it
    pos_ = 0;
    if (!input_) return false;
    if (!input_->next(cur_)) {
      input_.reset();
      return false;
    }
    return true;
  }

  std::string path_;
  std::unique_ptr<ChunkSource> input_;
  uint64_t max_line_bytes_;
  Chunk cur_;
  size_t pos_ = 0;
  uint64_t base_ = 0;        // file offset of cur_.data
  uint64_t line_start_ = 0;  // file offset of the line being read
  uint64_t pieces_total_ = 0;
  std::vector<Chunk> pieces_;           // a line being gathered across chunks
  std::shared_ptr<const Buffer> held_;  // owner of a one-piece line, until the next call
  std::shared_ptr<const Buffer> copy_;  // a line copied out of several pieces
};

class TextLinesDataset final : public FileSource {
 public:
  explicit TextLinesDataset(std::vector<std::string> files)
      : files_(std::move(files)), spec_{{DType::kBytes, Shape()}} {}
  const char* name() const override { return "text_lines"; }
  std::string arguments() const override { return "files=" + list_digest(files_); }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return files_.empty() ? 0 : kUnknownCardinality; }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }
  const std::vector<std::string>& files() const override { return files_; }
  DatasetPtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<TextLinesDataset>(std::move(files));
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    auto pool = make_chunk_pool(kDefaultChunkBytes);
    FileReadOptions file_options = file_read_options(ctx.options);
    uint64_t max_line = ctx.options.record_limit();
    return make_record_iterator(
        "text_lines", files_,
        [pool, file_options, max_line](const std::string& path, uint64_t start) {
          return std::make_unique<LineReader>(
              path,
              open_file_chunks("text_lines", path, kDefaultChunkBytes, pool, file_options, start),
              max_line, start);
        },
        ctx.stats);
  }

 private:
  std::vector<std::string> files_;
  ElementSpec spec_;
};

}  // namespace

DatasetPtr make_text_lines(std::vector<std::string> files) {
  return std::make_shared<TextLinesDataset>(std::move(files));
}

}  // namespace dinput
