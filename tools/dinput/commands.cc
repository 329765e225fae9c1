#include "commands.h"

#include "host_tensor.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "chain_parser.h"
#include "distribution.h"
#include "json_format.h"
#include "json_writer.h"
#include "line_writer.h"
#include "pipeline_builder.h"
#include "progress.h"
#include "record_commands.h"
#include "stage_report.h"
#include "state_commands.h"

namespace dinput_tool {

namespace {

using Clock = std::chrono::steady_clock;

// Where bench stores the sum of the bytes it read, so that the reads cannot be optimised
// away.
volatile uint64_t g_checksum_sink = 0;

Pipeline parse_chain(const std::string& text) {
  Pipeline pipeline;
  ParseError error;
  if (!parse_pipeline(text, &pipeline, &error)) throw invalid_argument(error.message);
  return pipeline;
}

// ---- run -------------------------------------------------------------------------------

// A step's values are written as text as they are read, not built as a JSON tree: floats
// are written in their own precision as Python's repr writes them (nlohmann-json holds
// every float as a double), bytes that are not UTF-8 as \udcXX, and a large batch costs no
// node per value.
void append_replicas(std::string* out, const dinput_per_replica_t* value, bool shapes) {
  out->push_back('[');
  const int replicas = dinput_per_replica_size(value);
  for (int r = 0; r < replicas; ++r) {
    if (r) out->push_back(',');
    const dinput_element_t* element = dinput_per_replica_get(value, r);
    out->push_back('[');
    const size_t components = dinput_element_size(element);
    for (size_t c = 0; c < components; ++c) {
      if (c) out->push_back(',');
      const dinput_tensor_t* tensor = dinput_element_get(element, c);
      if (shapes) {
        out->append(
            JsonObject(shape(dinput_tensor_shape(tensor), dinput_tensor_rank(tensor))).dump());
      } else {
        append_tensor_values(out, tensor);
      }
    }
    out->push_back(']');
  }
  out->push_back(']');
}

std::string end_line(int worker, bool ended, int64_t steps) {
  JsonObject line;
  line["worker"] = worker;
  line["end"] = ended ? "OUT_OF_RANGE" : "STEPS_LIMIT";
  line["steps"] = steps;
  return dump_json(line);
}

// {"worker":W,"records":N,...,"consumer":{...},"pipelines":[...]}: the reader and per-stage
// statistics of one worker's iterator (--stats).
JsonObject stats_object(dinput_dist_iterator_t* iterator, int worker) {
  JsonObject stats;
  stats["worker"] = worker;
  for (const char* name : {"records", "record_bytes", "corrupt_records_skipped",
                           "corrupt_bytes_skipped", "errors_ignored"}) {
    int64_t value = 0;
    check(dinput_dist_iterator_statistic(&value, iterator, name), "dinput_dist_iterator_statistic");
    stats[name] = value;
  }
  JsonObject stages = worker_statistics(iterator);
  stats["consumer"] = stages["consumer"];
  stats["pipelines"] = stages["pipelines"];
  return stats;
}

// Each line is written as its step completes (see OrderedLineWriter), so that memory stays
// flat and a reader sees steps as they come; `dinput run ... | head -1` ends at once. A reader
// that closes the pipe ends the run quietly with status 0. On a failure the steps completed
// before it stay printed, without the end lines, and the error goes to stderr.
void command_run(const CliOptions& options, const Pipeline& pipeline) {
  // One worker of a multi-process job prints only its own lines (`dinput launch` merges them).
  const int workers = local_workers(options);
  OrderedLineWriter writer(STDOUT_FILENO, workers);
  std::vector<std::string> end_lines(static_cast<size_t>(workers));
  std::vector<std::string> warnings(static_cast<size_t>(workers));  // skipped records
  std::vector<JsonObject> stats(static_cast<size_t>(workers));      // --stats
  // --restore-state: read once, restored by every worker.
  const std::string restore =
      options.restore_state.empty() ? std::string() : read_state_file(options.restore_state);
  const int64_t first_step = restore.empty() ? 0 : saved_step(restore, options.restore_state);
  // A worker's failure is thrown once stdout is complete: the steps before it stay printed.
  std::exception_ptr failure;
  try {
    for_each_worker(options, pipeline, !options.has_steps, [&](const Worker& worker) {
      // Whatever ends this worker, its later lines are not waited for.
      struct Done {
        OrderedLineWriter& writer;
        int index;
        ~Done() { writer.worker_done(index); }
      } done{writer, worker.slot};
      const DistIteratorPtr iterator = restore.empty() ? new_iterator(worker.dataset)
                                                       : restore_iterator(worker.dataset, restore);
      Stepper stepper(iterator.get(), options.optional);
      const std::string prefix = "{\"worker\":" + std::to_string(worker.index) + ",\"step\":";
      int64_t step = 0;
      bool ended = false;
      std::string line;
      while (!options.has_steps || step < options.steps) {
        const PerReplicaPtr value = stepper.next();
        if (!value) {
          ended = true;
          break;
        }
        line.clear();
        line += prefix;
        line += std::to_string(first_step + step);
        line += ",\"replicas\":";
        append_replicas(&line, value.get(), options.shapes);
        line.push_back('}');
        if (!writer.step(worker.slot, line)) {
          // The reader is gone (or stdout failed): stop this worker, and through the
          // collective's abort the others.
          throw Failure(DINPUT_CANCELLED, "stdout was closed");
        }
        ++step;
      }
      // Every worker saves (the parts are gathered through the collective); one file.
      if (!options.save_state.empty()) {
        const StatePtr state = save_iterator(iterator.get());
        if (worker.index == 0) write_state_file(options.save_state, state.get());
      }
      const size_t slot = static_cast<size_t>(worker.slot);
      end_lines[slot] = end_line(worker.index, ended, step);
      warnings[slot] = skip_warning(iterator.get(), worker.index);
      if (options.stats) {
        stats[slot] = stats_object(iterator.get(), worker.index);
      }
    });
  } catch (...) {
    failure = std::current_exception();
  }
  if (writer.closed_by_reader()) {
    writer.finish();  // does not throw: a pipe closed by its reader is no write failure
    return;           // the reader has what it wanted (e.g. `| head -1`)
  }
  if (!failure) {
    for (std::string& end : end_lines) writer.trailer(std::move(end));
    if (options.stats) {
      JsonObject line;
      line["stats"] = stats;
      writer.trailer(dump_json(line));
    }
  }
  std::exception_ptr written;
  try {
    writer.finish();
  } catch (...) {
    written = std::current_exception();
  }
  if (writer.closed_by_reader()) return;
  // Skipped corrupt records are reported after stdout is complete, so the two never interleave.
  for (const std::string& warning : warnings) std::fputs(warning.c_str(), stderr);
  if (written) std::rethrow_exception(written);  // before `failure`, which may only say "stopped"
  if (failure) std::rethrow_exception(failure);
}

// ---- spec ------------------------------------------------------------------------------

std::string command_spec(const CliOptions& options, const Pipeline& pipeline) {
  std::vector<std::string> specs(static_cast<size_t>(local_workers(options)));
  for_each_worker(options, pipeline, false, [&](const Worker& worker) {
    dinput_spec_t* raw = nullptr;
    check(dinput_dist_dataset_element_spec(&raw, worker.dataset),
          "dinput_dist_dataset_element_spec");
    SpecPtr spec(raw);
    JsonObject out;
    out["num_replicas_in_sync"] = dinput_strategy_num_replicas_in_sync(worker.strategy);
    out["components"] = spec_components(spec.get());
    specs[static_cast<size_t>(worker.slot)] = dump_json(out);
  });
  // Every worker has the same per-replica spec; this process's first worker's stands for all.
  return specs[0] + "\n";
}

// ---- bench -----------------------------------------------------------------------------

struct BenchTotals {
  std::atomic<int64_t> steps{0};
  std::atomic<int64_t> rows{0};
  std::atomic<int64_t> bytes{0};
};

// Adds [data, data + size) into the sum eight bytes at a time. Added one byte at a time (about
// 3 GB/s), the bytes of records took bench longer than the pipeline that read them.
uint64_t add_bytes(const unsigned char* data, size_t size, uint64_t sum) {
  size_t i = 0;
  for (; i + sizeof(uint64_t) <= size; i += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, data + i, sizeof word);
    sum += word;
  }
  for (; i < size; ++i) sum += data[i];
  return sum;
}

// Reads every byte of the tensor, so that the benchmark measures data that really arrived
// rather than only buffer handles.
void touch(const dinput_tensor_t* delivered, uint64_t* checksum) {
  HostTensor host;
  host.open(delivered);
  const dinput_tensor_t* tensor = host.get();
  uint64_t sum = *checksum;
  if (dinput_tensor_dtype(tensor) == DINPUT_BYTES) {
    const int64_t n = dinput_tensor_num_elements(tensor);
    for (int64_t i = 0; i < n; ++i) {
      const char* s = nullptr;
      size_t len = 0;
      check(dinput_tensor_string_view(&s, &len, tensor, i), "dinput_tensor_string_view");
      sum = add_bytes(reinterpret_cast<const unsigned char*>(s), len, sum);
    }
  } else if (const void* data = dinput_tensor_data(tensor)) {
    sum = add_bytes(static_cast<const unsigned char*>(data), dinput_tensor_byte_size(tensor), sum);
  }
  *checksum = sum;
}

// Shows progress on stderr while the benchmark runs, only when stderr is a terminal, so
// that logs and pipes get just the final JSON line.
class ProgressLine {
 public:
  // total_steps: the steps of the whole run over every worker, -1 when not known.
  ProgressLine(const BenchTotals& totals, Clock::time_point start, int64_t total_steps)
      : totals_(totals), start_(start), total_steps_(total_steps) {
    if (isatty(STDERR_FILENO)) thread_ = std::thread([this] { loop(); });
  }
  ~ProgressLine() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return done_; })) {
      Progress progress;
      progress.steps = totals_.steps.load();
      progress.rows = totals_.rows.load();
      progress.bytes = totals_.bytes.load();
      progress.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
      progress.total_steps = total_steps_;
      std::fprintf(stderr, "\r\033[K%s", progress_text(progress).c_str());
      std::fflush(stderr);
    }
  }

  const BenchTotals& totals_;
  Clock::time_point start_;
  int64_t total_steps_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// The steps bench will take over every worker, when known before it starts: --steps K on
// each worker, or, with one worker and a plain pipeline, the dataset's cardinality (one
// step per global batch). -1 otherwise: with several workers the steps per worker depend
// on the sharding, and a --from-function pipeline is built per worker.
int64_t expected_steps(const CliOptions& options, const Pipeline& pipeline) {
  const int workers = local_workers(options);
  if (options.has_steps) {
    const bool fits = options.steps <= std::numeric_limits<int64_t>::max() / workers;
    return fits ? options.steps * workers : -1;
  }
  if (workers != 1 || joins_job(options) || options.from_function) return -1;
  DatasetPtr dataset;
  try {
    dataset = build_dataset(pipeline);
  } catch (const Failure&) {
    return -1;  // the run itself reports it
  }
  const int64_t cardinality = dinput_dataset_cardinality(dataset.get());
  return cardinality >= 0 ? cardinality : -1;
}

std::string command_bench(const CliOptions& options, const Pipeline& pipeline) {
  BenchTotals totals;
  std::mutex time_mutex;
  bool have_times = false;
  Clock::time_point first_start, last_end;
  std::atomic<uint64_t> checksum{0};
  const Clock::time_point launch = Clock::now();
  // --stats and --trace: each local worker's, by slot.
  std::vector<JsonObject> stage_stats(static_cast<size_t>(local_workers(options)));
  std::vector<JsonObject> traces(stage_stats.size());
  {
    ProgressLine progress(totals, launch,
                          isatty(STDERR_FILENO) ? expected_steps(options, pipeline) : -1);
    for_each_worker(options, pipeline, !options.has_steps, [&](const Worker& worker) {
      Clock::time_point start = Clock::now();
      const DistIteratorPtr iterator = new_iterator(worker.dataset);
      Stepper stepper(iterator.get(), options.optional);
      uint64_t sum = 0;
      for (int64_t step = 0; !options.has_steps || step < options.steps; ++step) {
        const PerReplicaPtr value = stepper.next();
        if (!value) break;
        int64_t rows = 0, bytes = 0;
        for (int r = 0; r < dinput_per_replica_size(value.get()); ++r) {
          const dinput_element_t* element = dinput_per_replica_get(value.get(), r);
          for (size_t c = 0; c < dinput_element_size(element); ++c) {
            const dinput_tensor_t* tensor = dinput_element_get(element, c);
            // Rows are counted once per replica, from the first component (all
            // components of an element share the leading size); a scalar is one row.
            if (c == 0) rows += dinput_tensor_rank(tensor) > 0 ? dinput_tensor_dim(tensor, 0) : 1;
            bytes += static_cast<int64_t>(dinput_tensor_byte_size(tensor));
            touch(tensor, &sum);
          }
        }
        totals.steps += 1;
        totals.rows += rows;
        totals.bytes += bytes;
      }
      Clock::time_point end = Clock::now();
      if (options.stats)
        stage_stats[static_cast<size_t>(worker.slot)] = worker_statistics(iterator.get());
      if (!options.trace_file.empty())
        traces[static_cast<size_t>(worker.slot)] = worker_trace(iterator.get());
      checksum += sum;
      std::lock_guard<std::mutex> lock(time_mutex);
      if (!have_times || start < first_start) first_start = start;
      if (!have_times || end > last_end) last_end = end;
      have_times = true;
    });
  }
  g_checksum_sink = checksum.load();
  double seconds = have_times ? std::chrono::duration<double>(last_end - first_start).count() : 0;
  // A rate over a zero interval would be infinite, which JSON cannot express.
  double divisor = seconds > 0 ? seconds : 1e-9;
  const double rows = static_cast<double>(totals.rows.load());
  const double bytes = static_cast<double>(totals.bytes.load());
  JsonObject out;
  out["rows"] = totals.rows.load();
  out["bytes"] = totals.bytes.load();
  out["seconds"] = seconds;
  out["rows_per_s"] = rows / divisor;
  out["bytes_per_s"] = bytes / divisor;
  if (!options.trace_file.empty()) write_trace_file(options.trace_file, traces);
  return dump_json(out) + "\n" + (options.stats ? stage_table(stage_stats) : std::string());
}

}  // namespace

std::string run_command(const CliOptions& options) {
  const Pipeline pipeline = parse_chain(options.pipeline);
  switch (options.command) {
    case Command::kRun:
      command_run(options, pipeline);  // streams its lines itself
      return "";
    case Command::kSpec:
      return command_spec(options, pipeline);
    case Command::kBench:
      return command_bench(options, pipeline);
  }
  throw Failure(DINPUT_INTERNAL, "unknown command");
}

std::string version_text() {
  return std::string("dinput ") + dinput_version() + "\n" + dinput_build_info() + "\n";
}

namespace {

// The help text in sections, each shown by `dinput help` and, for the commands it names,
// by `dinput COMMAND --help`.
enum : unsigned {
  kRun = 1,
  kSpec = 2,
  kBench = 4,
  kWrite = 8,
  kConvert = 16,
  kInspect = 32,
  kLaunch = 64,
  kState = 128,
  kAll = 255
};

struct HelpSection {
  unsigned commands;
  const char* text;
};

const HelpSection kHelp[] = {
    {0, R"(usage: dinput COMMAND [options] ARGS

Commands:
)"},
    {kRun, R"(  run PIPELINE     distribute the pipeline and print every step as JSON lines
)"},
    {kSpec, R"(  spec PIPELINE    print the per-replica element spec as one JSON object
)"},
    {kBench,
     R"(  bench PIPELINE   iterate one epoch (or --steps K), reading every byte; print throughput
)"},
    {kWrite, R"(  write [--compression C] [--level N] (--lines FILE | --chunk-size N FILE) OUTPUT
                   make a record file: one record per line of FILE (the line end, "\n" or
                   "\r\n", stripped; FILE '-' is stdin), or one per N-byte chunk of FILE
                   (the last chunk may be shorter)
)"},
    {kConvert,
     R"(  convert [--compression C] [--level N] [--input-compression C] [--skip-corrupt] INPUT OUTPUT
                   re-write a record file with compression C; INPUT's compression is
                   detected from its first bytes (zstd or gzip magic, else NONE) unless
                   --input-compression gives it
)"},
    {kInspect, R"(  inspect [--compression C] [--skip-corrupt] FILE...
                   read every record of each file, checking every CRC; print its
                   compression (detected as for convert, unless given) and record sizes
)"},
    {kConvert | kInspect,
     R"(  --skip-corrupt   (convert, inspect) skip damaged records instead of failing; the counts
                   are added to the output ("corrupt_records_skipped",
                   "corrupt_bytes_skipped") and a warning line per damaged file goes to stderr
)"},
    {kLaunch, R"(  launch -n W [--rdzv URL] [--job-id ID] [--] COMMAND [ARGS...]
                   start W worker processes of one job on this machine, each running
                   COMMAND (e.g. dinput run ...), and print their output merged in worker
                   order; if one fails, the others are stopped
)"},
    {kState,
     R"(  state FILE       print what a saved iterator state (run --save-state) holds, as one
                   JSON object: its kind, the pipeline's operations, the job's shape and
                   step, each worker's pipelines
)"},
    {0,
     R"(  help [COMMAND]   print this text, or only what concerns COMMAND (as COMMAND --help does)
  --version        print the version and, on a second line, the build info as JSON

)"},
    {kRun | kSpec | kBench, R"(PIPELINE is written in tf.data's chain syntax, e.g.
  'range(8).batch(4)'
  'from_tensors(([1.],[1.])).repeat(100).batch(16)'
  'text_lines(["a.txt","b.txt"]).shuffle(100, seed=1).batch(32, drop_remainder=True)'
  'records(["a.rec","b.rec"], compression="ZSTD").batch(256)'
  'list_files("data/*.rec").interleave(records(compression="ZSTD"), cycle_length=4).batch(64)'
Sources: range(stop) | range(start, stop[, step]), from_tensors(x), from_tensor_slices(x),
  text_lines(files), records(files, compression=None, buffer_size=None),
  fixed_length_records(files, record_bytes, header_bytes=0, footer_bytes=0),
  list_files(patterns, shuffle=False, seed=None). files and patterns: a string or a list
  of strings. compression: "NONE", "ZSTD" or "GZIP" (any case; None or "" is NONE).
  list_files gives the sorted names of the matching files; unlike tf.data, whose default
  is shuffle=True, it shuffles only when asked (shuffle=True, with seed=S for a repeatable
  order), so that the same command prints the same output every time.
Transformations: batch(n, drop_remainder=False, num_parallel_calls=None,
  deterministic=None), repeat(count=None),
  shuffle(n, seed=None, reshuffle_each_iteration=True), shard(n, i) or
  shard(SHARD_HINT, SHARD_HINT), take(n), skip(n), enumerate(start=0), unbatch(),
  rebatch(sizes, drop_remainder=False), prefetch(n or AUTOTUNE),
  interleave(READER, cycle_length=AUTOTUNE, block_length=1, num_parallel_calls=None,
  deterministic=None) over a dataset of file names (e.g. list_files), where READER is
  records, text_lines, or a reader called with its options but no files, e.g.
  records(compression="ZSTD") or fixed_length_records(record_bytes=16): each file name
  is read by its own reader. with_options(auto_shard_policy=OFF|AUTO|FILE|DATA|HINT,
  skip_corrupt_records=False, max_record_bytes=268435456, map_files=False,
  allow_nonregular_files=False, deterministic=True, ram_budget=0): skip_corrupt_records=True makes the readers before it
  skip records with a bad CRC instead of failing with DATA_LOSS; max_record_bytes is the
  largest record (and text line) they accept (a larger length is DATA_LOSS); map_files=True
  memory-maps the files instead of reading them (only for files nobody truncates or
  rewrites meanwhile: a truncated mapped file kills the process with SIGBUS);
  allow_nonregular_files=True lets them read FIFOs and devices, refused otherwise;
  deterministic=False lets the batch and interleave before it whose deterministic is None
  return elements in the order they are ready; ram_budget is the most bytes the AUTOTUNE
  buffers of each iterator may hold (0: half of the physical memory, docs/autotune.md); run
  reports skipped records on stderr, one warning line per worker that skipped any.
  parse_example(FEATURES, component=0) parses batches of serialized tf.train.Examples,
  parse_single_example(FEATURES, component=0) one per element, and
  parse_sequence_example(context_features=FEATURES, sequence_features=FEATURES,
  component=0) SequenceExamples; FEATURES is a dict such as {"id": FixedLenFeature([],
  int64), "tags": VarLenFeature(bytes), "seq": FixedLenSequenceFeature([2], float32,
  allow_missing=True)} (default_value= for defaults; docs/examples.md).
Several datasets (each written as a pipeline, e.g. range(3).batch(2)): sources
  zip(a, b, ...), sample_from_datasets([a, b, ...], weights=None, seed=None,
  stop_on_empty_dataset=False), choose_from_datasets([a, b, ...], choice_dataset,
  stop_on_empty_dataset=True); transformations concatenate(dataset), cache(filename="")
  (in memory, or a file a later run reads back), ignore_errors(log_warning=False) (drops
  elements that failed with INVALID_ARGUMENT or DATA_LOSS; run --stats counts them).
Literals: ints (int64), floats (float32), strings (bytes), True/False (bool), nested lists
  (shapes), tuples for elements of several components, dicts {key: value}, None.

)"},
    {kRun | kSpec | kBench, R"(Options of run, spec and bench:
  --replicas N         N CPU replicas in sync in total (divided among the workers)
  --devices D,D,...    each worker's replica devices, e.g. CPU:0,GPU:0
  --workers W          simulate W workers in this process (in-process collective)
  --timeout-ms T       how long a worker waits for the others at a step (default 60000)
  --policy P           auto_shard_policy: OFF, AUTO, FILE, DATA or HINT
  --from-function      PIPELINE is a dataset_fn template: $num_input_pipelines,
                       $input_pipeline_id, $num_replicas_in_sync and
                       $per_replica_batch_size(G) take each input pipeline's values
  --no-fetch-to-device keep the values in host memory
Options of run, spec and bench that make this process one worker of a multi-process job
(each process prints only its own worker's lines; dinput launch merges them):
  --cluster SOURCE     read the rank, world size and rendezvous from a launcher's variables:
                       auto, tf_config, slurm, torchrun, mpi or explicit (docs/multi-process.md)
  --rank R --world-size W
                       this process is worker R of W
  --rdzv URL           where the workers meet: tcp://HOST:PORT (served by worker 0),
                       file://DIR or redis://HOST:PORT; with --cluster it replaces the
                       launcher's
  --job-id ID          names the job's rendezvous keys (default: the launcher's job id)
  A process whose environment has DINPUT_RANK and DINPUT_WORLD_SIZE (as dinput launch sets
  them) joins that job without any of these options.
)"},
    {kRun | kBench, R"(Options of run and bench:
  --steps K            stop after K steps (required for infinite pipelines)
  --optional           iterate with get_next_as_optional instead of get_next
)"},
    {kRun, R"(Options of run:
  --save-state FILE    after the last step (--steps K, or the end of the data) save the
                       distributed iterator's state into FILE (every worker saves; worker 0
                       writes the file, replacing it whole)
  --restore-state FILE continue from the state in FILE instead of starting the epoch: the
                       same pipeline, on the same number of workers and replicas, or under
                       DATA, FILE or OFF sharding any other number; steps are numbered on
                       from the saved step
  --shapes             print each component's shape, e.g. [0,3], instead of its values
  --stats              print a last line with each worker's reader and per-stage statistics
)"},
    {kBench, R"(Options of bench:
  --stats              after the result line, print a table of every stage of every
                       worker's pipelines (docs/statistics.md) and each worker's get_next waits
  --trace FILE         write a trace of the run to FILE in the Trace Event JSON format (open
                       it in Perfetto or chrome://tracing): one track per stage and thread,
                       one process per worker of this process
)"},
    {kLaunch, R"(Options of launch:
  -n W, --nproc W      the number of worker processes (1 to 1024)
  --rdzv URL           the job's rendezvous (default: tcp://127.0.0.1:PORT with a free port)
  --job-id ID          the job id (default: one unique to this launch)
Each worker gets DINPUT_RANK, DINPUT_WORLD_SIZE, DINPUT_LOCAL_RANK, DINPUT_LOCAL_WORLD_SIZE,
  DINPUT_RDZV_URL and DINPUT_JOB_ID in its environment. A COMMAND named dinput runs this
  same dinput executable. Output: line k of every worker, in worker order, before line k + 1
  of any (a worker whose output ended is passed over), so that dinput launch -n W -- dinput
  run ARGS prints what dinput run --workers W ARGS prints; the --stats lines become one.
  Each distinct stderr line is shown once. When a worker fails, the others have 5 s to end
  on their own, then get SIGTERM, then SIGKILL; the exit status is the first failing
  worker's (128 + N for signal N), and a worker killed by a signal is named on stderr. No
  worker outlives the launcher, even one killed with SIGKILL.

)"},
    {kWrite | kConvert, R"(Options of write and convert:
  --compression C      NONE (default), ZSTD or GZIP: the compression of OUTPUT
  --level N            ZSTD 1..19 (default 3) or GZIP 1..9 (default 6); 0: the default
OUTPUT is written to a temporary file beside it and renamed over it only when complete (it
  must not be the input itself): if the command fails, an existing OUTPUT is left as it was.

)"},
    {kRun, R"(Output of run, one JSON object per line:
  {"worker":W,"step":S,"replicas":[R0,R1,...]}   per step, workers in order; each Ri is the
      list of replica i's components, each a tensor as nested arrays (bytes as strings;
      bytes that are not UTF-8 appear as \udcXX, Python's surrogateescape convention)
  {"worker":W,"end":"OUT_OF_RANGE","steps":K}    per worker, when the data ended
  {"worker":W,"end":"STEPS_LIMIT","steps":K}     per worker, when --steps K stopped it
  {"stats":[{"worker":W,"records":N,"record_bytes":B,"corrupt_records_skipped":C,
      "corrupt_bytes_skipped":D,"errors_ignored":E,"consumer":{...},"pipelines":[...]},...]}
      last, with --stats: what each worker's file readers read and skipped
      (docs/records.md), the elements its ignore_errors() dropped, and its get_next waits
      and pipelines' stages (docs/statistics.md)
)"},
    {kSpec,
     R"(Output of spec: {"num_replicas_in_sync":N,"components":[{"dtype":"int64","shape":[null]}]}
  (null: an unknown dimension).
)"},
    {kBench, R"(Output of bench: {"rows":E,"bytes":B,"seconds":S,"rows_per_s":...,"bytes_per_s":...}
  (rows: leading-dimension rows over all replicas and workers; bytes: their payload); a
  progress line is shown on stderr when it is a terminal, with the percentage done and the
  time left when the number of steps is known (--steps K, or one worker and a pipeline of
  known cardinality).
)"},
    {kWrite,
     R"(Output of write: {"records":N,"bytes":B,"output":"..."} (B: the records' payload bytes).
)"},
    {kConvert, R"(Output of convert: the same, with "input_compression" and "compression" added.
)"},
    {kInspect,
     R"(Output of inspect, one line per file: {"file":"...","compression":"ZSTD","records":N,
  "payload_bytes":B,"smallest":S,"largest":L} (S and L: record sizes in bytes, null for a
  file without records); a zstd file with skippable frames (user data that holds no
  records) adds "skippable_frames" and "skippable_bytes".

)"},
    {kRun,
     R"(run prints each step as it completes (streamed; memory stays flat). Non-finite floats are
printed as the JSON strings "NaN", "Infinity" and "-Infinity". If the reader closes the pipe
(e.g. `dinput run ... | head -1`), run stops quietly with exit status 0.

)"},
    {kAll, R"(On failure the exit status is 1 and one line "<STATUS_NAME>: <message>" (e.g.
"INVALID_ARGUMENT: ...") is printed on stderr. Nothing is printed on stdout, except that a
run failing after some steps leaves those steps' lines printed (without the end lines). A damaged
record file fails with DATA_LOSS naming the file and the byte offset of the damage.
)"},
};

}  // namespace

std::string usage_text() {
  std::string text;
  for (const HelpSection& section : kHelp) text += section.text;
  return text;
}

bool command_help(const std::string& command, std::string* text) {
  static const std::pair<const char*, unsigned> kCommands[] = {
      {"run", kRun},         {"spec", kSpec},       {"bench", kBench},   {"write", kWrite},
      {"convert", kConvert}, {"inspect", kInspect}, {"launch", kLaunch}, {"state", kState}};
  for (const auto& [name, bit] : kCommands) {
    if (command != name) continue;
    *text = "dinput " + command + ": (dinput help lists every command)\n\nCommand:\n";
    for (const HelpSection& section : kHelp) {
      if (section.commands & bit) *text += section.text;
    }
    return true;
  }
  return false;
}

}  // namespace dinput_tool
