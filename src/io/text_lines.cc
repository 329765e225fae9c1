// text_lines: the lines of text files, file after file.
//
// Files are read through the same chunk streams as record files: a regular file is mapped
// whole and every line is a view of the mapping (no copy, no per-line system call); other
// files (pipes) are read in chunks and only a line that spans two chunks is copied. "\n"
// ends a line and a "\r" before it is dropped; the last line needs no "\n" (a trailing
// "\r" is dropped there too). Any other byte, "\r" and NUL included, is content.
#include <cstring>

#include "data/nodes.h"
#include "io/file_sources.h"
#include "io/input_stream.h"
#include "io/record_iterator.h"
#include "io/record_reader.h"

namespace dinput {

namespace {

class LineReader final : public RecordSource {
 public:
  explicit LineReader(std::unique_ptr<ChunkSource> input) : input_(std::move(input)) {}

  bool next(RecordView& out) override {
    copy_.reset();
    held_.reset();
    pieces_.clear();
    for (;;) {
      const size_t avail = cur_.size - pos_;
      if (avail) {
        const char* begin = cur_.data + pos_;
        const char* nl = static_cast<const char*>(std::memchr(begin, '\n', avail));
        if (nl && pieces_.empty()) {  // the common case: the whole line is in this chunk
          pos_ += static_cast<size_t>(nl - begin) + 1;
          return view(out, begin, static_cast<size_t>(nl - begin), &cur_.owner);
        }
        size_t take = nl ? static_cast<size_t>(nl - begin) : avail;
        pieces_.push_back(Chunk{begin, take, cur_.owner});
        pos_ += nl ? take + 1 : take;
        if (nl) return assemble(out);
      }
      if (!advance()) {
        if (pieces_.empty()) return false;  // ended right after a "\n" (or an empty file)
        return assemble(out);               // a last line without "\n"
      }
    }
  }

 private:
  static bool view(RecordView& out, const char* data, size_t size, const std::shared_ptr<const Buffer>* owner) {
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

  bool advance() {
    cur_ = Chunk{};  // let the source reuse its buffer when no line views it
    pos_ = 0;
    if (!input_) return false;
    if (!input_->next(cur_)) {
      input_.reset();
      return false;
    }
    return true;
  }

  std::unique_ptr<ChunkSource> input_;
  Chunk cur_;
  size_t pos_ = 0;
  std::vector<Chunk> pieces_;           // a line being gathered across chunks
  std::shared_ptr<const Buffer> held_;  // owner of a one-piece line, until the next call
  std::shared_ptr<const Buffer> copy_;  // a line copied out of several pieces
};

class TextLinesDataset final : public FileSource {
 public:
  explicit TextLinesDataset(std::vector<std::string> files)
      : files_(std::move(files)), spec_{{DType::kBytes, Shape()}} {}
  const char* name() const override { return "text_lines"; }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return files_.empty() ? 0 : kUnknownCardinality; }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }
  const std::vector<std::string>& files() const override { return files_; }
  DatasetPtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<TextLinesDataset>(std::move(files));
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    // Chunks (and so the pool) are only used for files that cannot be mapped, like pipes.
    auto pool = make_chunk_pool(kDefaultChunkBytes);
    return make_record_iterator(
        files_,
        [pool](const std::string& path) {
          return std::make_unique<LineReader>(open_file_chunks("text_lines", path, kDefaultChunkBytes, pool));
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
