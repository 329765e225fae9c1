#include "data/state.h"

#include <cstdio>
#include <cstring>

#include "core/quote.h"
#include "core/status.h"
#include "data/stage_stats.h"
#include "io/crc32c.h"

namespace dinput {

namespace {

constexpr char kMagic[8] = {'D', 'I', 'N', 'P', 'U', 'T', 'S', 'T'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 24;  // magic, version, payload length, payload CRC

void put_le(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

[[noreturn]] void damaged(const std::string& what) {
  raise(Code::kDataLoss, "the iterator state is damaged: ", what);
}

void describe_into(const Dataset& ds, std::vector<std::string>& out) {
  out.push_back(str_cat(ds.name(), "(", ds.arguments(), ")"));
  for (const auto& in : ds.inputs()) describe_into(*in, out);
}

// The operations of the graph in pre-order, as the fingerprint lists them.
void collect(const Dataset& ds, std::vector<const Dataset*>& out) {
  out.push_back(&ds);
  for (const auto& in : ds.inputs()) collect(*in, out);
}

// `ds` with the seeds in `seeds` (by pre-order index) given to its random-seeded operations.
DatasetPtr with_seeds(const DatasetPtr& ds, size_t& index, const std::vector<uint64_t>& seeds,
                      const std::vector<bool>& has_seed) {
  size_t mine = index++;
  std::vector<DatasetPtr> inputs = ds->inputs();
  bool changed = false;
  for (auto& in : inputs) {
    DatasetPtr copy = with_seeds(in, index, seeds, has_seed);
    changed |= copy != in;
    in = std::move(copy);
  }
  DatasetPtr out = changed ? ds->with_inputs(std::move(inputs)) : ds;
  return has_seed[mine] ? out->with_seed(seeds[mine]) : out;
}

}  // namespace

void StateWriter::u64(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void StateWriter::bytes(std::string_view b) {
  u64(b.size());
  out_.append(b.data(), b.size());
}

void StateReader::corrupt(const std::string& what) const {
  raise(Code::kDataLoss, "the iterator state is damaged: section '", node_, "', offset ", offset(),
        ": ", what);
}

uint64_t StateReader::u64(const char* field) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) corrupt(str_cat("truncated while reading ", field));
    auto byte = static_cast<unsigned char>(data_[pos_++]);
    if (shift == 63 && byte > 1) corrupt(str_cat(field, " does not fit 64 bits"));
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
  corrupt(str_cat(field, " does not fit 64 bits"));
}

int64_t StateReader::i64(const char* field) {
  uint64_t z = u64(field);
  return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
}

bool StateReader::flag(const char* field) {
  uint64_t v = u64(field);
  if (v > 1) corrupt(str_cat(field, " is ", v, ", not 0 or 1"));
  return v == 1;
}

std::string StateReader::bytes(const char* field) {
  uint64_t n = u64(field);
  if (n > data_.size() - pos_)
    corrupt(str_cat(field, " claims ", n, " bytes but ", data_.size() - pos_, " are left"));
  std::string out(data_.substr(pos_, static_cast<size_t>(n)));
  pos_ += static_cast<size_t>(n);
  return out;
}

int64_t StateReader::i64_in(const char* field, int64_t lo, int64_t hi) {
  int64_t v = i64(field);
  if (v < lo || v > hi) corrupt(str_cat(field, " is ", v, ", outside [", lo, ", ", hi, "]"));
  return v;
}

uint64_t StateReader::u64_in(const char* field, uint64_t lo, uint64_t hi) {
  uint64_t v = u64(field);
  if (v < lo || v > hi) corrupt(str_cat(field, " is ", v, ", outside [", lo, ", ", hi, "]"));
  return v;
}

StateReader StateReader::section(const char* name) {
  std::string found = bytes("a section's operation name");
  if (found != name)
    corrupt(str_cat("expected the section of '", name, "' but found ", quoted(found)));
  uint64_t n = u64("a section's length");
  if (n > data_.size() - pos_)
    corrupt(str_cat("the section of '", name, "' claims ", n, " bytes but ", data_.size() - pos_,
                    " are left"));
  StateReader inner(data_.substr(pos_, static_cast<size_t>(n)), offset(), name);
  pos_ += static_cast<size_t>(n);
  return inner;
}

void StateReader::finish() const {
  if (pos_ != data_.size())
    corrupt(str_cat(data_.size() - pos_, " unexpected bytes at the end of the section"));
}

std::string save_to_bytes(const Iterator& input) {
  StateWriter w;
  input.save(w);
  return w.take();
}

void save_unless_ended(StateWriter& w, const char* section, bool ended, const Iterator& input) {
  w.section(section, [&](StateWriter& s) {
    s.flag(ended);
    if (!ended) input.save(s);
  });
}

bool restore_unless_ended(StateReader& r, const char* section, Iterator& input) {
  StateReader s = r.section(section);
  const bool ended = s.flag("input ended");
  if (!ended) input.restore(s);
  s.finish();
  return ended;
}

void restore_from_bytes(StateReader& r, const char* field, Iterator& it) {
  std::string saved = r.bytes(field);
  StateReader inner(saved, r.offset() - saved.size(), r.node());
  it.restore(inner);
  inner.finish();
}

std::vector<std::string> pipeline_fingerprint(const Dataset& ds) {
  std::vector<std::string> out;
  describe_into(ds, out);
  return out;
}

std::string list_digest(const std::vector<std::string>& items) {
  uint32_t crc = 0;
  for (const auto& s : items) {
    StateWriter w;
    w.bytes(s);  // length-prefixed, so that ["ab","c"] and ["a","bc"] differ
    crc = crc32c::extend(crc, w.data().data(), w.data().size());
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  return str_cat(items.size(), ":", hex);
}

std::string save_state(const Dataset& ds, const Dataset& effective, const Iterator* it,
                       bool ended) {
  if (ended) return save_state_of_section(ds, effective, nullptr);
  const std::string section = save_to_bytes(*it);
  return save_state_of_section(ds, effective, &section);
}

std::string save_state_of_section(const Dataset& ds, const Dataset& effective,
                                  const std::string* section) {
  const bool ended = section == nullptr;
  StateWriter payload;
  std::vector<std::string> fp = pipeline_fingerprint(ds);
  payload.u64(fp.size());
  for (const auto& d : fp) payload.bytes(d);
  // The seeds drawn at random, by their operation's index in the fingerprint: a restored
  // pipeline continues their orders. (Epochs are in the sections of the iterators that
  // make new iterators of reshuffling operations: repeat.)
  std::vector<const Dataset*> nodes, used;
  collect(ds, nodes);
  collect(effective, used);
  if (used.size() != nodes.size())
    raise(Code::kInternal, "save_state: the iterated pipeline is not a copy of the given one");
  StateWriter seeds;
  uint64_t seed_count = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]->has_random_seed()) {
      seeds.u64(i);
      seeds.u64(used[i]->seed());
      ++seed_count;
    }
  }
  payload.u64(seed_count);
  std::string p = payload.take() + seeds.data();
  StateWriter root;
  root.flag(ended);
  if (!ended) root.raw(*section);
  p += root.data();
  return seal_state(p);
}

std::string seal_state(const std::string& payload) {
  std::string out(kMagic, sizeof kMagic);
  put_le(out, kFormatVersion, 4);
  put_le(out, payload.size(), 8);
  put_le(out, crc32c::mask(crc32c::value(payload.data(), payload.size())), 4);
  out += payload;
  return out;
}

std::string_view open_state(std::string_view state) {
  if (state.size() < kHeaderBytes)
    damaged(str_cat("it has ", state.size(), " bytes, fewer than the ", kHeaderBytes,
                    "-byte header (truncated)"));
  if (std::memcmp(state.data(), kMagic, sizeof kMagic) != 0)
    damaged("it does not start with \"DINPUTST\" (not an iterator state)");
  uint64_t version = get_le(state.data() + 8, 4);
  if (version != kFormatVersion)
    damaged(str_cat("format version ", version, " is not known to this build (it reads version ",
                    kFormatVersion, ")"));
  uint64_t length = get_le(state.data() + 12, 8);
  if (length != state.size() - kHeaderBytes)
    damaged(str_cat("the header gives ", length, " payload bytes but ", state.size() - kHeaderBytes,
                    " follow it", length > state.size() - kHeaderBytes ? " (truncated)" : ""));
  std::string_view payload = state.substr(kHeaderBytes);
  uint32_t crc = crc32c::mask(crc32c::value(payload.data(), payload.size()));
  if (crc != static_cast<uint32_t>(get_le(state.data() + 20, 4)))
    damaged("its checksum does not match its contents (CRC32C of the payload)");
  return payload;
}

RestoredIterator restore_state(const DatasetPtr& ds, IteratorContext& ctx, std::string_view state) {
  std::string_view payload = open_state(state);
  StateReader r(payload, kHeaderBytes, "pipeline");
  std::vector<std::string> mine = pipeline_fingerprint(*ds);
  uint64_t count = r.u64_in("the number of operations", 0, payload.size());
  for (uint64_t i = 0; i < count || i < mine.size(); ++i) {
    std::string saved = i < count ? r.bytes("an operation's description") : std::string();
    if (i < count && i < mine.size() && saved == mine[i]) continue;
    raise(Code::kFailedPrecondition,
          "the iterator state was saved from a different pipeline: operation ", i,
          " differs: saved ",
          i < count ? quoted(saved)
                    : "nothing (the saved pipeline has " + std::to_string(count) + " operations)",
          " but this pipeline has ",
          i < mine.size() ? quoted(mine[i])
                          : "nothing (it has " + std::to_string(mine.size()) + " operations)");
  }
  std::vector<const Dataset*> nodes;
  collect(*ds, nodes);
  std::vector<uint64_t> seeds(nodes.size());
  std::vector<bool> has_seed(nodes.size());
  uint64_t seed_count = r.u64_in("the number of random seeds", 0, nodes.size());
  for (uint64_t k = 0; k < seed_count; ++k) {
    auto i = static_cast<size_t>(r.u64_in("an operation index", 0, nodes.size() - 1));
    if (!nodes[i]->has_random_seed() || has_seed[i])
      r.corrupt(
          str_cat("operation ", i, " (", nodes[i]->name(), ") has no random seed to restore"));
    seeds[i] = r.u64("a random seed");
    has_seed[i] = true;
  }
  RestoredIterator out;
  size_t index = 0;
  out.dataset = seed_count ? with_seeds(ds, index, seeds, has_seed) : ds;
  // Counters of its own: restoring sets them (repeat), which must not change the epochs
  // other iterators of the same datasets draw.
  ctx.epochs = std::make_shared<EpochCounters>();
  bool ended = r.flag("ended");
  if (!ended) {
    IteratorContext restoring = ctx;
    restoring.restoring = true;
    out.iterator = make_pipeline_iterator(out.dataset, restoring);
    ctx.pipeline_stats = restoring.pipeline_stats;
    out.iterator->restore(r);
  }
  r.finish();
  return out;
}

}  // namespace dinput
