// text_lines: the lines of text files, file after file.
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "data/nodes.h"
#include "io/file_error.h"
#include "io/file_sources.h"

namespace dinput {

namespace {

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

  class Iter final : public Iterator {
   public:
    explicit Iter(std::shared_ptr<const TextLinesDataset> ds) : ds_(std::move(ds)) {}
    ~Iter() override {
      close();
      std::free(line_);
    }
    bool next(Element& out) override {
      for (;;) {
        if (!file_) {
          if (index_ >= ds_->files_.size()) return false;
          open(ds_->files_[index_++]);
        }
        errno = 0;
        ssize_t n = ::getline(&line_, &capacity_, file_);
        if (n < 0) {
          if (std::ferror(file_)) raise_file_error("text_lines", path_, errno ? errno : EIO);
          close();
          continue;
        }
        size_t len = static_cast<size_t>(n);
        if (len && line_[len - 1] == '\n') --len;
        if (len && line_[len - 1] == '\r') --len;
        Tensor t = Tensor::allocate(DType::kBytes, Shape());
        t.set_string(0, std::string_view(line_, len));
        out.assign(1, std::move(t));
        return true;
      }
    }

   private:
    void open(const std::string& path) {
      path_ = path;
      file_ = std::fopen(path.c_str(), "rb");
      if (!file_) raise_file_error("text_lines", path, errno);
    }
    void close() {
      if (file_) std::fclose(file_);
      file_ = nullptr;
    }
    std::shared_ptr<const TextLinesDataset> ds_;
    size_t index_ = 0;
    std::string path_;
    std::FILE* file_ = nullptr;
    char* line_ = nullptr;  // getline's buffer, reused across lines
    size_t capacity_ = 0;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext&) const override {
    return std::make_unique<Iter>(std::static_pointer_cast<const TextLinesDataset>(ptr()));
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
