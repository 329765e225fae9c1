// Saving and restoring distributed iterators (docs/checkpoint.md, "Distributed iterators"):
// in-process workers save at a step, a new job restores from the saved bytes, and what it
// delivers must be what the saved job went on to deliver.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "data/state.h"
#include "distribute/state_json.h"
#include "harness.h"
#include "io/file_sources.h"
#include "io/record_writer.h"

namespace dinput::testing {
namespace {

using Steps = std::vector<std::vector<std::vector<int64_t>>>;  // step -> replica -> values

std::vector<std::vector<int64_t>> take_step(const std::vector<Element>& step) {
  std::vector<std::vector<int64_t>> replicas;
  for (const auto& piece : step) replicas.push_back(values_of(piece));
  return replicas;
}

struct SavedJob {
  std::vector<Steps> before, after;  // per worker: the steps before the save, and after it
  std::vector<std::string> states;   // per worker: what save() returned
  std::vector<std::string> errors;
  std::vector<double> save_ms;  // per worker: how long save() took
};

std::vector<std::string> devices(int R) {
  std::vector<std::string> d;
  for (int r = 0; r < R; ++r) d.push_back("CPU:" + std::to_string(r));
  return d;
}

// W workers of R replicas take `k` steps, save, and go on to the end (at most `rest` more).
// `from`: restore the workers from this state first.
SavedJob save_at(int W, int R, const MakeDist& make, int64_t k, int64_t rest = 1 << 30,
                 const std::string* from = nullptr) {
  auto collective = W > 1 ? make_in_process_collective(W, 20000) : nullptr;
  SavedJob job;
  job.before.resize(W), job.after.resize(W), job.states.resize(W), job.errors.resize(W);
  job.save_ms.resize(W);
  auto work = [&](int w) {
    try {
      auto dataset = make(make_strategy(devices(R), collective, w));
      auto it = from ? std::make_unique<DistributedIterator>(dataset, *from)
                     : std::make_unique<DistributedIterator>(dataset);
      std::vector<Element> step;
      for (int64_t i = 0; i < k && it->next(step); ++i) job.before[w].push_back(take_step(step));
      const auto t0 = std::chrono::steady_clock::now();
      job.states[w] = it->save();
      job.save_ms[w] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      for (int64_t i = 0; i < rest && it->next(step); ++i) job.after[w].push_back(take_step(step));
    } catch (const Error& e) {
      job.errors[w] = std::string(code_name(e.code())) + ": " + e.what();
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w) threads.emplace_back(work, w);
  for (auto& t : threads) t.join();
  return job;
}

struct RestoredJob {
  std::vector<Steps> steps;
  std::vector<std::string> errors;
};

// W workers of R replicas restore from states[w] (states[0] when there is one) and drain.
RestoredJob restore_from(int W, int R, const MakeDist& make,
                         const std::vector<std::string>& states) {
  auto collective = W > 1 ? make_in_process_collective(W, 20000) : nullptr;
  RestoredJob job;
  job.steps.resize(W), job.errors.resize(W);
  auto work = [&](int w) {
    try {
      const std::string& state = states.at(states.size() == 1 ? 0 : static_cast<size_t>(w));
      DistributedIterator it(make(make_strategy(devices(R), collective, w)), state);
      std::vector<Element> step;
      while (it.next(step)) job.steps[w].push_back(take_step(step));
    } catch (const Error& e) {
      job.errors[w] = std::string(code_name(e.code())) + ": " + e.what();
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w) threads.emplace_back(work, w);
  for (auto& t : threads) t.join();
  return job;
}

MakeDist distribute(DatasetPtr ds) {
  return [ds](std::shared_ptr<const Strategy> s) {
    return distribute_dataset(std::move(s), ds, InputOptions{});
  };
}

// range(n) shuffled with a random seed, batched by 6 (a partial last batch), under `policy`.
DatasetPtr shuffled_range(int64_t n, AutoShardPolicy policy) {
  return with_policy(make_batch(make_shuffle(make_range(0, n, 1), 10, -1, true), 6, false), policy);
}

std::string describe(const std::vector<Steps>& runs) {
  std::string s;
  for (size_t w = 0; w < runs.size(); ++w)
    s += "worker " + std::to_string(w) + ": " + notation(WorkerRun{runs[w], ""}) + "\n";
  return s;
}

// The same shape restores exactly: every worker, step for step, replica for replica.
void expect_exact_resume(int W, int R, const MakeDist& make, int64_t k) {
  SCOPED_TRACE("W=" + std::to_string(W) + " R=" + std::to_string(R) + " k=" + std::to_string(k));
  SavedJob saved = save_at(W, R, make, k);
  for (int w = 0; w < W; ++w) ASSERT_EQ(saved.errors[w], "");
  for (int w = 1; w < W; ++w) EXPECT_EQ(saved.states[w], saved.states[0]) << "worker " << w;
  RestoredJob restored = restore_from(W, R, make, {saved.states[0]});
  for (int w = 0; w < W; ++w) ASSERT_EQ(restored.errors[w], "");
  EXPECT_EQ(describe(restored.steps), describe(saved.after));
}

TEST(DistState, DataShardingResumesExactlyAtEveryStep) {
  const auto make = distribute(shuffled_range(41, AutoShardPolicy::kData));
  for (int W : {1, 2, 3})
    for (int R : {1, 2})
      for (int64_t k : {0, 1, 2, 4, 6, 7, 8}) expect_exact_resume(W, R, make, k);
}

TEST(DistState, OffShardingWithABalancedSplitResumesInsideBatches) {
  // G = 6 is known: the balanced split cuts each worker's batches into pieces that cross
  // steps, so saves fall inside batches.
  const auto make = distribute(shuffled_range(29, AutoShardPolicy::kOff));
  for (int W : {1, 2, 3})
    for (int R : {1, 2})
      for (int64_t k : {0, 1, 2, 3, 5, 9}) expect_exact_resume(W, R, make, k);
}

TEST(DistState, EvenSplitOfUnknownBatchSizeResumesInsideBatches) {
  // rebatch hides the global batch size: every worker keeps all N pieces of each batch,
  // R at a step, so a batch spans W steps.
  const auto make = distribute(
      with_policy(make_rebatch(make_batch(make_range(0, 40, 1), 6, false), {5, 7}, false),
                  AutoShardPolicy::kOff));
  for (int W : {1, 2, 3})
    for (int R : {1, 2})
      for (int64_t k : {1, 2, 3, 5}) expect_exact_resume(W, R, make, k);
}

TEST(DistState, FileShardingResumesExactly) {
  TempFiles files;
  for (int f = 0; f < 6; ++f) files.add(iota(f * 100, f * 100 + 3 + f));
  const auto make = distribute(
      with_policy(make_batch(make_shuffle(make_text_lines(files.files()), 4, 7, true), 3, false),
                  AutoShardPolicy::kFile));
  for (int W : {1, 2, 3})
    for (int R : {1, 2})
      for (int64_t k : {0, 1, 2, 4}) expect_exact_resume(W, R, make, k);
}

TEST(DistState, PerReplicaPipelinesFromAFunctionResume) {
  const MakeDist make = [](std::shared_ptr<const Strategy> s) {
    InputOptions o;
    o.replication_mode = ReplicationMode::kPerReplica;
    return distribute_datasets_from_function(
        std::move(s),
        [](const InputContext& ctx) {
          return make_batch(
              make_shuffle(make_range(0, 10 + 3 * ctx.input_pipeline_id, 1), 4, -1, false), 2,
              false);
        },
        o);
  };
  for (int W : {1, 2})
    for (int64_t k : {0, 1, 3, 5, 6}) expect_exact_resume(W, 2, make, k);
}

TEST(DistState, SavedAfterTheEndRestoresEnded) {
  const auto make = distribute(shuffled_range(12, AutoShardPolicy::kData));
  SavedJob saved = save_at(2, 1, make, 100);
  ASSERT_EQ(saved.errors[0], "");
  RestoredJob restored = restore_from(2, 1, make, {saved.states[0]});
  EXPECT_EQ(restored.errors[0], "");
  EXPECT_TRUE(restored.steps[0].empty());
}

// All elements of the steps of every worker, counted.
std::map<int64_t, int> count_values(const std::vector<Steps>& runs) {
  std::map<int64_t, int> n;
  for (const auto& run : runs)
    for (const auto& step : run)
      for (const auto& piece : step)
        for (int64_t v : piece) ++n[v];
  return n;
}

TEST(DistState, DataShardingRestoresOnAnyNumberOfWorkersAndReplicas) {
  // Under DATA every worker reads the same global stream: a state continues at the next
  // global batch whatever the new shape, and every element is delivered exactly once.
  const auto make = distribute(shuffled_range(41, AutoShardPolicy::kData));
  for (int W : {1, 2, 3, 4, 6})
    for (int W2 : {1, 2, 3, 4, 6})
      for (int64_t k : {2, 5}) {
        SCOPED_TRACE("W=" + std::to_string(W) + " -> " + std::to_string(W2) +
                     " k=" + std::to_string(k));
        SavedJob saved = save_at(W, 1, make, k);
        ASSERT_EQ(saved.errors[0], "");
        RestoredJob restored =
            restore_from(W2, W2 == 4 ? 1 : 2 - (W2 % 2), make, {saved.states[0]});
        for (int w = 0; w < W2; ++w) ASSERT_EQ(restored.errors[w], "");
        std::vector<Steps> all = saved.before;
        all.insert(all.end(), restored.steps.begin(), restored.steps.end());
        std::map<int64_t, int> n = count_values(all);
        ASSERT_EQ(n.size(), 41u);
        for (const auto& [v, c] : n) EXPECT_EQ(c, 1) << "value " << v;
        // The restored global batches are the saved job's: step for step, as sets.
        for (size_t st = 0; st < saved.after[0].size(); ++st) {
          std::vector<int64_t> a, b;
          for (const auto& run : saved.after)
            for (const auto& piece : run.at(st)) a.insert(a.end(), piece.begin(), piece.end());
          for (const auto& run : restored.steps)
            for (const auto& piece : run.at(st)) b.insert(b.end(), piece.begin(), piece.end());
          std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
          EXPECT_EQ(a, b) << "step " << st;
        }
      }
}

TEST(DistState, OffShardingRestoresOnAnyNumberOfWorkers) {
  // Under OFF every worker walks the whole stream; with G = 12 dividing among the replicas
  // all workers stand at the same row when they save, and every new worker continues from
  // there: each element once per worker over the epoch.
  const auto make = distribute(
      with_policy(make_batch(make_shuffle(make_range(0, 53, 1), 10, -1, true), 12, false),
                  AutoShardPolicy::kOff));
  for (int W : {1, 2, 3, 4, 6})
    for (int W2 : {1, 2, 3, 4, 6})
      for (int64_t k : {1, 4}) {
        SCOPED_TRACE("W=" + std::to_string(W) + " -> " + std::to_string(W2) +
                     " k=" + std::to_string(k));
        SavedJob saved = save_at(W, 1, make, k);
        ASSERT_EQ(saved.errors[0], "");
        RestoredJob restored = restore_from(W2, 1, make, {saved.states[0]});
        for (int w = 0; w < W2; ++w) {
          ASSERT_EQ(restored.errors[w], "");
          // What saved worker 0 took (every saved worker took the same rows), then this
          // worker's rest.
          std::map<int64_t, int> n = count_values({saved.before[0], restored.steps[w]});
          ASSERT_EQ(n.size(), 53u) << "new worker " << w;
          for (const auto& [v, c] : n) EXPECT_EQ(c, 1) << "new worker " << w << ", value " << v;
        }
      }
}

TEST(DistState, OffShardingAtDifferentRowsIsRefusedOnAnotherShape) {
  // G = 5 over 2 replicas: pieces of 3 and 2 rows, so the workers stand at different rows.
  const auto make =
      distribute(with_policy(make_batch(make_range(0, 30, 1), 5, false), AutoShardPolicy::kOff));
  SavedJob saved = save_at(2, 1, make, 1);
  ASSERT_EQ(saved.errors[0], "");
  RestoredJob restored = restore_from(3, 1, make, {saved.states[0]});
  EXPECT_NE(restored.errors[0].find("different rows of the stream"), std::string::npos)
      << restored.errors[0];
  RestoredJob same = restore_from(2, 1, make, {saved.states[0]});
  EXPECT_EQ(describe(same.steps), describe(saved.after));
}

// ---- Elastic resume under FILE sharding ----

// 12 text files of 3 to 14 lines: 102 distinct values.
TempFiles twelve_files() {
  TempFiles files;
  for (int f = 0; f < 12; ++f) files.add(iota(f * 100, f * 100 + 3 + f));
  return files;
}

const ElementSpec kLine{{DType::kBytes, Shape()}};

// W workers of R replicas save at step k; W2 of R2 restore and drain. Each value of the epoch
// must come out once: before the save on some saved worker, or after it on one new worker.
void expect_exactly_once(const MakeDist& make, size_t total, int W, int R, int W2, int R2,
                         int64_t k) {
  SCOPED_TRACE("W=" + std::to_string(W) + "x" + std::to_string(R) + " -> " + std::to_string(W2) +
               "x" + std::to_string(R2) + " k=" + std::to_string(k));
  SavedJob saved = save_at(W, R, make, k, 0);
  for (int w = 0; w < W; ++w) ASSERT_EQ(saved.errors[w], "");
  // The new job takes a step, saves (a state that names what it was dealt) and goes on; a
  // third job of its shape restores that state and must deliver what it went on to deliver.
  SavedJob resaved = save_at(W2, R2, make, 1 + k % 3, 1 << 30, &saved.states[0]);
  for (int w = 0; w < W2; ++w) ASSERT_EQ(resaved.errors[w], "");
  std::vector<Steps> all = saved.before;
  all.insert(all.end(), resaved.before.begin(), resaved.before.end());
  all.insert(all.end(), resaved.after.begin(), resaved.after.end());
  std::map<int64_t, int> n = count_values(all);
  EXPECT_EQ(n.size(), total);
  for (const auto& [v, c] : n) EXPECT_EQ(c, 1) << "value " << v;
  RestoredJob again = restore_from(W2, R2, make, {resaved.states[0]});
  for (int w = 0; w < W2; ++w) ASSERT_EQ(again.errors[w], "");
  EXPECT_EQ(describe(again.steps), describe(resaved.after));
  // And that state on a third shape: what the second job left is dealt out again.
  const int W3 = W2 % 4 + 1;
  RestoredJob third = restore_from(W3, 1, make, {resaved.states[0]});
  for (int w = 0; w < W3; ++w) ASSERT_EQ(third.errors[w], "") << "third job, " << W3 << " workers";
  all = saved.before;
  all.insert(all.end(), resaved.before.begin(), resaved.before.end());
  all.insert(all.end(), third.steps.begin(), third.steps.end());
  n = count_values(all);
  EXPECT_EQ(n.size(), total) << "third job, " << W3 << " workers";
  for (const auto& [v, c] : n) EXPECT_EQ(c, 1) << "third job, " << W3 << " workers, value " << v;
}

// Every pair W, W2 in {1, 2, 3, 4, 6}, saved before the first step, after it, inside the
// epoch, at its last step and after its end.
void expect_elastic_file_resume(const MakeDist& make, size_t total) {
  for (int W : {1, 2, 3, 4, 6}) {
    const int R = W == 2 ? 2 : 1;
    SavedJob whole = save_at(W, R, make, 1 << 30, 0);
    ASSERT_EQ(whole.errors[0], "");
    const auto steps = static_cast<int64_t>(whole.before[0].size());
    ASSERT_GT(steps, 2);
    for (int W2 : {1, 2, 3, 4, 6})
      for (int64_t k : {int64_t{0}, int64_t{1}, steps / 2, steps - 1, steps})
        expect_exactly_once(make, total, W, R, W2, W2 == 6 ? 2 : 1, k);
  }
}

TEST(DistState, FileShardingRestoresOnAnyNumberOfWorkers) {
  // list_files -> interleave(text_lines) -> batch(6): the open files' rest, the unread files
  // and the rows of the batch in hand are dealt out over the new workers.
  TempFiles files = twelve_files();
  const std::string pattern = files.files()[0].substr(0, files.files()[0].rfind('/')) + "/*.txt";
  ReaderSpec lines;
  lines.kind = ReaderSpec::Kind::kTextLines;
  const auto make =
      distribute(with_policy(make_batch(make_reader_interleave(make_list_files({pattern}, false, 0),
                                                               lines, 2, 2, 1, std::nullopt, false),
                                        6, false),
                             AutoShardPolicy::kFile));
  expect_elastic_file_resume(make, 102);
}

TEST(DistState, FileShardingWithAShuffleRestoresOnAnyNumberOfWorkers) {
  // A shuffle between the files and the batches holds elements at the save: the restore
  // delivers them on one new worker. Names listed in a random order (agreed seed), read by
  // an ordered parallel interleave of a user function.
  TempFiles files = twelve_files();
  const std::string pattern = files.files()[0].substr(0, files.files()[0].rfind('/')) + "/*.txt";
  auto fn = std::make_shared<const InterleaveFn>(
      [](const Element& e) { return make_text_lines({std::string(e.at(0).string(0))}); });
  const auto make = distribute(
      with_policy(make_batch(make_shuffle(make_interleave(make_list_files({pattern}, true, -1), fn,
                                                          kLine, 3, 1, 2, true),
                                          7, 11, true),
                             5, false),
                  AutoShardPolicy::kFile));
  expect_elastic_file_resume(make, 102);
}

TEST(DistState, FileShardingOfASourceOfSeveralFilesRestoresOnAnyNumberOfWorkers) {
  TempFiles files = twelve_files();
  const auto make = distribute(
      with_policy(make_batch(make_shuffle(make_text_lines(files.files()), 4, -1, true), 6, false),
                  AutoShardPolicy::kFile));
  expect_elastic_file_resume(make, 102);
}

TEST(DistState, FileShardingOfCompressedRecordsRestoresOnOtherNumbersOfWorkers) {
  // GZIP and ZSTD record files read by a reader interleave: an open file resumes at its
  // offset in the decompressed stream on whichever new worker it is dealt to.
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    SCOPED_TRACE(compression_name(c));
    TempFiles dir;  // for its directory
    const std::string base = dir.add({});
    const std::string folder = base.substr(0, base.rfind('/'));
    std::remove(base.c_str());
    for (int f = 0; f < 6; ++f) {
      RecordWriter w(folder + "/r" + std::to_string(f) + ".rec", c, 0);
      for (int i = 0; i < 5 + 2 * f; ++i) {
        const std::string v = std::to_string(100 * f + i);
        w.write(v.data(), v.size());
      }
      w.close();
    }
    ReaderSpec records;
    records.compression = c;
    const auto make = distribute(with_policy(
        make_batch(
            make_shuffle(make_reader_interleave(make_list_files({folder + "/*.rec"}, false, 0),
                                                records, 2, 3, 1, std::nullopt, false),
                         6, 2, true),
            4, false),
        AutoShardPolicy::kFile));
    for (int W : {2, 3})
      for (int W2 : {1, 4})
        for (int64_t k : {1, 3}) expect_exactly_once(make, 60, W, 1, W2, 1, k);
    for (int f = 0; f < 6; ++f) std::remove((folder + "/r" + std::to_string(f) + ".rec").c_str());
  }
}

TEST(DistState, AStateSavedAfterAnElasticFileRestoreIsDescribed) {
  TempFiles files = twelve_files();
  const auto make = distribute(
      with_policy(make_batch(make_shuffle(make_text_lines(files.files()), 4, 5, true), 6, false),
                  AutoShardPolicy::kFile));
  SavedJob saved = save_at(2, 1, make, 2, 0);
  ASSERT_EQ(saved.errors[0], "");
  SavedJob resaved = save_at(3, 1, make, 1, 0, &saved.states[0]);
  ASSERT_EQ(resaved.errors[0], "");
  // `dinput state` reads it, and says which parts read what another shape left.
  const std::string described = describe_state(resaved.states[0]);
  EXPECT_NE(described.find("\"elastic\":true"), std::string::npos) << described;
  EXPECT_NE(described.find("elastic_file"), std::string::npos) << described;
}

TEST(DistState, FileShardingStateIsSmallAndElasticRestoreIsTimed) {
  // W1-like, scaled down: 32 files of 1,000 lines, shuffle(10000), batch(256), saved by 2
  // workers halfway through the epoch and restored on 3 (figures printed for the notes).
  TempFiles files;
  for (int f = 0; f < 32; ++f) files.add(iota(f * 1000, f * 1000 + 1000));
  const auto make = distribute(with_policy(
      make_batch(make_shuffle(make_text_lines(files.files()), 10000, 1, true), 256, false),
      AutoShardPolicy::kFile));
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  SavedJob saved = save_at(2, 1, make, 62, 0);
  ASSERT_EQ(saved.errors[0], "");
  EXPECT_LT(saved.states[0].size(), 4096u);
  Clock::time_point t0 = Clock::now();
  SavedJob elastic = save_at(3, 1, make, 1, 0, &saved.states[0]);
  const double restore_s = seconds(t0);
  ASSERT_EQ(elastic.errors[0], "");
  t0 = Clock::now();
  SavedJob same = save_at(2, 1, make, 1, 0, &saved.states[0]);
  const double same_s = seconds(t0);
  ASSERT_EQ(same.errors[0], "");
  // One worker: the save's own cost, without waiting for other workers to gather.
  SavedJob one = save_at(1, 1, make, 1, 0, &saved.states[0]);
  ASSERT_EQ(one.errors[0], "");
  std::printf("FILE state after an elastic restore on 1 worker: %zu bytes, saved in %.3f ms\n",
              one.states[0].size(), one.save_ms[0]);
  std::printf(
      "FILE state: %zu bytes saved by 2 workers at step 62; restore on 3 workers and one step "
      "%.1f ms (on 2: %.1f ms); the 3 workers' state after it %zu bytes; saves took %.3f ms "
      "(2 workers, gathered in process) and %.3f ms after the elastic restore\n",
      saved.states[0].size(), restore_s * 1e3, same_s * 1e3, elastic.states[0].size(),
      std::max(saved.save_ms[0], saved.save_ms[1]),
      std::max({elastic.save_ms[0], elastic.save_ms[1], elastic.save_ms[2]}));
}

TEST(DistState, SynchronousPrefetchReadsOnlyWhatIsTaken) {
  // The elastic restore reads saved pipelines this way: no thread reads ahead of the consumer,
  // before or after a restore, so the file stage stands where the consumer's position puts it.
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto fn = std::make_shared<const MapFn>([calls](const Element& e) {
    ++*calls;
    return e;
  });
  const DatasetPtr ds = make_prefetch(make_map(make_range(0, 20, 1), fn, {}, 1, std::nullopt), 8);
  IteratorContext ctx;
  ctx.synchronous = true;
  auto it = ds->make_iterator(ctx);
  Element e;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(it->next(e));
  EXPECT_EQ(calls->load(), 3);
  const std::string saved = save_to_bytes(*it);
  IteratorContext restoring = ctx;
  restoring.restoring = true;
  auto again = ds->make_iterator(restoring);
  StateReader r(saved, 0, "test");
  again->restore(r);
  r.finish();
  calls->store(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a thread would read now
  EXPECT_EQ(calls->load(), 0);
  std::vector<int64_t> rest;
  while (again->next(e)) rest.push_back(values_of(e).at(0));
  EXPECT_EQ(rest, iota(3, 20));
  EXPECT_EQ(calls->load(), 17);
}

TEST(DistState, FileShardingRefusesWhatItCannotDealOut) {
  TempFiles files;
  for (int f = 0; f < 4; ++f) files.add(iota(f * 10, f * 10 + 5));
  const auto make = distribute(with_policy(
      make_batch(make_take(make_text_lines(files.files()), 15), 2, false), AutoShardPolicy::kFile));
  SavedJob saved = save_at(2, 1, make, 1);
  ASSERT_EQ(saved.errors[0], "");
  RestoredJob restored = restore_from(4, 1, make, {saved.states[0]});
  for (int w = 0; w < 4; ++w) {
    EXPECT_NE(restored.errors[w].find("FAILED_PRECONDITION"), std::string::npos)
        << restored.errors[w];
    EXPECT_NE(restored.errors[w].find("operation 'take'"), std::string::npos) << restored.errors[w];
  }
  // The same shape still restores exactly.
  RestoredJob same = restore_from(2, 1, make, {saved.states[0]});
  EXPECT_EQ(describe(same.steps), describe(saved.after));

  // An interleave over lines (not file names): its unread input would be the rest of the data.
  auto fn = std::make_shared<const InterleaveFn>(
      [](const Element& e) { return make_repeat(make_from_tensors({e.at(0)}), 2); });
  const auto lines = distribute(with_policy(
      make_batch(make_interleave(make_text_lines(files.files()), fn, kLine, 2, 1, 1, true), 2,
                 false),
      AutoShardPolicy::kFile));
  SavedJob over_lines = save_at(2, 1, lines, 1);
  ASSERT_EQ(over_lines.errors[0], "");
  RestoredJob refused = restore_from(3, 1, lines, {over_lines.states[0]});
  EXPECT_NE(refused.errors[0].find("FAILED_PRECONDITION"), std::string::npos) << refused.errors[0];
  EXPECT_NE(refused.errors[0].find("'interleave' reads the output of another file reader"),
            std::string::npos)
      << refused.errors[0];
}

// An infinite pipeline: after the first step the workers exchange nothing, so they can be
// at different steps when they save.
DatasetPtr endless() {
  return with_policy(make_batch(make_repeat(make_range(0, 10, 1), -1), 4, false),
                     AutoShardPolicy::kData);
}

TEST(DistState, WorkersSavingAtDifferentStepsFail) {
  auto collective = make_in_process_collective(2, 20000);
  std::vector<std::string> errors(2);
  auto work = [&](int w) {
    try {
      DistributedIterator it(distribute(endless())(make_strategy(devices(1), collective, w)));
      std::vector<Element> step;
      for (int i = 0; i < 2 + w; ++i) it.next(step);
      it.save();
    } catch (const Error& e) {
      errors[w] = std::string(code_name(e.code())) + ": " + e.what();
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join(), b.join();
  for (int w = 0; w < 2; ++w)
    EXPECT_EQ(errors[w],
              "FAILED_PRECONDITION: the workers saved at different steps: worker 0 at step 2, "
              "worker 1 at step 3; every worker must save its distributed iterator at the same "
              "step");
}

TEST(DistState, WorkersRestoringDifferentStepsFail) {
  SavedJob at2 = save_at(2, 1, distribute(endless()), 2, 0);
  SavedJob at3 = save_at(2, 1, distribute(endless()), 3, 0);
  ASSERT_EQ(at2.errors[0], "");
  ASSERT_EQ(at3.errors[0], "");
  auto collective = make_in_process_collective(2, 20000);
  std::vector<std::string> errors(2);
  auto work = [&](int w) {
    try {
      DistributedIterator it(distribute(endless())(make_strategy(devices(1), collective, w)),
                             w == 0 ? at2.states[0] : at3.states[0]);
    } catch (const Error& e) {
      errors[w] = std::string(code_name(e.code())) + ": " + e.what();
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join(), b.join();
  for (int w = 0; w < 2; ++w)
    EXPECT_EQ(errors[w],
              "FAILED_PRECONDITION: the workers restored different steps: worker 0 step 2, "
              "worker 1 step 3; every worker must restore the same saved state");
}

TEST(DistState, ADifferentPipelineOrDamagedStateFails) {
  const auto make = distribute(shuffled_range(41, AutoShardPolicy::kData));
  SavedJob saved = save_at(2, 1, make, 3);
  ASSERT_EQ(saved.errors[0], "");
  const std::string& state = saved.states[0];

  RestoredJob other =
      restore_from(2, 1, distribute(shuffled_range(42, AutoShardPolicy::kData)), {state});
  EXPECT_NE(other.errors[0].find("FAILED_PRECONDITION: the iterator state was saved from a "
                                 "different pipeline"),
            std::string::npos)
      << other.errors[0];
  EXPECT_EQ(other.errors[1], other.errors[0]);

  std::string flipped = state;
  flipped[flipped.size() / 2] ^= 0x10;
  RestoredJob damaged = restore_from(2, 1, make, {flipped});
  EXPECT_EQ(damaged.errors[0].rfind("DATA_LOSS", 0), 0u) << damaged.errors[0];
  RestoredJob truncated = restore_from(2, 1, make, {state.substr(0, state.size() - 3)});
  EXPECT_EQ(truncated.errors[0].rfind("DATA_LOSS", 0), 0u) << truncated.errors[0];

  // A plain iterator's state is not a distributed one's, and the other way round.
  DatasetPtr plain = shuffled_range(41, AutoShardPolicy::kData);
  auto it = plain->make_iterator({});
  const std::string plain_state = save_state(*plain, *plain, it.get(), false);
  RestoredJob mixed = restore_from(1, 1, make, {plain_state});
  EXPECT_NE(mixed.errors[0].find("not a distributed iterator"), std::string::npos)
      << mixed.errors[0];
  IteratorContext ctx;
  try {
    restore_state(plain, ctx, state);
    ADD_FAILURE() << "a distributed state restored into a dataset iterator";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFailedPrecondition);
    EXPECT_NE(std::string(e.what()).find("dist_iterator("), std::string::npos) << e.what();
  }
}

TEST(DistState, StateIsSmall) {
  const auto make = distribute(shuffled_range(1000, AutoShardPolicy::kData));
  SavedJob saved = save_at(2, 2, make, 20);
  ASSERT_EQ(saved.errors[0], "");
  EXPECT_LT(saved.states[0].size(), 1500u);
}

}  // namespace
}  // namespace dinput::testing
