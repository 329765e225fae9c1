// The two passes of a parse: scan and count every record, then fill each output tensor.
#include "example/parser.h"

#include <algorithm>
#include <cstring>

#include "core/origin.h"
#include "core/quote.h"
#include "core/status.h"

namespace dinput::example {

namespace {

std::vector<std::string> keys_of(const std::vector<FeatureSpec>& features) {
  std::vector<std::string> keys;
  for (const auto& f : features) keys.push_back(f.key);
  return keys;
}

// Where a failure happened, for messages.
struct Where {
  const char* op;
  bool batched;
  int64_t first;             // records the caller parsed before this batch
  const Tensor& serialized;  // the records, whose reader may have said where they came from

  [[noreturn]] void fail(int64_t record, const std::string* key, const std::string& what) const {
    std::string at = batched ? str_cat("record ", record, " of the batch (record ", first + record,
                                       " of the input)")
                             : str_cat("record ", first, " of the input");
    at += describe_origin(serialized, batched ? record : 0);
    if (key) at += str_cat(", feature ", quoted(*key));
    raise(Code::kInvalidArgument, op, ": ", at, ": ", what);
  }
};

// Checks the values one record (or one step) gives a feature of `f`'s dtype and, when
// `need` >= 0, their number.
void check_values(const Where& w, int64_t r, const FeatureSpec& f, const FeatureValues& v,
                  int64_t need, const char* unit) {
  if (v.kind != kNoList && v.kind != list_kind(f.dtype))
    w.fail(r, &f.key,
           str_cat("the record holds a ", list_name(v.kind), ", the spec wants ",
                   dtype_name(f.dtype), " (", list_name(list_kind(f.dtype)), ")"));
  if (need >= 0 && v.count != need)
    w.fail(r, &f.key,
           str_cat(unit, " has ", v.count, " values; the shape ", f.shape.to_string(), " needs ",
                   need));
}

class Filler {
 public:
  Filler(const Where& w, const ParseScratch& s, std::shared_ptr<const Buffer> owner)
      : w_(w), s_(s), owner_(std::move(owner)) {}

  // Decodes v's values into t from element `at`.
  void values(const FeatureValues& v, const FeatureSpec& f, int64_t r, Tensor& t, int64_t at) {
    if (v.count == 0) return;
    const char* bad = nullptr;
    switch (f.dtype) {
      case DType::kInt64:
        bad = write_int64(v, s_.fragments, t.mutable_data_as<int64_t>() + at);
        break;
      case DType::kFloat32:
        bad = write_float(v, s_.fragments, t.mutable_data_as<float>() + at);
        break;
      default:
        write_bytes(v, s_.fragments, t, at, owner_);
    }
    if (bad) w_.fail(r, &f.key, str_cat("malformed record: ", bad));
  }

  // Elements [at, at + n) of t from `from` (n values, or one repeated); zero or "" without.
  static void fill(Tensor& t, int64_t at, int64_t n, const std::optional<Tensor>& from) {
    if (n <= 0) return;
    const bool repeat = from && from->num_elements() == 1;
    if (t.dtype() == DType::kBytes) {
      if (!from) return;  // strings start empty
      for (int64_t i = 0; i < n; ++i) t.set_string_from(at + i, *from, repeat ? 0 : i);
      return;
    }
    const size_t size = dtype_size(t.dtype());
    char* dst = static_cast<char*>(t.mutable_data()) + at * size;
    if (!from) {
      std::memset(dst, 0, static_cast<size_t>(n) * size);
    } else if (!repeat) {
      std::memcpy(dst, from->data(), static_cast<size_t>(n) * size);
    } else {
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * size, from->data(), size);
    }
  }

 private:
  const Where& w_;
  const ParseScratch& s_;
  std::shared_ptr<const Buffer> owner_;
};

Shape with_dims(std::initializer_list<int64_t> front, const Shape& inner) {
  Shape s(front);
  for (int i = 0; i < inner.rank(); ++i) s.push_back(inner[i]);
  return s;
}

}  // namespace

ExampleParser::ExampleParser(ParseSpec spec, bool sequence, const char* op)
    : spec_(std::move(spec)),
      sequence_(sequence),
      op_(op),
      context_keys_(keys_of(spec_.context())),
      list_keys_(keys_of(spec_.sequence())) {
  DINPUT_CHECK_ARG(sequence_ || spec_.sequence().empty(), op_,
                   ": feature lists are for SequenceExamples (parse_sequence_example)");
}

ElementSpec ExampleParser::output_spec(bool batched, int64_t batch) const {
  ElementSpec out = example::output_spec(spec_.context(), false, batched, batch);
  for (auto& s : example::output_spec(spec_.sequence(), true, batched, batch)) out.push_back(s);
  return out;
}

void ExampleParser::parse(const Tensor& serialized, bool batched, int64_t first, ParseScratch& s,
                          Element& out) const {
  const Where w{op_, batched, first, serialized};
  DINPUT_CHECK_ARG(serialized.dtype() == DType::kBytes && serialized.rank() == (batched ? 1 : 0),
                   op_, ": the serialized records must be a bytes ", batched ? "vector" : "scalar",
                   ", got ", serialized.describe());
  serialized.require_host(str_cat(op_, "'s serialized records"));
  const auto& ctx = spec_.context();
  const auto& lists = spec_.sequence();
  const int64_t B = batched ? serialized.dim(0) : 1;
  const size_t Fc = ctx.size(), Fs = lists.size(), K = Fc + Fs;

  // Pass 1: locate and count every record's values, checking types and sizes.
  s.entries.assign(static_cast<size_t>(B) * K, std::string_view());
  s.values.assign(static_cast<size_t>(B) * Fc, FeatureValues());
  s.step_ranges.assign(static_cast<size_t>(B) * Fs * 2, 0);
  s.steps.clear();
  s.fragments.clear();
  for (int64_t r = 0; r < B; ++r) {
    const std::string_view record = serialized.string(batched ? r : 0);
    std::string_view* e = &s.entries[static_cast<size_t>(r) * K];
    const char* bad = sequence_
                          ? scan_sequence_example(record, context_keys_, e, list_keys_, e + Fc)
                          : scan_example(record, context_keys_, e);
    if (bad)
      w.fail(r, nullptr,
             str_cat("malformed ", sequence_ ? "SequenceExample" : "Example", ": ", bad));
    for (size_t f = 0; f < Fc; ++f) {
      const FeatureSpec& spec = ctx[f];
      FeatureValues& v = s.values[static_cast<size_t>(r) * Fc + f];
      if (!e[f].data()) {
        if (spec.kind == FeatureKind::kFixedLen && !spec.default_value)
          w.fail(r, &spec.key, "the feature is missing and has no default");
        if (spec.kind == FeatureKind::kFixedLenSequence && !spec.allow_missing)
          w.fail(r, &spec.key, "the feature is missing and allow_missing is false");
        continue;
      }
      v.present = true;
      v.first = v.last = static_cast<uint32_t>(s.fragments.size());
      bad = for_each_value(
          e[f], [&](std::string_view feature) { return add_feature(feature, s.fragments, v); });
      if (bad) w.fail(r, &spec.key, str_cat("malformed Feature: ", bad));
      const int64_t n = spec.shape.num_elements();
      check_values(w, r, spec, v, spec.kind == FeatureKind::kFixedLen ? n : -1, "the feature");
      if (spec.kind == FeatureKind::kFixedLenSequence && (n == 0 ? v.count != 0 : v.count % n))
        w.fail(r, &spec.key,
               str_cat("the feature has ", v.count, " values, not a multiple of the ", n,
                       " of shape ", spec.shape.to_string()));
    }
    for (size_t g = 0; g < Fs; ++g) {
      const FeatureSpec& spec = lists[g];
      uint32_t* range = &s.step_ranges[(static_cast<size_t>(r) * Fs + g) * 2];
      range[0] = range[1] = static_cast<uint32_t>(s.steps.size());
      if (!e[Fc + g].data()) {
        if (spec.kind == FeatureKind::kFixedLenSequence && !spec.allow_missing)
          w.fail(r, &spec.key, "the feature list is missing and allow_missing is false");
        continue;
      }
      bad = for_each_value(e[Fc + g], [&](std::string_view list) -> const char* {
        WireReader lr(list);
        uint32_t field, type;
        std::string_view feature;
        while (!lr.done()) {
          if (!lr.tag(field, type)) return "a field tag of a FeatureList is cut or invalid";
          if (field != 1) {
            if (!lr.skip(type)) return "a field of a FeatureList is cut or invalid";
            continue;
          }
          if (type != kLengthDelimited || !lr.bytes(feature))
            return "a Feature of a FeatureList is cut or invalid";
          FeatureValues v;
          v.present = true;
          v.first = v.last = static_cast<uint32_t>(s.fragments.size());
          if (const char* b = add_feature(feature, s.fragments, v)) return b;
          s.steps.push_back(v);
        }
        return nullptr;
      });
      if (bad) w.fail(r, &spec.key, str_cat("malformed FeatureList: ", bad));
      range[1] = static_cast<uint32_t>(s.steps.size());
      const int64_t n =
          spec.kind == FeatureKind::kFixedLenSequence ? spec.shape.num_elements() : -1;
      for (uint32_t t = range[0]; t < range[1]; ++t)
        check_values(w, r, spec, s.steps[t], n, str_cat("step ", t - range[0]).c_str());
    }
  }

  // Pass 2: allocate each output once and decode into it.
  Filler fill(w, s, serialized.buffer());
  for (size_t f = 0; f < Fc; ++f) {
    const FeatureSpec& spec = ctx[f];
    const int64_t n = spec.shape.num_elements();
    auto value = [&](int64_t r) -> const FeatureValues& {
      return s.values[static_cast<size_t>(r) * Fc + f];
    };
    if (spec.kind == FeatureKind::kFixedLen) {
      Tensor t = Tensor::allocate(spec.dtype, batched ? spec.shape.prepend(B) : spec.shape);
      for (int64_t r = 0; r < B; ++r) {
        if (value(r).present)
          fill.values(value(r), spec, r, t, r * n);
        else
          Filler::fill(t, r * n, n, spec.default_value);
      }
      out.push_back(std::move(t));
    } else if (spec.kind == FeatureKind::kVarLen) {
      int64_t total = 0;
      for (int64_t r = 0; r < B; ++r) total += value(r).count;
      Tensor t = Tensor::allocate(spec.dtype, Shape{total});
      Tensor splits = Tensor::allocate(DType::kInt64, Shape{B + 1});
      int64_t* sp = splits.mutable_data_as<int64_t>();
      int64_t at = 0;
      sp[0] = 0;
      for (int64_t r = 0; r < B; ++r) {
        fill.values(value(r), spec, r, t, at);
        at += value(r).count;
        sp[r + 1] = at;
      }
      out.push_back(std::move(t));
      if (batched) out.push_back(std::move(splits));
    } else {
      int64_t steps = 0;
      for (int64_t r = 0; r < B; ++r)
        if (n > 0) steps = std::max(steps, value(r).count / n);
      Tensor t = Tensor::allocate(
          spec.dtype, batched ? with_dims({B, steps}, spec.shape) : spec.shape.prepend(steps));
      for (int64_t r = 0; r < B; ++r) {
        const int64_t at = r * steps * n;
        fill.values(value(r), spec, r, t, at);
        Filler::fill(t, at + value(r).count, steps * n - value(r).count, spec.default_value);
      }
      out.push_back(std::move(t));
    }
  }
  for (size_t g = 0; g < Fs; ++g) {
    const FeatureSpec& spec = lists[g];
    auto range = [&](int64_t r) { return &s.step_ranges[(static_cast<size_t>(r) * Fs + g) * 2]; };
    if (spec.kind == FeatureKind::kFixedLenSequence) {
      const int64_t n = spec.shape.num_elements();
      int64_t steps = 0;
      for (int64_t r = 0; r < B; ++r) steps = std::max<int64_t>(steps, range(r)[1] - range(r)[0]);
      Tensor t = Tensor::allocate(
          spec.dtype, batched ? with_dims({B, steps}, spec.shape) : spec.shape.prepend(steps));
      for (int64_t r = 0; r < B; ++r) {
        const uint32_t* rg = range(r);
        int64_t at = r * steps * n;
        for (uint32_t k = rg[0]; k < rg[1]; ++k, at += n) fill.values(s.steps[k], spec, r, t, at);
        Filler::fill(t, at, (r + 1) * steps * n - at, spec.default_value);
      }
      out.push_back(std::move(t));
    } else {
      int64_t total = 0, nsteps = 0;
      for (int64_t r = 0; r < B; ++r)
        for (uint32_t k = range(r)[0]; k < range(r)[1]; ++k, ++nsteps) total += s.steps[k].count;
      Tensor t = Tensor::allocate(spec.dtype, Shape{total});
      Tensor outer = Tensor::allocate(DType::kInt64, Shape{B + 1});
      Tensor inner = Tensor::allocate(DType::kInt64, Shape{nsteps + 1});
      int64_t* os = outer.mutable_data_as<int64_t>();
      int64_t* is = inner.mutable_data_as<int64_t>();
      int64_t at = 0, step = 0;
      os[0] = is[0] = 0;
      for (int64_t r = 0; r < B; ++r) {
        for (uint32_t k = range(r)[0]; k < range(r)[1]; ++k) {
          fill.values(s.steps[k], spec, r, t, at);
          at += s.steps[k].count;
          is[++step] = at;
        }
        os[r + 1] = step;
      }
      out.push_back(std::move(t));
      if (batched) out.push_back(std::move(outer));
      out.push_back(std::move(inner));
    }
  }
}

}  // namespace dinput::example
