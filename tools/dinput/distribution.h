// Everything between a parsed pipeline and a distributed dataset: strategies (one per
// simulated worker, or this process's own as one worker of a multi-process job), the
// collective that joins the workers (in-process, or over the network from a cluster),
// distribute_dataset or distribute_datasets_from_function, and stepping a distributed
// iterator.
#ifndef DINPUT_TOOL_DISTRIBUTION_H_
#define DINPUT_TOOL_DISTRIBUTION_H_

#include <cstdint>
#include <functional>

#include "chain_parser.h"
#include "cli_options.h"
#include "handles.h"
#include "status.h"

namespace dinput_tool {

struct Worker {
  int index = 0;  // the worker's index in the job, as printed
  int slot = 0;   // its place among this process's workers, 0..local_workers()-1
  const dinput_strategy_t* strategy = nullptr;
  const dinput_dist_dataset_t* dataset = nullptr;
};

using WorkerJob = std::function<void(const Worker& worker)>;

// Whether this process is one worker of a multi-process job (--cluster, --rank, or the
// DINPUT_RANK and DINPUT_WORLD_SIZE variables that `dinput launch` sets).
bool joins_job(const CliOptions& options);

// The number of workers this process runs: --workers W, or 1 when it is one worker of a
// multi-process job.
int local_workers(const CliOptions& options);

// Distributes the pipeline for every worker of this process and runs `job` once per worker.
// When the process is one worker of a job (--cluster, --rank, or the DINPUT_RANK and
// DINPUT_WORLD_SIZE variables `dinput launch` sets), it joins the job's collective first and
// runs its one worker. With one worker
// the job runs on the calling thread; with W > 1 each worker has its own thread, since the
// workers' iterators wait for each other through the collective at every step. The first
// failing worker aborts the collective, so its peers stop waiting at once; that worker's
// Failure is thrown after every thread has finished.
// `require_finite`: an infinite pipeline is an error (the caller has no step limit).
void for_each_worker(const CliOptions& options, const Pipeline& pipeline, bool require_finite,
                     const WorkerJob& job);

// Writes failure.line() to stderr and exits with status 1 without running destructors: only
// for a worker thread that cannot even be created while others already wait for it.
[[noreturn]] void exit_with_error(const Failure& failure);

// Steps a distributed iterator with get_next or get_next_as_optional.
class Stepper {
 public:
  Stepper(dinput_dist_iterator_t* iterator, bool use_optional)
      : iterator_(iterator), use_optional_(use_optional) {}
  // The next step's value, or null at the end of the data.
  PerReplicaPtr next();

 private:
  dinput_dist_iterator_t* iterator_;
  bool use_optional_;
};

DistIteratorPtr new_iterator(const dinput_dist_dataset_t* dataset);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_DISTRIBUTION_H_
