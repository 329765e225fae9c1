// Factories for every dataset node. They validate their arguments (INVALID_ARGUMENT naming
// the argument) and never do any work on data.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace dinput {

// --- sources ---
DatasetPtr make_range(int64_t start, int64_t stop, int64_t step);
DatasetPtr make_from_tensors(Element element);
DatasetPtr make_from_tensor_slices(Element element);

// A generator: open() is called once per iterator and yields that iterator's elements.
class GeneratorInstance {
 public:
  virtual ~GeneratorInstance() = default;
  virtual bool next(Element& out) = 0;
  // Optional checkpoint support: can_save() true when save() and restore() work. save()
  // returns the generator's position as opaque bytes; restore() is given them on a new
  // instance, before its first next().
  virtual bool can_save() const { return false; }
  virtual std::string save() const { return {}; }
  virtual void restore(const std::string&) {}
};
class GeneratorSource {
 public:
  virtual ~GeneratorSource() = default;
  virtual std::unique_ptr<GeneratorInstance> open() const = 0;
};
DatasetPtr make_from_generator(ElementSpec spec, std::shared_ptr<const GeneratorSource> source);

// --- transforms ---
// num_parallel_calls > 1 (or kAutotune, -1) stacks several batches at once on a thread pool;
// batches always come out in order, so batch has no deterministic setting here (the C API
// accepts one for tf.data's signature and ignores it, see batching.cc).
DatasetPtr make_batch(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                      int64_t num_parallel_calls = 1);
DatasetPtr make_unbatch(DatasetPtr input);
DatasetPtr make_rebatch(DatasetPtr input, std::vector<int64_t> sizes, bool drop_remainder);
DatasetPtr make_repeat(DatasetPtr input, int64_t count);
DatasetPtr make_take(DatasetPtr input, int64_t count);
DatasetPtr make_skip(DatasetPtr input, int64_t count);
constexpr int64_t kShardHint = -1;
DatasetPtr make_shard(DatasetPtr input, int64_t num_shards, int64_t index);
// seed < 0: random per dataset.
DatasetPtr make_shuffle(DatasetPtr input, int64_t buffer_size, int64_t seed,
                        bool reshuffle_each_iteration);

using MapFn = std::function<Element(const Element&)>;
using PredicateFn = std::function<bool(const Element&)>;
constexpr int64_t kAutotune = -1;
// out_spec empty: the input's spec. num_parallel_calls <= 1: sequential. deterministic unset
// (for map, interleave and batch): the with_options() value in effect, else true.
DatasetPtr make_map(DatasetPtr input, std::shared_ptr<const MapFn> fn, ElementSpec out_spec,
                    int64_t num_parallel_calls, std::optional<bool> deterministic);
// map whose function serves a run of consecutive elements per call: it is given up to
// max_count (>= 1) inputs at once (fewer at the end of the input) and appends one result per
// input to `outs`, in order; it may move from `ins`. The results are the same elements a map
// would give; a failing call fails the iterator at the first element of its run.
// tuned_as: the node whose AUTOTUNE knob the map uses (null: its own). A map made anew for each
// iterator of another node (an image chain's) then keeps that node's tuned value from one
// iterator to the next, as a map in the graph does across the epochs of a repeat.
using MapManyFn = std::function<void(std::vector<Element>& outs, std::vector<Element>& ins)>;
DatasetPtr make_map_many(DatasetPtr input, std::shared_ptr<const MapManyFn> fn, int64_t max_count,
                         ElementSpec out_spec, int64_t num_parallel_calls,
                         std::optional<bool> deterministic, DatasetPtr tuned_as = nullptr);
DatasetPtr make_filter(DatasetPtr input, std::shared_ptr<const PredicateFn> fn);
DatasetPtr make_enumerate(DatasetPtr input, int64_t start);
// For each input element fn gives a dataset; cycle_length of them are read in turn,
// block_length elements at a time. num_parallel_calls > 1 (or kAutotune) reads the open
// datasets ahead on background threads; non-deterministic order then passes over readers
// that have nothing ready.
using InterleaveFn = std::function<DatasetPtr(const Element&)>;
DatasetPtr make_interleave(DatasetPtr input, std::shared_ptr<const InterleaveFn> fn,
                           ElementSpec out_spec, int64_t cycle_length, int64_t block_length,
                           int64_t num_parallel_calls, std::optional<bool> deterministic);
// flat_map: interleave with one dataset open at a time (cycle_length 1), named flat_map.
DatasetPtr make_flat_map(DatasetPtr input, std::shared_ptr<const InterleaveFn> fn,
                         ElementSpec out_spec);
// interleave or flat_map (cycle_length 1) whose datasets come from a built-in reader rather
// than a user function: `reader` names it in the fingerprint ("records(compression=...)").
DatasetPtr make_reader_interleave(DatasetPtr input, std::shared_ptr<const InterleaveFn> fn,
                                  std::string reader, ElementSpec out_spec, int64_t cycle_length,
                                  int64_t block_length, int64_t num_parallel_calls,
                                  std::optional<bool> deterministic, bool flat_map);
// padded_batch: batch_size rows per batch, each component padded to `padded_shapes` (empty:
// unknown dimensions to the batch's longest) with `padding_values` (empty: zeros, empty
// bytes). See data/padding.h for what is checked.
DatasetPtr make_padded_batch(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                             std::vector<Shape> padded_shapes, std::vector<Tensor> padding_values);
// bucket_by_sequence_length: each element goes to the bucket of the length of component
// `length_component` (its first dimension): bucket i holds lengths in
// [boundaries[i-1], boundaries[i]). A bucket that holds batch_sizes[i] elements is emitted
// at once as a padded batch; at the end of the input the partly filled buckets are emitted
// in bucket order (unless drop_remainder). pad_to_bucket_boundary pads unknown dimensions to
// the bucket's boundary - 1 instead of the batch's longest.
DatasetPtr make_bucket_by_sequence_length(DatasetPtr input, int64_t length_component,
                                          std::vector<int64_t> boundaries,
                                          std::vector<int64_t> batch_sizes,
                                          std::vector<Shape> padded_shapes,
                                          std::vector<Tensor> padding_values,
                                          bool pad_to_bucket_boundary, bool drop_remainder);
// bucket_by_sequence_length with an element's length given by a function (tf.data's
// element_length_func) rather than a component. A negative length is INVALID_ARGUMENT naming
// the element; the function is called again for the elements a restore reads again.
using LengthFn = std::function<int64_t(const Element&)>;
DatasetPtr make_bucket_by_sequence_length(DatasetPtr input, std::shared_ptr<const LengthFn> length,
                                          std::vector<int64_t> boundaries,
                                          std::vector<int64_t> batch_sizes,
                                          std::vector<Shape> padded_shapes,
                                          std::vector<Tensor> padding_values,
                                          bool pad_to_bucket_boundary, bool drop_remainder);
// window: element i of the output stacks input elements i*shift + k*stride for k < size
// (fewer at the end of the input, unless drop_remainder). tf.data's window yields datasets;
// this is window(...).flat_map(lambda *w: zip(w).batch(size)) in one node.
DatasetPtr make_window(DatasetPtr input, int64_t size, int64_t shift, int64_t stride,
                       bool drop_remainder);
DatasetPtr make_prefetch(DatasetPtr input, int64_t buffer_size);
// distribute_dataset's read-ahead before the split: a prefetch of at least `elements`
// elements, more while they are small (docs/semantics.md, "Read-ahead"). `adaptive`: it makes
// elements on the consumer's thread while they are cheaper to make than a thread hand-off,
// and ahead on its thread while they cost more; only for inputs that run no user code (a
// consumer busy in a callback could not be woken by a cancel).
DatasetPtr make_read_ahead(DatasetPtr input, int64_t elements, bool adaptive);
DatasetPtr make_with_options(DatasetPtr input, const Options& options);

// --- several inputs (zip_concatenate.cc, sample_choose.cc), ignore_errors ---
// Elements whose components are those of one element of each input, in order; ends with
// the shortest input.
DatasetPtr make_zip(std::vector<DatasetPtr> inputs);
// input's elements, then other's; their specs must be compatible (same dtypes and ranks).
DatasetPtr make_concatenate(DatasetPtr input, DatasetPtr other);
// Each element from an input drawn at random with the given weights (empty: equal; they are
// normalised), from a seed (< 0: random per dataset). stop_on_empty_dataset: end at the
// first draw of an exhausted input; else draw again among the others.
DatasetPtr make_sample_from_datasets(std::vector<DatasetPtr> inputs, std::vector<double> weights,
                                     int64_t seed, bool stop_on_empty_dataset);
// Each element from the input that the next int64 scalar of `selector` names; an index
// outside [0, inputs) is INVALID_ARGUMENT naming it.
DatasetPtr make_choose_from_datasets(DatasetPtr selector, std::vector<DatasetPtr> inputs,
                                     bool stop_on_empty_dataset);
// Drops the elements whose making failed with INVALID_ARGUMENT or DATA_LOSS, counting them
// in the iterator statistic "errors_ignored"; other errors pass.
DatasetPtr make_ignore_errors(DatasetPtr input, bool log_warning);

// Threads used for AUTOTUNE'd parallelism.
int default_parallelism();
// INVALID_ARGUMENT naming `op` unless n is 0..1024 threads or kAutotune (map, batch).
void check_num_parallel_calls(const char* op, int64_t n);

}  // namespace dinput
