// Fuzz target of the distributed iterator's configuration space, through the C API only.
// Each input picks a pipeline (range, optionally shuffled, optionally filtered, batched,
// optionally repeated), a number of in-process workers and replicas, and an auto-shard
// policy; W threads then iterate it as W workers and the target checks what the library
// promises (docs/distribution.md):
//   - every element of the pipeline is delivered exactly once (DATA, AUTO over in-memory
//     data) or exactly W times (OFF), the same multiset a plain iterator of the same
//     pipeline gives (taken once per worker under OFF);
//   - every worker takes the same number of steps, and every get_next succeeds until all
//     of them see end of data at the same step;
//   - no replica receives more than ceil(G / N) rows in a step.
// The pipeline is built once and shared by the workers, as the `dinput` tool does: a
// shuffle must give every worker the same order (issue 14 item 1).
#include <dinput.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Config {
  int workers = 1, replicas = 1;
  int64_t size = 0, global_batch = 1, shuffle_buffer = 0, seed = 0, filter_mod = 0, repeat = 1;
  int64_t batch_parallel = 1;  // batch's num_parallel_calls: parallel assembly must change nothing
  bool drop_remainder = false, reshuffle = false;
  dinput_auto_shard_policy_t policy = DINPUT_AUTO_SHARD_AUTO;

  std::string describe() const {
    char text[320];
    std::snprintf(
        text, sizeof text,
        "W=%d R=%d range(%lld) shuffle(buffer=%lld, seed=%lld, reshuffle=%d) filter(mod %lld) "
        "batch(%lld, drop=%d, parallel=%lld) repeat(%lld) policy=%d",
        workers, replicas, static_cast<long long>(size), static_cast<long long>(shuffle_buffer),
        static_cast<long long>(seed), reshuffle ? 1 : 0, static_cast<long long>(filter_mod),
        static_cast<long long>(global_batch), drop_remainder ? 1 : 0,
        static_cast<long long>(batch_parallel), static_cast<long long>(repeat),
        static_cast<int>(policy));
    return text;
  }
};

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  int pick(int lo, int hi) {  // inclusive; 0 bytes left gives lo
    uint8_t b = pos_ < size_ ? data_[pos_++] : 0;
    return lo + b % (hi - lo + 1);
  }

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
};

[[noreturn]] void fail(const Config& c, const std::string& what) {
  std::fprintf(stderr, "dist_iterator_fuzz: invariant violated: %s\nconfig: %s\nlast error: %s\n",
               what.c_str(), c.describe().c_str(), dinput_last_error_message());
  std::abort();
}

void check(const Config& c, dinput_status_t status, const char* what) {
  if (status != DINPUT_OK) fail(c, std::string(what) + " failed: " + dinput_status_name(status));
}

// Keeps elements whose value is not a multiple of user_data's modulus.
dinput_status_t keep_non_multiples(int* keep, const dinput_element_t* in, void* user_data) {
  const int64_t mod = *static_cast<const int64_t*>(user_data);
  const auto* value = static_cast<const int64_t*>(dinput_tensor_data(dinput_element_get(in, 0)));
  *keep = (*value % mod) != 0;
  return DINPUT_OK;
}

// range -> [shuffle] -> [filter] -> batch -> [repeat] -> with_options(policy), built anew
// each call (a fresh dataset: the reference order of the first iterator).
dinput_dataset_t* build_pipeline(const Config& c, int64_t* filter_mod_storage) {
  dinput_dataset_t* ds = nullptr;
  check(c, dinput_dataset_range(&ds, 0, c.size, 1), "range");
  dinput_dataset_t* next = nullptr;
  // Replaces ds by `next`, which the call that gave `status` has just set.
  auto chain = [&](dinput_status_t status, const char* what) {
    check(c, status, what);
    dinput_dataset_free(ds);
    ds = next;
    next = nullptr;
  };
  if (c.shuffle_buffer > 0) {
    dinput_shuffle_options_t* shuffle_options = nullptr;
    check(c, dinput_shuffle_options_new(&shuffle_options), "shuffle_options_new");
    check(c, dinput_shuffle_options_set_seed(shuffle_options, c.seed, 0),
          "shuffle_options_set_seed");
    check(c,
          dinput_shuffle_options_set_reshuffle_each_iteration(shuffle_options, c.reshuffle ? 1 : 0),
          "shuffle_options_set_reshuffle_each_iteration");
    dinput_status_t s = dinput_dataset_shuffle(&next, ds, c.shuffle_buffer, shuffle_options);
    dinput_shuffle_options_free(shuffle_options);
    chain(s, "shuffle");
  }
  if (c.filter_mod > 1) {
    *filter_mod_storage = c.filter_mod;
    dinput_status_t s =
        dinput_dataset_filter(&next, ds, keep_non_multiples, filter_mod_storage, nullptr);
    chain(s, "filter");
  }
  dinput_batch_options_t* batch_options = nullptr;
  check(c, dinput_batch_options_new(&batch_options), "batch_options_new");
  check(c, dinput_batch_options_set_drop_remainder(batch_options, c.drop_remainder ? 1 : 0),
        "batch_options_set_drop_remainder");
  check(c, dinput_batch_options_set_num_parallel_calls(batch_options, c.batch_parallel),
        "batch_options_set_num_parallel_calls");
  dinput_status_t batched = dinput_dataset_batch(&next, ds, c.global_batch, batch_options);
  dinput_batch_options_free(batch_options);
  chain(batched, "batch");
  if (c.repeat > 1) chain(dinput_dataset_repeat(&next, ds, c.repeat), "repeat");
  dinput_options_t* options = nullptr;
  check(c, dinput_options_new(&options), "options_new");
  check(c, dinput_options_set_auto_shard_policy(options, c.policy), "set_auto_shard_policy");
  dinput_status_t s = dinput_dataset_with_options(&next, ds, options);
  dinput_options_free(options);
  chain(s, "with_options");
  return ds;
}

// The rows a plain iterator of a fresh copy of the pipeline yields, as value -> count.
std::map<int64_t, int> reference_counts(const Config& c) {
  int64_t mod = 0;
  dinput_dataset_t* ds = build_pipeline(c, &mod);
  dinput_iterator_t* it = nullptr;
  check(c, dinput_dataset_iterator(&it, ds), "dataset_iterator");
  std::map<int64_t, int> counts;
  for (;;) {
    dinput_element_t* element = nullptr;
    dinput_status_t s = dinput_iterator_get_next(&element, it);
    if (s == DINPUT_OUT_OF_RANGE) break;
    check(c, s, "iterator_get_next");
    const dinput_tensor_t* batch = dinput_element_get(element, 0);
    const auto* rows = static_cast<const int64_t*>(dinput_tensor_data(batch));
    for (int64_t i = 0; i < dinput_tensor_num_elements(batch); ++i) ++counts[rows[i]];
    dinput_element_free(element);
  }
  dinput_iterator_free(it);
  dinput_dataset_free(ds);
  return counts;
}

struct WorkerResult {
  std::map<int64_t, int> counts;
  int64_t steps = 0;
  std::string error;  // empty: reached end of data cleanly
};

void run_worker(const Config& c, dinput_collective_t* collective, const dinput_dataset_t* dataset,
                int index, WorkerResult* result) {
  dinput_strategy_t* strategy = nullptr;
  dinput_dist_dataset_t* dist = nullptr;
  dinput_dist_iterator_t* it = nullptr;
  const int64_t N = static_cast<int64_t>(c.workers) * c.replicas;
  const int64_t max_rows = (c.global_batch + N - 1) / N;
  auto give_up = [&](const std::string& why) {
    result->error = why + ": " + dinput_last_error_message();
    dinput_collective_abort(collective, DINPUT_ABORTED, "a fuzzed worker failed");
  };
  if (dinput_strategy_new_multi_worker_cpu(&strategy, collective, index, static_cast<int>(N)) !=
      DINPUT_OK) {
    give_up("strategy");
  } else if (dinput_strategy_distribute_dataset(&dist, strategy, dataset, nullptr) != DINPUT_OK) {
    give_up("distribute_dataset");
  } else if (dinput_dist_dataset_iterator(&it, dist) != DINPUT_OK) {
    give_up("dist_dataset_iterator");
  } else {
    for (;;) {
      dinput_per_replica_t* step = nullptr;
      dinput_status_t s = dinput_dist_iterator_get_next(&step, it);
      if (s == DINPUT_OUT_OF_RANGE) break;
      if (s != DINPUT_OK) {
        give_up("get_next");
        break;
      }
      ++result->steps;
      for (int r = 0; r < dinput_per_replica_size(step); ++r) {
        const dinput_tensor_t* rows_tensor = dinput_element_get(dinput_per_replica_get(step, r), 0);
        const int64_t n = dinput_tensor_num_elements(rows_tensor);
        if (n > max_rows) result->error = "a replica received more than ceil(G/N) rows";
        const auto* rows = static_cast<const int64_t*>(dinput_tensor_data(rows_tensor));
        for (int64_t i = 0; i < n; ++i) ++result->counts[rows[i]];
      }
      dinput_per_replica_free(step);
    }
  }
  dinput_dist_iterator_free(it);
  dinput_dist_dataset_free(dist);
  dinput_strategy_free(strategy);
}

Config decode(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  Config c;
  c.workers = in.pick(1, 4);
  c.replicas = in.pick(1, 3);
  c.size = in.pick(0, 90);
  c.global_batch = in.pick(1, 13);
  c.drop_remainder = in.pick(0, 1) == 1;
  static const dinput_auto_shard_policy_t kPolicies[] = {
      DINPUT_AUTO_SHARD_AUTO, DINPUT_AUTO_SHARD_DATA, DINPUT_AUTO_SHARD_OFF};
  c.policy = kPolicies[in.pick(0, 2)];
  if (in.pick(0, 1) == 1) {
    c.shuffle_buffer = in.pick(1, 100);
    c.seed = in.pick(0, 255);
    c.reshuffle = in.pick(0, 1) == 1;
  }
  if (in.pick(0, 3) == 0) c.filter_mod = in.pick(2, 5);
  if (in.pick(0, 3) == 0) c.repeat = in.pick(2, 3);
  // Read last, so that the inputs of the corpus keep their meaning (no byte left: 1).
  c.batch_parallel = in.pick(1, 4);
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Config c = decode(data, size);
  std::map<int64_t, int> expected = reference_counts(c);
  if (c.policy == DINPUT_AUTO_SHARD_OFF)
    for (auto& entry : expected) entry.second *= c.workers;

  int64_t mod = 0;
  dinput_dataset_t* dataset = build_pipeline(c, &mod);
  dinput_collective_t* collective = nullptr;
  check(c, dinput_collective_new_in_process(&collective, c.workers, 20000),
        "collective_new_in_process");
  std::vector<WorkerResult> results(static_cast<size_t>(c.workers));
  std::vector<std::thread> threads;
  for (int w = 0; w < c.workers; ++w)
    threads.emplace_back(run_worker, std::cref(c), collective, dataset, w,
                         &results[static_cast<size_t>(w)]);
  for (auto& t : threads) t.join();
  dinput_collective_free(collective);
  dinput_dataset_free(dataset);

  std::map<int64_t, int> delivered;
  for (size_t w = 0; w < results.size(); ++w) {
    if (!results[w].error.empty()) fail(c, "worker " + std::to_string(w) + ": " + results[w].error);
    if (results[w].steps != results[0].steps)
      fail(c, "worker " + std::to_string(w) + " took " + std::to_string(results[w].steps) +
                  " steps, worker 0 " + std::to_string(results[0].steps));
    for (const auto& entry : results[w].counts) delivered[entry.first] += entry.second;
  }
  if (delivered != expected) {
    std::string diff;
    for (const auto& entry : expected) {
      auto got = delivered.find(entry.first);
      int n = got == delivered.end() ? 0 : got->second;
      if (n != entry.second && diff.size() < 400)
        diff += " " + std::to_string(entry.first) + ":" + std::to_string(n) + "/" +
                std::to_string(entry.second);
    }
    for (const auto& entry : delivered)
      if (!expected.count(entry.first) && diff.size() < 400)
        diff += " " + std::to_string(entry.first) + ":" + std::to_string(entry.second) + "/0";
    fail(c, "delivered rows differ from the plain pipeline's (value:got/expected):" + diff);
  }
  return 0;
}
