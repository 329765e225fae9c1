// Transforms that choose which input elements pass: take, skip, shard, filter.
#include "data/nodes.h"
#include "data/state.h"

namespace dinput {

namespace {

class TakeDataset final : public UnaryDataset {
 public:
  TakeDataset(DatasetPtr input, int64_t count) : UnaryDataset(std::move(input)), count_(count) {}
  const char* name() const override { return "take"; }
  std::string arguments() const override { return str_cat("count=", count_); }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    if (count_ == 0) return 0;  // known empty, whatever the input
    if (count_ < 0) return n;
    if (n == kInfiniteCardinality) return count_;
    if (n == kUnknownCardinality) return n;
    return std::min(n, count_);
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<TakeDataset>(in.at(0), count_);
  }

  class Iter final : public Iterator {
   public:
    Iter(std::unique_ptr<Iterator> input, int64_t count) : input_(std::move(input)), left_(count) {}
    bool next(Element& out) override {
      if (left_ == 0) return false;
      if (!input_->next(out)) {
        left_ = 0;
        return false;
      }
      if (left_ > 0) --left_;
      return true;
    }
    int64_t next_batch(int64_t n, Element& out) override {
      if (left_ == 0) return 0;
      int64_t want = left_ < 0 ? n : std::min(n, left_);
      int64_t got = input_->next_batch(want, out);
      if (left_ > 0) left_ -= got;
      if (got < want) left_ = 0;
      return got;
    }
    void save(StateWriter& w) const override {
      w.section("take", [&](StateWriter& s) {
        s.i64(left_);
        if (left_ != 0) input_->save(s);  // a finished take needs no input
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("take");
      left_ = s.i64_in("count left", left_ < 0 ? -1 : 0, std::max<int64_t>(left_, 0));
      if (left_ != 0) input_->restore(s);
      s.finish();
    }

   private:
    std::unique_ptr<Iterator> input_;
    int64_t left_;  // -1: unlimited
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_->make_iterator(ctx), count_);
  }

 private:
  int64_t count_;
};

class SkipDataset final : public UnaryDataset {
 public:
  SkipDataset(DatasetPtr input, int64_t count) : UnaryDataset(std::move(input)), count_(count) {}
  const char* name() const override { return "skip"; }
  std::string arguments() const override { return str_cat("count=", count_); }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    if (n < 0) return n;
    if (count_ < 0) return 0;
    return std::max<int64_t>(0, n - count_);
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<SkipDataset>(in.at(0), count_);
  }

  class Iter final : public Iterator {
   public:
    Iter(std::unique_ptr<Iterator> input, int64_t count)
        : input_(std::move(input)), to_skip_(count) {}
    bool next(Element& out) override {
      if (!skip()) return false;
      return input_->next(out);
    }
    int64_t next_batch(int64_t n, Element& out) override {
      if (!skip()) return 0;
      return input_->next_batch(n, out);
    }
    void save(StateWriter& w) const override {
      w.section("skip", [&](StateWriter& s) {
        s.i64(to_skip_);
        s.flag(ended_);
        if (!ended_) input_->save(s);
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("skip");
      to_skip_ =
          s.i64_in("count left to skip", to_skip_ < 0 ? -1 : 0, std::max<int64_t>(to_skip_, 0));
      ended_ = s.flag("ended");
      if (!ended_) input_->restore(s);
      s.finish();
    }

   private:
    bool skip() {
      Element drop;
      while (to_skip_ != 0) {
        if (!input_->next(drop)) {
          to_skip_ = 0;
          ended_ = true;
          return false;
        }
        if (to_skip_ > 0) --to_skip_;
      }
      return !ended_;
    }
    std::unique_ptr<Iterator> input_;
    int64_t to_skip_;  // -1: everything
    bool ended_ = false;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_->make_iterator(ctx), count_);
  }

 private:
  int64_t count_;
};

class ShardIterator final : public Iterator {
 public:
  ShardIterator(std::unique_ptr<Iterator> input, int64_t num, int64_t index)
      : input_(std::move(input)), num_(num), index_(index) {}
  bool next(Element& out) override {
    Element drop;
    // Skip to our element of the next group of num_; the trailing partial group is read
    // only as far as needed.
    while (position_ % num_ != index_) {
      if (!input_->next(drop)) return false;
      ++position_;
    }
    if (!input_->next(out)) return false;
    ++position_;
    return true;
  }
  void save(StateWriter& w) const override {
    w.section("shard", [&](StateWriter& s) {
      s.i64(position_ % num_);  // only the position within a group matters
      input_->save(s);
    });
  }
  void restore(StateReader& r) override {
    StateReader s = r.section("shard");
    position_ = s.i64_in("position in the group", 0, num_ - 1);
    input_->restore(s);
    s.finish();
  }

 private:
  std::unique_ptr<Iterator> input_;
  int64_t num_, index_;
  int64_t position_ = 0;
};

class FilterDataset final : public UnaryDataset {
 public:
  FilterDataset(DatasetPtr input, std::shared_ptr<const PredicateFn> fn)
      : UnaryDataset(std::move(input)), fn_(std::move(fn)) {}
  const char* name() const override { return "filter"; }
  std::string arguments() const override { return "predicate"; }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    return n == 0 ? 0 : kUnknownCardinality;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<FilterDataset>(in.at(0), fn_);
  }

  class Iter final : public Iterator {
   public:
    Iter(std::unique_ptr<Iterator> input, std::shared_ptr<const PredicateFn> fn)
        : input_(std::move(input)), fn_(std::move(fn)) {}
    bool next(Element& out) override {
      while (input_->next(out))
        if ((*fn_)(out)) return true;
      return false;
    }
    void save(StateWriter& w) const override {
      w.section("filter", [&](StateWriter& s) { input_->save(s); });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("filter");
      input_->restore(s);
      s.finish();
    }

   private:
    std::unique_ptr<Iterator> input_;
    std::shared_ptr<const PredicateFn> fn_;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_->make_iterator(ctx), fn_);
  }

 private:
  std::shared_ptr<const PredicateFn> fn_;
};

}  // namespace

// ---- shard ----

std::string ShardDataset::arguments() const {
  return is_hint() ? std::string("num_shards=SHARD_HINT, index=SHARD_HINT")
                   : str_cat("num_shards=", num_shards_, ", index=", index_);
}

ShardDataset::ShardDataset(DatasetPtr input, int64_t num_shards, int64_t index)
    : UnaryDataset(std::move(input)), num_shards_(num_shards), index_(index) {}

int64_t ShardDataset::cardinality() const {
  int64_t n = input_->cardinality();
  if (n < 0 || is_hint()) return n < 0 ? n : kUnknownCardinality;
  return n / num_shards_ + (index_ < n % num_shards_ ? 1 : 0);
}

DatasetPtr ShardDataset::with_inputs(std::vector<DatasetPtr> in) const {
  return std::make_shared<ShardDataset>(in.at(0), num_shards_, index_);
}

std::unique_ptr<Iterator> ShardDataset::make_iterator(const IteratorContext& ctx) const {
  if (is_hint())
    raise(
        Code::kFailedPrecondition,
        "shard(SHARD_HINT, SHARD_HINT) is a placeholder that only distribute_dataset with the HINT "
        "auto-shard policy can fill in; it cannot be iterated directly");
  return std::make_unique<ShardIterator>(input_->make_iterator(ctx), num_shards_, index_);
}

// ---- factories ----

DatasetPtr make_take(DatasetPtr input, int64_t count) {
  DINPUT_CHECK_ARG(input != nullptr, "take: no input dataset");
  DINPUT_CHECK_ARG(count >= -1, "take: count must be >= -1, got ", count);
  return std::make_shared<TakeDataset>(std::move(input), count);
}

DatasetPtr make_skip(DatasetPtr input, int64_t count) {
  DINPUT_CHECK_ARG(input != nullptr, "skip: no input dataset");
  DINPUT_CHECK_ARG(count >= -1, "skip: count must be >= -1, got ", count);
  return std::make_shared<SkipDataset>(std::move(input), count);
}

DatasetPtr make_shard(DatasetPtr input, int64_t num_shards, int64_t index) {
  DINPUT_CHECK_ARG(input != nullptr, "shard: no input dataset");
  if (num_shards == kShardHint || index == kShardHint) {
    DINPUT_CHECK_ARG(num_shards == kShardHint && index == kShardHint,
                     "shard: SHARD_HINT must be given for both num_shards and index");
  } else {
    DINPUT_CHECK_ARG(num_shards > 0, "shard: num_shards must be greater than zero, got ",
                     num_shards);
    DINPUT_CHECK_ARG(index >= 0 && index < num_shards, "shard: index must be in [0, ", num_shards,
                     "), got ", index);
  }
  return std::make_shared<ShardDataset>(std::move(input), num_shards, index);
}

DatasetPtr make_filter(DatasetPtr input, std::shared_ptr<const PredicateFn> fn) {
  DINPUT_CHECK_ARG(input != nullptr, "filter: no input dataset");
  DINPUT_CHECK_ARG(fn != nullptr && *fn, "filter: no predicate given");
  return std::make_shared<FilterDataset>(std::move(input), std::move(fn));
}

}  // namespace dinput
