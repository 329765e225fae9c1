// The distribution properties of properties_test.cc (every element exactly once under DATA
// and FILE, exactly once per worker under OFF, the same number of steps on every worker, no
// replica above its share) over random configurations run by W = 2, 3 and 4 worker
// processes over the Gloo collective; each worker's steps must also be those of the same
// worker among threads of one process.
//
// Configuration i is drawn from the seed plus i (properties.h), by the test and again by
// every worker process, so a failure names the seed and the index that reproduce it
// (DINPUT_PROCESS_PROPERTIES_SEED chooses another seed). Its W is 2 + i mod 3; the
// workers of each W run their configurations one after the other, each as a job of its own
// on one tcp:// store served by the test process.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "collective/gloo.h"
#include "collective/store_url.h"
#include "process_harness.h"
#include "properties.h"

namespace dinput::testing {
namespace {

constexpr int kConfigurations = 60;

int workers_of(int i) { return 2 + i % 3; }

Case configuration(uint64_t seed, int i, std::vector<std::vector<int64_t>>& contents) {
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed + static_cast<uint64_t>(i)));
  return draw_case(rng, contents, workers_of(i));
}

std::string config_dir(const std::string& dir, int i) { return dir + "/c" + std::to_string(i); }

std::vector<std::string> config_files(const Case& c, const std::string& dir) {
  std::vector<std::string> files;
  if (c.files)
    for (int f = 0; f < c.num_files; ++f) files.push_back(dir + "/f" + std::to_string(f) + ".txt");
  return files;
}

// --worker properties SEED W RANK URL DIR: runs every configuration of W workers as worker
// RANK, each on a pipeline of its own.
const RegisterWorker properties_worker("properties", [](const std::vector<std::string>& args) {
  const uint64_t seed = std::stoull(args.at(0));
  const int W = std::stoi(args.at(1)), rank = std::stoi(args.at(2));
  const std::string url = args.at(3), dir = args.at(4);
  for (int i = 0; i < kConfigurations; ++i) {
    if (workers_of(i) != W) continue;
    std::vector<std::vector<int64_t>> contents;
    const Case c = configuration(seed, i, contents);
    const std::string cdir = config_dir(dir, i);
    WorkerRun run;
    try {
      const std::string job = "properties-" + std::to_string(seed) + "-" + std::to_string(i);
      StoreOptions store_options;
      store_options.job_id = job;
      store_options.serve = false;
      store_options.connect_timeout = milliseconds(30000);
      GlooOptions options;
      options.timeout = milliseconds(30000);
      options.address = "127.0.0.1";
      options.job_id = job;
      const auto collective =
          make_gloo_collective(rank, W, make_store(url, rank, W, store_options), options);
      run = run_one_worker(collective, rank, c.R, [&](auto s) {
        return distribute_dataset(s, build_pipeline(c, config_files(c, cdir), cdir), {});
      });
    } catch (const Error& e) {
      run.error = std::string("joining: ") + code_name(e.code()) + ": " + e.what();
    }
    std::fputs(report_run(std::to_string(i), run).c_str(), stdout);
    std::fflush(stdout);
  }
  return 0;
});

TEST(ProcessProperties, RandomConfigurationsOnWorkerProcesses) {
  uint64_t seed = 20261125;
  if (const char* s = std::getenv("DINPUT_PROCESS_PROPERTIES_SEED")) seed = std::stoull(s);
  char tmpl[] = "/tmp/dinput_process_properties_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  for (int i = 0; i < kConfigurations; ++i) {
    std::vector<std::vector<int64_t>> contents;
    const Case c = configuration(seed, i, contents);
    const std::string cdir = config_dir(dir, i);
    ASSERT_EQ(mkdir(cdir.c_str(), 0700), 0);
    const auto files = config_files(c, cdir);
    for (size_t f = 0; f < files.size(); ++f) {
      FILE* out = std::fopen(files[f].c_str(), "w");
      for (int64_t v : contents[f]) std::fprintf(out, "%lld\n", static_cast<long long>(v));
      std::fclose(out);
    }
  }
  std::string url;
  const auto server = make_store("tcp://127.0.0.1:0", 0, 4, {}, &url);
  std::vector<ChildSpec> children;
  for (int W = 2; W <= 4; ++W)
    for (int rank = 0; rank < W; ++rank)
      children.push_back({{"properties", std::to_string(seed), std::to_string(W),
                           std::to_string(rank), url, dir}});
  const std::vector<ChildResult> results = run_children(children, milliseconds(150000));
  // reports[W][rank]
  std::map<int, std::vector<std::map<std::string, WorkerRun>>> reports;
  size_t child = 0;
  for (int W = 2; W <= 4; ++W)
    for (int rank = 0; rank < W; ++rank, ++child) {
      EXPECT_TRUE(results[child].exited_ok()) << "W=" << W << " worker " << rank << ":\n"
                                              << results[child].err;
      reports[W].push_back(parse_report(results[child].out));
    }
  int checked = 0;
  for (int i = 0; i < kConfigurations; ++i) {
    std::vector<std::vector<int64_t>> contents;
    const Case c = configuration(seed, i, contents);
    const std::string cdir = config_dir(dir, i);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", configuration " + std::to_string(i) + ": " +
                 c.describe());
    std::vector<WorkerRun> runs;
    for (const auto& report : reports[c.W]) {
      const auto found = report.find(std::to_string(i));
      if (found == report.end()) {
        ADD_FAILURE() << "a worker did not report";
        runs.clear();
        break;
      }
      runs.push_back(found->second);
    }
    if (runs.empty()) continue;
    auto build = [&] { return build_pipeline(c, config_files(c, cdir), cdir); };
    check_properties(c, contents, build, runs);
    // The same workers as threads, on one pipeline object.
    const DatasetPtr shared = build();
    const auto in_process =
        run_workers(c.W, c.R, [&](auto s) { return distribute_dataset(s, shared, {}); });
    for (int w = 0; w < c.W; ++w)
      EXPECT_EQ(notation(runs[static_cast<size_t>(w)]),
                notation(in_process[static_cast<size_t>(w)]))
          << "worker " << w;
    ++checked;
  }
  EXPECT_EQ(checked, kConfigurations);
  expect_no_children();
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace dinput::testing
