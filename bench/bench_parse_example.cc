// parse_example against C++ libprotobuf: batches of 256 serialized tf.train.Examples with 10
// features (int64, float and bytes; fixed-length and variable-length). dinput parses each
// batch through the C API (`from_tensors(batch).repeat(n).parse_example(spec)`); the baseline
// parses the same records into protobuf's generated classes (one message reused, as a careful
// caller would) and copies each feature's values out into batch arrays of the same layout
// (fixed-length features dense, variable-length ones as values plus row splits, bytes as
// strings), checking each feature's type and size as the parse does. Both sides' outputs are
// compared once before timing. Three interleaved rounds; the best of each side is reported
// with the ratio (dinput over protobuf; goal >= 1.5).
//
// Usage: bench_parse_example [--quick]   (--quick: tiny sizes, for the CTest smoke test)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dinput.h"
#ifdef DINPUT_BENCH_HAVE_PROTOBUF
#include "example.pb.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBatch = 256;

void check(dinput_status_t s, const char* what) {
  if (s != DINPUT_OK) {
    std::fprintf(stderr, "bench_parse_example: %s: %s\n", what, dinput_last_error_message());
    std::exit(1);
  }
}

// ---- the records: written by hand in the wire format (packed lists) ----

void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void field(std::string& out, int number, const std::string& payload) {
  varint(out, static_cast<uint64_t>(number) << 3 | 2);
  varint(out, payload.size());
  out += payload;
}
std::string int64_feature(const std::vector<int64_t>& v) {
  std::string packed, list, feature;
  for (int64_t x : v) varint(packed, static_cast<uint64_t>(x));
  field(list, 1, packed);
  field(feature, 3, list);
  return feature;
}
std::string float_feature(const std::vector<float>& v) {
  std::string packed(v.size() * 4, '\0'), list, feature;
  if (!v.empty()) std::memcpy(&packed[0], v.data(), packed.size());
  field(list, 1, packed);
  field(feature, 2, list);
  return feature;
}
std::string bytes_feature(const std::vector<std::string>& v) {
  std::string list, feature;
  for (const auto& s : v) field(list, 1, s);
  field(feature, 1, list);
  return feature;
}

std::string make_record(std::mt19937& rng) {
  auto ints = [&](size_t n, int64_t range) {
    std::vector<int64_t> v(n);
    for (auto& x : v) x = static_cast<int64_t>(rng() % static_cast<uint64_t>(range));
    return v;
  };
  auto floats = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(rng() % 10000) / 100.0f;
    return v;
  };
  auto text = [&](size_t n) {
    std::string s(n, 'a');
    for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
    return s;
  };
  std::vector<std::pair<std::string, std::string>> features = {
      {"label", int64_feature(ints(1, 1000))},
      {"user_id", int64_feature(ints(1, int64_t{1} << 40))},
      {"item_ids", int64_feature(ints(1 + rng() % 15, int64_t{1} << 30))},
      {"counts", int64_feature(ints(4, 100000))},
      {"score", float_feature(floats(1))},
      {"embedding", float_feature(floats(16))},
      {"weights", float_feature(floats(rng() % 8))},
      {"name", bytes_feature({text(12)})},
      {"tags", bytes_feature({text(5), text(7), text(3)})},
      {"payload", bytes_feature({text(64)})},
  };
  std::shuffle(features.begin(), features.end(), rng);  // writers order map entries freely
  std::string entries;
  for (const auto& [key, value] : features) {
    std::string e;
    field(e, 1, key);
    field(e, 2, value);
    field(entries, 1, e);
  }
  std::string example;
  field(example, 1, entries);
  return example;
}

// ---- dinput ----

struct Dinput {
  dinput_dataset_t* ds = nullptr;
  int64_t batches;

  Dinput(const std::vector<std::string>& records, int64_t n) : batches(n) {
    std::vector<const char*> strings;
    std::vector<size_t> lengths;
    for (const auto& r : records) {
      strings.push_back(r.data());
      lengths.push_back(r.size());
    }
    const int64_t shape[1] = {static_cast<int64_t>(records.size())};
    dinput_tensor_t* t = nullptr;
    check(dinput_tensor_new_bytes(&t, shape, 1, strings.data(), lengths.data()), "tensor");
    dinput_element_t* e = nullptr;
    check(dinput_element_new(&e, &t, 1), "element");
    dinput_dataset_t *src = nullptr, *rep = nullptr;
    check(dinput_dataset_from_tensors(&src, e), "from_tensors");
    check(dinput_dataset_repeat(&rep, src, n), "repeat");
    dinput_feature_spec_t* f = nullptr;
    check(dinput_feature_spec_new(&f), "feature spec");
    const int64_t four = 4, sixteen = 16;
    check(dinput_feature_spec_add_fixed_len(f, "label", DINPUT_INT64, nullptr, 0, nullptr), "f");
    check(dinput_feature_spec_add_fixed_len(f, "user_id", DINPUT_INT64, nullptr, 0, nullptr), "f");
    check(dinput_feature_spec_add_var_len(f, "item_ids", DINPUT_INT64), "f");
    check(dinput_feature_spec_add_fixed_len(f, "counts", DINPUT_INT64, &four, 1, nullptr), "f");
    check(dinput_feature_spec_add_fixed_len(f, "score", DINPUT_FLOAT32, nullptr, 0, nullptr), "f");
    check(dinput_feature_spec_add_fixed_len(f, "embedding", DINPUT_FLOAT32, &sixteen, 1, nullptr),
          "f");
    check(dinput_feature_spec_add_var_len(f, "weights", DINPUT_FLOAT32), "f");
    check(dinput_feature_spec_add_fixed_len(f, "name", DINPUT_BYTES, nullptr, 0, nullptr), "f");
    check(dinput_feature_spec_add_var_len(f, "tags", DINPUT_BYTES), "f");
    check(dinput_feature_spec_add_fixed_len(f, "payload", DINPUT_BYTES, nullptr, 0, nullptr), "f");
    check(dinput_dataset_parse_example(&ds, rep, f, 0), "parse_example");
    dinput_feature_spec_free(f);
    dinput_dataset_free(rep);
    dinput_dataset_free(src);
    dinput_element_free(e);
    dinput_tensor_free(t);
  }
  ~Dinput() { dinput_dataset_free(ds); }

  // Parses every batch; returns a checksum of what it read so nothing is optimised away.
  uint64_t run(std::vector<dinput_element_t*>* keep_first = nullptr) const {
    dinput_iterator_t* it = nullptr;
    check(dinput_dataset_iterator(&it, ds), "iterator");
    uint64_t sum = 0;
    dinput_element_t* e = nullptr;
    while (dinput_iterator_get_next(&e, it) == DINPUT_OK) {
      sum += dinput_element_size(e);
      sum += static_cast<uint64_t>(*static_cast<const int64_t*>(
          dinput_tensor_data(dinput_element_get(e, 0))));  // counts, the first component
      if (keep_first && keep_first->empty())
        keep_first->push_back(e);
      else
        dinput_element_free(e);
    }
    dinput_iterator_free(it);
    return sum;
  }
};

#ifdef DINPUT_BENCH_HAVE_PROTOBUF
// ---- libprotobuf: the same outputs, in the same layout ----

struct Outputs {
  std::vector<int64_t> label, user_id, counts, item_ids, item_splits;
  std::vector<float> score, embedding, weights;
  std::vector<int64_t> weight_splits, tag_splits;
  std::vector<std::string> name, payload, tags;
};

const benchpb::Feature& need(const benchpb::Example& ex, const char* key,
                             benchpb::Feature::KindCase kind) {
  const auto& map = ex.features().feature();
  auto it = map.find(key);
  if (it == map.end() || it->second.kind_case() != kind) {
    std::fprintf(stderr, "bench_parse_example: protobuf: feature %s missing or of another type\n",
                 key);
    std::exit(1);
  }
  return it->second;
}

template <typename T, typename List>
void fixed(std::vector<T>& out, const List& list, size_t n, const char* key) {
  if (static_cast<size_t>(list.value_size()) != n) {
    std::fprintf(stderr, "bench_parse_example: protobuf: feature %s has the wrong size\n", key);
    std::exit(1);
  }
  out.insert(out.end(), list.value().begin(), list.value().end());
}

struct Protobuf {
  const std::vector<std::string>& records;
  int64_t batches;
  mutable benchpb::Example ex;  // reused for every record
  mutable Outputs out;

  void parse_batch() const {
    using K = benchpb::Feature;
    out = Outputs();  // fresh outputs per batch, as dinput makes fresh tensors
    out.item_splits.push_back(0);
    out.weight_splits.push_back(0);
    out.tag_splits.push_back(0);
    for (const std::string& r : records) {
      if (!ex.ParseFromString(r)) {
        std::fprintf(stderr, "bench_parse_example: protobuf refused a record\n");
        std::exit(1);
      }
      fixed(out.label, need(ex, "label", K::kInt64List).int64_list(), 1, "label");
      fixed(out.user_id, need(ex, "user_id", K::kInt64List).int64_list(), 1, "user_id");
      fixed(out.counts, need(ex, "counts", K::kInt64List).int64_list(), 4, "counts");
      const auto& ids = need(ex, "item_ids", K::kInt64List).int64_list().value();
      out.item_ids.insert(out.item_ids.end(), ids.begin(), ids.end());
      out.item_splits.push_back(static_cast<int64_t>(out.item_ids.size()));
      fixed(out.score, need(ex, "score", K::kFloatList).float_list(), 1, "score");
      fixed(out.embedding, need(ex, "embedding", K::kFloatList).float_list(), 16, "embedding");
      const auto& w = need(ex, "weights", K::kFloatList).float_list().value();
      out.weights.insert(out.weights.end(), w.begin(), w.end());
      out.weight_splits.push_back(static_cast<int64_t>(out.weights.size()));
      fixed(out.name, need(ex, "name", K::kBytesList).bytes_list(), 1, "name");
      fixed(out.payload, need(ex, "payload", K::kBytesList).bytes_list(), 1, "payload");
      const auto& t = need(ex, "tags", K::kBytesList).bytes_list().value();
      out.tags.insert(out.tags.end(), t.begin(), t.end());
      out.tag_splits.push_back(static_cast<int64_t>(out.tags.size()));
    }
  }

  uint64_t run() const {
    uint64_t sum = 0;
    for (int64_t b = 0; b < batches; ++b) {
      parse_batch();
      sum += 10 + static_cast<uint64_t>(out.counts[0]);
    }
    return sum;
  }
};

// The two sides' first batch must hold the same values.
bool same_outputs(const dinput_element_t* e, const Protobuf& pb) {
  pb.parse_batch();
  const Outputs& o = pb.out;
  auto ints = [&](size_t c, const std::vector<int64_t>& want) {
    const dinput_tensor_t* t = dinput_element_get(e, c);
    return dinput_tensor_num_elements(t) == static_cast<int64_t>(want.size()) &&
           std::memcmp(dinput_tensor_data(t), want.data(), want.size() * 8) == 0;
  };
  auto floats = [&](size_t c, const std::vector<float>& want) {
    const dinput_tensor_t* t = dinput_element_get(e, c);
    return dinput_tensor_num_elements(t) == static_cast<int64_t>(want.size()) &&
           std::memcmp(dinput_tensor_data(t), want.data(), want.size() * 4) == 0;
  };
  auto strings = [&](size_t c, const std::vector<std::string>& want) {
    const dinput_tensor_t* t = dinput_element_get(e, c);
    if (dinput_tensor_num_elements(t) != static_cast<int64_t>(want.size())) return false;
    for (size_t i = 0; i < want.size(); ++i) {
      const char* s;
      size_t n;
      if (dinput_tensor_string_view(&s, &n, t, static_cast<int64_t>(i)) != DINPUT_OK ||
          std::string(s, n) != want[i])
        return false;
    }
    return true;
  };
  // Keys sorted: counts, embedding, item_ids (2), label, name, payload, score, tags (2),
  // user_id, weights (2).
  return ints(0, o.counts) && floats(1, o.embedding) && ints(2, o.item_ids) &&
         ints(3, o.item_splits) && ints(4, o.label) && strings(5, o.name) &&
         strings(6, o.payload) && floats(7, o.score) && strings(8, o.tags) &&
         ints(9, o.tag_splits) && ints(10, o.user_id) && floats(11, o.weights) &&
         ints(12, o.weight_splits);
}
#endif

double seconds(const Clock::time_point& start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int64_t batches = quick ? 3 : 400;
  const int rounds = 3;
  std::mt19937 rng(2026);
  std::vector<std::string> records;
  for (int i = 0; i < kBatch; ++i) records.push_back(make_record(rng));
  const Dinput dinput(records, batches);
#ifndef DINPUT_BENCH_HAVE_PROTOBUF
  const Clock::time_point start = Clock::now();
  const uint64_t sink = dinput.run();
  const double s = seconds(start);
  std::printf(
      "{\"bench\":\"parse_example\",\"batch\":%d,\"features\":10,\"dinput_records_per_s\":%.0f,"
      "\"skipped\":\"the benchmark was built without libprotobuf (libprotobuf-dev, "
      "protobuf-compiler)\",\"sink\":%llu}\n",
      kBatch, static_cast<double>(batches * kBatch) / s, static_cast<unsigned long long>(sink));
  return 0;
#else
  const Protobuf protobuf{records, batches, {}, {}};
  {
    // Warm-up of both, and the check that they agree.
    std::vector<dinput_element_t*> first;
    dinput.run(&first);
    if (first.empty() || !same_outputs(first[0], protobuf)) {
      std::fprintf(stderr, "bench_parse_example: dinput and protobuf parse differently\n");
      return 1;
    }
    dinput_element_free(first[0]);
    protobuf.run();
  }
  double best_dinput = 1e30, best_protobuf = 1e30;
  uint64_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    Clock::time_point start = Clock::now();
    sink += dinput.run();
    best_dinput = std::min(best_dinput, seconds(start));
    start = Clock::now();
    sink += protobuf.run();
    best_protobuf = std::min(best_protobuf, seconds(start));
  }
  const double n = static_cast<double>(batches * kBatch);
  const double ratio = best_protobuf / best_dinput;
  std::printf(
      "{\"bench\":\"parse_example\",\"batch\":%d,\"features\":10,\"batches\":%lld,"
      "\"record_bytes\":%zu,\"dinput_records_per_s\":%.0f,\"protobuf_records_per_s\":%.0f,"
      "\"ratio\":%.2f,\"goal\":1.5,\"pass\":%s,\"rounds\":%d,\"sink\":%llu}\n",
      kBatch, static_cast<long long>(batches), records[0].size(), n / best_dinput,
      n / best_protobuf, ratio, ratio >= 1.5 ? "true" : "false", rounds,
      static_cast<unsigned long long>(sink));
  return 0;
#endif
}
