// list_files: the names of the files matching glob patterns, matched when the dataset is
// built. It is a file source: FILE auto-sharding splits the matched list, so readers fed by
// it through interleave read only the worker's files, and the shuffle applies afterwards to
// the worker's share (the shuffle-after-shard rule holds by construction).
#include <glob.h>

#include <algorithm>
#include <random>

#include "core/seed.h"
#include "data/nodes.h"
#include "data/state.h"
#include "io/file_sources.h"

namespace dinput {

namespace {

class ListFilesDataset final : public FileSource {
 public:
  ListFilesDataset(std::vector<std::string> files, bool shuffle, uint64_t seed,
                   std::shared_ptr<std::atomic<uint64_t>> epoch, bool random_seed)
      : files_(std::move(files)),
        shuffle_(shuffle),
        seed_(seed),
        epoch_(std::move(epoch)),
        random_seed_(random_seed),
        spec_{{DType::kBytes, Shape()}} {}
  const char* name() const override { return "list_files"; }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return static_cast<int64_t>(files_.size()); }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }
  const std::vector<std::string>& files() const override { return files_; }
  DatasetPtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<ListFilesDataset>(std::move(files), shuffle_, seed_, epoch_,
                                              random_seed_);
  }
  bool has_random_seed() const override { return shuffle_ && random_seed_; }
  DatasetPtr with_seed(uint64_t seed) const override {
    return std::make_shared<ListFilesDataset>(files_, shuffle_, seed, epoch_, false);
  }

  class Iter final : public Iterator {
   public:
    // The names in the order of `epoch` (sorted when not shuffled).
    Iter(DatasetPtr owner, const std::vector<std::string>& files, bool shuffle, uint64_t seed,
         uint64_t epoch)
        : owner_(std::move(owner)), files_(files), shuffle_(shuffle), seed_(seed) {
      order(epoch);
    }
    bool next(Element& out) override {
      if (pos_ >= names_.size()) return false;
      Tensor t = Tensor::allocate(DType::kBytes, Shape());
      t.set_string(0, names_[pos_++]);
      out.assign(1, std::move(t));
      return true;
    }
    void save(StateWriter& w) const override {
      w.section("list_files", [&](StateWriter& s) {
        s.u64(epoch_);
        s.u64(pos_);
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("list_files");
      uint64_t epoch = s.u64("epoch");
      pos_ = static_cast<size_t>(s.u64_in("next name", 0, names_.size()));
      s.finish();
      if (epoch != epoch_) order(epoch);
    }

   private:
    void order(uint64_t epoch) {
      epoch_ = epoch;
      names_ = files_;
      if (shuffle_) {
        // A new order for each iterator (epoch), reproducible for a given seed; the same for
        // the same epoch on every worker of a distributed pipeline.
        std::mt19937_64 rng(epoch_seed(seed_, epoch));
        std::shuffle(names_.begin(), names_.end(), rng);
      }
    }
    DatasetPtr owner_;                       // holds files_
    const std::vector<std::string>& files_;  // the dataset's
    bool shuffle_;
    uint64_t seed_;
    uint64_t epoch_ = 0;
    std::vector<std::string> names_;
    size_t pos_ = 0;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(ptr(), files_, shuffle_, seed_,
                                  shuffle_ ? next_epoch(ctx, epoch_) : 0);
  }
  std::string arguments() const override {
    return str_cat("files=", list_digest(files_), ", shuffle=", shuffle_ ? 1 : 0, ", seed=",
                   !shuffle_      ? "none"
                   : random_seed_ ? "random"
                                  : std::to_string(seed_));
  }
  uint64_t seed() const override { return seed_; }
  EpochCounter epoch_counter() const override { return shuffle_ ? epoch_ : nullptr; }

 private:
  std::vector<std::string> files_;
  bool shuffle_;
  uint64_t seed_;
  std::shared_ptr<std::atomic<uint64_t>> epoch_;
  bool random_seed_;  // seed_ was drawn at random (seed < 0)
  ElementSpec spec_;
};

}  // namespace

DatasetPtr make_list_files(const std::vector<std::string>& patterns, bool shuffle, int64_t seed) {
  DINPUT_CHECK_ARG(!patterns.empty(), "list_files: no file pattern given");
  std::vector<std::string> files;
  for (const auto& pattern : patterns) {
    glob_t g{};
    // Without GLOB_ERR an unreadable or missing directory just matches nothing, which ends
    // as NOT_FOUND below rather than as a misleading permission error.
    int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
    if (rc == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
    if (rc == GLOB_NOSPACE)
      raise(Code::kResourceExhausted, "list_files: out of memory matching '", pattern, "'");
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty()) {
    std::string all;
    for (const auto& p : patterns) all += (all.empty() ? "'" : ", '") + p + "'";
    raise(Code::kNotFound, "list_files: No files matched pattern: ", all);
  }
  return std::make_shared<ListFilesDataset>(std::move(files), shuffle, seed_or_random(seed),
                                            std::make_shared<std::atomic<uint64_t>>(0), seed < 0);
}

}  // namespace dinput
