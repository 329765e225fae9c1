// One dataset node for every image operation: an ImageOp says what happens to the component,
// and the node runs it as a map over enumerate(input), whose index is the element's position
// (for the random draws and for the error messages).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>

#include "core/origin.h"
#include "core/seed.h"
#include "data/state.h"
#include "image/decode.h"
#include "image/image_ops.h"
#include "image/pixels.h"

namespace dinput {
namespace {

// A splitmix64 stream: the random numbers of one element.
struct Rng {
  uint64_t state;
  uint64_t next() { return mix_seed(state += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, n), n >= 1.
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
};

struct ImageOp {
  // What the fusions need to know of an operation: kDecodeJpeg (a random_resized_crop after
  // it decodes only its region), kResize (its output is a new float32 image, which a flip
  // and a float32 normalization after it can write in the same pass), kFlip, kNormalize.
  enum Kind { kDecodeJpeg, kResize, kFlip, kNormalize, kOther } kind = kOther;
  const char* name;
  std::string arguments;  // without component and seed, which the node adds
  bool random = false;
  int64_t channels = 0;  // decode_jpeg's, for the fusion with a random crop
  // The new value of the component, which is moved in (so that an operation may write over
  // a buffer nobody else holds). rng: the element's draws (random operations only).
  std::function<Tensor(Tensor in, Rng& rng)> apply;
  // kResize: apply, also doing `epilogue` on its output.
  std::function<Tensor(Tensor in, Rng& rng, const image::ResizeEpilogue& epilogue)> resize;
  // kNormalize: its arguments.
  std::vector<float> mean, stddev;
  DType dtype = DType::kFloat32;
  // The component's spec after the operation, given the one before.
  std::function<TensorSpec(const TensorSpec& in)> spec;
};

class ImageOpDataset final : public UnaryDataset {
 public:
  ImageOpDataset(DatasetPtr input, std::shared_ptr<const ImageOp> op, ImageOpOptions options,
                 uint64_t seed, bool random_seed)
      : UnaryDataset(std::move(input)),
        op_(std::move(op)),
        options_(options),
        seed_(seed),
        random_seed_(random_seed),
        epoch_(std::make_shared<std::atomic<uint64_t>>(0)) {
    spec_ = input_->element_spec();
    DINPUT_CHECK_ARG(
        options_.component >= 0 && options_.component < static_cast<int64_t>(spec_.size()),
        op_->name, ": component ", options_.component, " does not exist (elements have ",
        spec_.size(), " components)");
    TensorSpec& s = spec_[options_.component];
    s = op_->spec(s);
  }
  const char* name() const override { return op_->name; }
  std::string arguments() const override {
    std::string a = op_->arguments;
    if (op_->random)
      a += str_cat(a.empty() ? "" : ", ", "seed=", random_seed_ ? "random" : std::to_string(seed_));
    return a + str_cat(a.empty() ? "" : ", ", "component=", options_.component);
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    auto copy = std::make_shared<ImageOpDataset>(in.at(0), op_, options_, seed_, random_seed_);
    copy->epoch_ = epoch_;  // a rewritten pipeline continues the same sequence of epochs
    copy->batch_rows_ = batch_rows_;
    return copy;
  }
  bool has_random_seed() const override { return random_seed_; }
  // The chain below runs in this node's map (make_iterator).
  bool fuses_input() const override {
    return dynamic_cast<const ImageOpDataset*>(input_.get()) != nullptr;
  }
  DatasetPtr with_seed(uint64_t seed) const override {
    auto copy = std::make_shared<ImageOpDataset>(input_, op_, options_, seed, false);
    copy->epoch_ = epoch_;
    copy->batch_rows_ = batch_rows_;
    return copy;
  }
  // A chain ending in a resize (with its flip and normalization) of a fixed output shape can
  // write each image into its place in the batch (see run_chain).
  DatasetPtr with_batch_rows(int64_t rows) const override {
    const TensorSpec& s = spec_[options_.component];
    if (rows < 2 || s.dtype != DType::kFloat32 || s.shape.num_elements() <= 0) return nullptr;
    for (int d = 0; d < s.shape.rank(); ++d)
      if (s.shape[d] < 0) return nullptr;
    if (op_->kind != ImageOp::kResize && op_->kind != ImageOp::kFlip &&
        op_->kind != ImageOp::kNormalize)
      return nullptr;
    auto copy = std::make_shared<ImageOpDataset>(input_, op_, options_, seed_, random_seed_);
    copy->epoch_ = epoch_;
    copy->batch_rows_ = rows;
    return copy;
  }
  uint64_t seed() const override { return seed_; }
  EpochCounter epoch_counter() const override { return op_->random ? epoch_ : nullptr; }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  const ImageOp& op() const { return *op_; }
  const ImageOpOptions& image_options() const { return options_; }

 private:
  std::shared_ptr<const ImageOp> op_;
  ImageOpOptions options_;
  uint64_t seed_;
  bool random_seed_;
  mutable EpochCounter epoch_;
  ElementSpec spec_;
  int64_t batch_rows_ = 0;  // > 1: the size of the batch that takes this node's elements
};

// One operation of a chain run as one map (below): the node, its component and its draws.
struct ChainStep {
  std::shared_ptr<const ImageOp> op;
  size_t component;
  uint64_t seed;
  std::shared_ptr<std::atomic<uint64_t>> epoch;  // random operations only
  Rng rng(int64_t position) const {
    return Rng{op->random ? epoch_seed(seed, epoch->load()) ^ mix_seed(position) : 0};
  }
};

// Where the images of a chain feeding batch(rows) are written: the elements at positions
// [k * rows, (k + 1) * rows) are slices of one buffer, in order, so that the batch that takes
// them is a view of that buffer (stack() copies nothing) and no image is copied after it is
// computed. A position whose run has been given up on (a failed element never takes its
// place) just gets a buffer of its own run; the batch copies then, as it would anyway.
class Slabs {
 public:
  Slabs(int64_t rows, Shape shape) : rows_(rows), shape_(std::move(shape)) {
    row_bytes_ = static_cast<size_t>(shape_.num_elements()) * sizeof(float);
  }
  const Shape& shape() const { return shape_; }
  // The float32 tensor the image at `position` is written into.
  Tensor place(int64_t position) {
    const int64_t run = position / rows_;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(run);
    if (it == open_.end()) {
      // Runs well behind this one will not be completed (their missing elements failed):
      // their buffers live on in the elements that took places in them.
      for (auto o = open_.begin(); o != open_.end();) o = o->first < run - 2 ? open_.erase(o) : ++o;
      it = open_.emplace(run, Run{allocate_host(static_cast<size_t>(rows_) * row_bytes_), 0}).first;
    }
    Tensor t(DType::kFloat32, shape_, it->second.buffer,
             static_cast<size_t>(position % rows_) * row_bytes_);
    if (++it->second.taken == rows_) open_.erase(it);
    return t;
  }

 private:
  struct Run {
    std::shared_ptr<Buffer> buffer;
    int64_t taken;
  };
  const int64_t rows_;
  const Shape shape_;
  size_t row_bytes_;
  std::mutex mu_;
  std::map<int64_t, Run> open_;
};

// Runs the operations of a chain in order on one element. A resize followed by a flip and/or
// a float32 normalization of the same component is one pass over the pixels (each still
// draws from its own seed, and gives the values it gives alone). With `slabs`, a resize that
// is the chain's last operation on `slab_component` writes into the element's place there.
void run_chain(const std::vector<ChainStep>& steps, int64_t position, Element& out, Slabs* slabs,
               size_t slab_component) {
  for (size_t k = 0; k < steps.size(); ++k) {
    const ChainStep& s = steps[k];
    const ImageOp& op = *s.op;
    Rng rng = s.rng(position);
    // Encoded bytes (a decode's input) are kept for the message, which names the file and
    // offset they were read from when their reader said (core/origin.h).
    const Tensor encoded = out[s.component].dtype() == DType::kBytes ? out[s.component] : Tensor();
    try {
      if (op.kind == ImageOp::kResize) {
        image::ResizeEpilogue epilogue;
        size_t next = k + 1;
        if (next < steps.size() && steps[next].op->kind == ImageOp::kFlip &&
            steps[next].component == s.component) {
          Rng flip = steps[next].rng(position);
          epilogue.flip = flip.next() >> 63;  // as random_flip_left_right draws
          ++next;
        }
        if (next < steps.size() && steps[next].op->kind == ImageOp::kNormalize &&
            steps[next].op->dtype == DType::kFloat32 && steps[next].component == s.component) {
          epilogue.mean = &steps[next].op->mean;
          epilogue.stddev = &steps[next].op->stddev;
          ++next;
        }
        if (slabs && next == steps.size() && s.component == slab_component)
          epilogue.into = slabs->place(position);
        out[s.component] = op.resize(std::move(out[s.component]), rng, epilogue);
        k = next - 1;
        continue;
      }
      out[s.component] = op.apply(std::move(out[s.component]), rng);
    } catch (const Error& err) {
      raise(err.code(), op.name, ": element ", position, describe_origin(encoded, 0),
            " (component ", s.component, "): ", err.what());
    }
  }
}

// The iterator of a chain: the map's, plus the epochs the random operations draw with. A
// chain of one operation saves the section "image" it always saved; a longer one saves
// "image_chain", so that a state saved when each operation was a map of its own is refused
// (a section of another name is DATA_LOSS), not misread.
class ChainIterator final : public Iterator {
 public:
  ChainIterator(std::unique_ptr<Iterator> inner, std::vector<EpochCounter> epochs,
                const char* section)
      : inner_(std::move(inner)), epochs_(std::move(epochs)), section_(section) {}
  bool next(Element& out) override { return inner_->next(out); }
  void save(StateWriter& w) const override {
    w.section(section_, [&](StateWriter& s) {
      for (const auto& e : epochs_) s.u64(e->load());
      inner_->save(s);
    });
  }
  void restore(StateReader& r) override {
    StateReader s = r.section(section_);
    for (auto& e : epochs_)
      e->store(s.u64("epoch"));  // before the first next(): no call reads them yet
    inner_->restore(s);
    s.finish();
  }

 private:
  std::unique_ptr<Iterator> inner_;
  std::vector<EpochCounter> epochs_;
  const char* section_;
};

std::unique_ptr<Iterator> ImageOpDataset::make_iterator(const IteratorContext& ctx) const {
  // The chain of image operations ending here (innermost first) runs as one map: one hand-off
  // between threads per element instead of one per operation, every operation on the pool
  // (the largest num_parallel_calls of the chain), and a resize's flip and normalization
  // fused into its pass over the pixels. Results do not depend on the threads, so running
  // an operation on more threads than it asked for changes nothing but the speed.
  std::vector<const ImageOpDataset*> nodes;
  for (const ImageOpDataset* n = this; n; n = dynamic_cast<const ImageOpDataset*>(n->input_.get()))
    nodes.push_back(n);
  std::reverse(nodes.begin(), nodes.end());
  std::vector<ChainStep> steps;
  std::vector<EpochCounter> epochs;
  int64_t parallel = 1;
  bool autotune = false;
  std::optional<bool> deterministic;
  for (const ImageOpDataset* n : nodes) {
    std::shared_ptr<std::atomic<uint64_t>> epoch;
    if (n->op_->random) {
      epoch = std::make_shared<std::atomic<uint64_t>>(next_epoch(ctx, n->epoch_));
      epochs.push_back(epoch);
    }
    steps.push_back(
        ChainStep{n->op_, static_cast<size_t>(n->options_.component), n->seed_, std::move(epoch)});
    const int64_t p = n->options_.num_parallel_calls;
    autotune = autotune || p == kAutotune;
    parallel = std::max(parallel, p);
    if (n->options_.deterministic) deterministic = n->options_.deterministic;  // the outermost
  }
  std::shared_ptr<Slabs> slabs;
  if (batch_rows_ > 1)
    slabs = std::make_shared<Slabs>(batch_rows_, spec_[options_.component].shape);
  // A map_many of runs of one, whose function may move from its inputs: each component
  // reaches its operation with no other reference left to it.
  auto fn = std::make_shared<const MapManyFn>(
      [steps = std::move(steps), slabs, slab_component = static_cast<size_t>(options_.component)](
          std::vector<Element>& outs, std::vector<Element>& ins) {
        for (Element& e : ins) {
          const int64_t position = *e[0].data_as<int64_t>();
          Element out;
          out.reserve(e.size() - 1);
          for (size_t i = 1; i < e.size(); ++i) out.push_back(std::move(e[i]));
          run_chain(steps, position, out, slabs.get(), slab_component);
          outs.push_back(std::move(out));
        }
      });
  // Tuned as this node: each iterator of the chain (each epoch of a repeat) makes a new map,
  // which starts from the parallelism the last one reached.
  DatasetPtr map = make_map_many(make_enumerate(nodes.front()->input_, 0), std::move(fn), 1, spec_,
                                 autotune ? kAutotune : parallel, deterministic, ptr());
  std::unique_ptr<Iterator> inner = map->make_iterator(ctx);
  if (epochs.empty()) return inner;
  return std::make_unique<ChainIterator>(std::move(inner), std::move(epochs),
                                         nodes.size() == 1 ? "image" : "image_chain");
}

DatasetPtr make_node(DatasetPtr input, ImageOp op, const ImageOpOptions& options,
                     int64_t seed = 0) {
  DINPUT_CHECK_ARG(input != nullptr, op.name, ": no input dataset");
  check_num_parallel_calls(op.name, options.num_parallel_calls);
  const bool random_seed = op.random && seed < 0;
  const uint64_t s = op.random ? seed_or_random(seed) : 0;
  return std::make_shared<ImageOpDataset>(
      std::move(input), std::make_shared<const ImageOp>(std::move(op)), options, s, random_seed);
}

// --- specs ---

// The component must be able to hold an image (rank 3 of a pixel dtype) where its spec says.
void check_image_spec(const char* op, const TensorSpec& in) {
  DINPUT_CHECK_ARG(in.shape.rank() == 3, op,
                   ": the component must be an image of shape "
                   "[height, width, channels], got ",
                   to_string(in));
  DINPUT_CHECK_ARG(
      in.dtype == DType::kUInt8 || in.dtype == DType::kFloat16 || in.dtype == DType::kFloat32, op,
      ": the image must be uint8, float16 or float32, got ", to_string(in));
}

std::function<TensorSpec(const TensorSpec&)> image_spec(const char* op, int64_t height,
                                                        int64_t width, std::optional<DType> dtype) {
  return [=](const TensorSpec& in) {
    check_image_spec(op, in);
    TensorSpec out = in;
    if (dtype) out.dtype = *dtype;
    if (height >= 0) out.shape[0] = height;
    if (width >= 0) out.shape[1] = width;
    return out;
  };
}

std::function<TensorSpec(const TensorSpec&)> decoded_spec(const char* op, int64_t channels) {
  return [=](const TensorSpec& in) {
    DINPUT_CHECK_ARG(in.dtype == DType::kBytes && in.shape.rank() == 0, op,
                     ": the component must be a scalar bytes tensor (the encoded image), got ",
                     to_string(in));
    return TensorSpec{DType::kUInt8,
                      Shape{kUnknownDim, kUnknownDim, channels == 0 ? kUnknownDim : channels}};
  };
}

const Tensor& encoded(const Tensor& in) {
  in.require_host("the encoded image");
  if (in.dtype() != DType::kBytes || in.rank() != 0)
    raise(Code::kInvalidArgument, "expected a scalar bytes tensor, got ", in.describe());
  return in;
}

void check_size(const char* op, int64_t height, int64_t width) {
  DINPUT_CHECK_ARG(height >= 1 && width >= 1 && height <= 65535 && width <= 65535, op,
                   ": size must be [height, width] within 1..65535, got [", height, ", ", width,
                   "]");
}

void check_dtype(const char* op, DType dtype) {
  DINPUT_CHECK_ARG(dtype == DType::kFloat32 || dtype == DType::kFloat16, op,
                   ": dtype must be float32 or float16, got ", dtype_name(dtype));
}

// The window of a random crop, or INVALID_ARGUMENT when the image is smaller.
image::Window crop_window(int64_t img_h, int64_t img_w, int64_t h, int64_t w, Rng* rng) {
  if (img_h < h || img_w < w)
    raise(Code::kInvalidArgument, "the image is ", img_h, "x", img_w, ", smaller than the crop ", h,
          "x", w);
  if (!rng) return image::Window{(img_h - h) / 2, (img_w - w) / 2, h, w};
  const int64_t y = rng->below(img_h - h + 1);
  return image::Window{y, rng->below(img_w - w + 1), h, w};
}

struct AreaRange {
  double scale_min, scale_max, ratio_min, ratio_max;
};

// A region whose area is a random fraction of the image's and whose aspect ratio is
// log-uniform, at a random place; after ten draws that do not fit, the largest centred
// region whose ratio is within range (torchvision's RandomResizedCrop draws the same way).
image::Window resized_crop_window(int64_t img_h, int64_t img_w, const AreaRange& r, Rng& rng) {
  if (img_h < 1 || img_w < 1)
    raise(Code::kInvalidArgument, "cannot crop the empty ", img_h, "x", img_w, " image");
  const double area = static_cast<double>(img_h) * static_cast<double>(img_w);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * rng.uniform(r.scale_min, r.scale_max);
    const double ratio = std::exp(rng.uniform(std::log(r.ratio_min), std::log(r.ratio_max)));
    const auto w = static_cast<int64_t>(std::lround(std::sqrt(target * ratio)));
    const auto h = static_cast<int64_t>(std::lround(std::sqrt(target / ratio)));
    if (w >= 1 && h >= 1 && w <= img_w && h <= img_h)
      return image::Window{rng.below(img_h - h + 1), rng.below(img_w - w + 1), h, w};
  }
  const double in_ratio = static_cast<double>(img_w) / static_cast<double>(img_h);
  int64_t h = img_h, w = img_w;
  if (in_ratio < r.ratio_min)
    h = std::max<int64_t>(1, std::lround(static_cast<double>(w) / r.ratio_min));
  else if (in_ratio > r.ratio_max)
    w = std::max<int64_t>(1, std::lround(static_cast<double>(h) * r.ratio_max));
  return image::Window{(img_h - h) / 2, (img_w - w) / 2, h, w};
}

}  // namespace

DatasetPtr make_decode_jpeg(DatasetPtr input, int64_t channels, const ImageOpOptions& options) {
  DINPUT_CHECK_ARG(channels == 0 || channels == 1 || channels == 3,
                   "decode_jpeg: channels must be 0 (as stored), 1 or 3, got ", channels);
  ImageOp op;
  op.kind = ImageOp::kDecodeJpeg;
  op.name = "decode_jpeg";
  op.arguments = str_cat("channels=", channels);
  op.channels = channels;
  op.apply = [channels](const Tensor& in, Rng&) {
    const Tensor& t = encoded(in);
    return image::decode_jpeg(t.string(0), static_cast<int>(channels));
  };
  op.spec = decoded_spec("decode_jpeg", channels);
  return make_node(std::move(input), std::move(op), options);
}

DatasetPtr make_decode_png(DatasetPtr input, int64_t channels, const ImageOpOptions& options) {
  DINPUT_CHECK_ARG(channels == 0 || channels == 1 || channels == 3 || channels == 4,
                   "decode_png: channels must be 0 (as stored), 1, 3 or 4, got ", channels);
  ImageOp op;
  op.name = "decode_png";
  op.arguments = str_cat("channels=", channels);
  op.apply = [channels](const Tensor& in, Rng&) {
    const Tensor& t = encoded(in);
    return image::decode_png(t.string(0), static_cast<int>(channels));
  };
  op.spec = decoded_spec("decode_png", channels);
  return make_node(std::move(input), std::move(op), options);
}

DatasetPtr make_resize(DatasetPtr input, int64_t height, int64_t width,
                       const ImageOpOptions& options) {
  check_size("resize", height, width);
  ImageOp op;
  op.kind = ImageOp::kResize;
  op.name = "resize";
  op.arguments = str_cat("size=[", height, ",", width, "]");
  op.resize = [height, width](const Tensor& in, Rng&, const image::ResizeEpilogue& epilogue) {
    return image::resize_bilinear(in, image::Window{}, height, width, epilogue);
  };
  op.apply = [f = op.resize](Tensor in, Rng& rng) { return f(std::move(in), rng, {}); };
  op.spec = image_spec("resize", height, width, DType::kFloat32);
  return make_node(std::move(input), std::move(op), options);
}

DatasetPtr make_center_crop(DatasetPtr input, int64_t height, int64_t width,
                            const ImageOpOptions& options) {
  check_size("center_crop", height, width);
  ImageOp op;
  op.name = "center_crop";
  op.arguments = str_cat("size=[", height, ",", width, "]");
  op.apply = [height, width](const Tensor& in, Rng&) {
    image::check_image(in);
    return image::crop(in, crop_window(in.dim(0), in.dim(1), height, width, nullptr));
  };
  op.spec = image_spec("center_crop", height, width, std::nullopt);
  return make_node(std::move(input), std::move(op), options);
}

DatasetPtr make_random_crop(DatasetPtr input, int64_t height, int64_t width, int64_t seed,
                            const ImageOpOptions& options) {
  check_size("random_crop", height, width);
  ImageOp op;
  op.name = "random_crop";
  op.arguments = str_cat("size=[", height, ",", width, "]");
  op.random = true;
  op.apply = [height, width](const Tensor& in, Rng& rng) {
    image::check_image(in);
    return image::crop(in, crop_window(in.dim(0), in.dim(1), height, width, &rng));
  };
  op.spec = image_spec("random_crop", height, width, std::nullopt);
  return make_node(std::move(input), std::move(op), options, seed);
}

DatasetPtr make_random_resized_crop(DatasetPtr input, int64_t height, int64_t width,
                                    double scale_min, double scale_max, double ratio_min,
                                    double ratio_max, int64_t seed, const ImageOpOptions& options) {
  check_size("random_resized_crop", height, width);
  DINPUT_CHECK_ARG(scale_min > 0 && scale_min <= scale_max && scale_max <= 1,
                   "random_resized_crop: scale must satisfy 0 < min <= max <= 1, got [", scale_min,
                   ", ", scale_max, "]");
  DINPUT_CHECK_ARG(ratio_min > 0 && ratio_min <= ratio_max && std::isfinite(ratio_max),
                   "random_resized_crop: ratio must satisfy 0 < min <= max, got [", ratio_min, ", ",
                   ratio_max, "]");
  const AreaRange range{scale_min, scale_max, ratio_min, ratio_max};
  ImageOp op;
  op.kind = ImageOp::kResize;
  op.name = "random_resized_crop";
  op.arguments = str_cat("size=[", height, ",", width, "], scale=[", scale_min, ",", scale_max,
                         "], ratio=[", ratio_min, ",", ratio_max, "]");
  op.random = true;
  op.spec = image_spec("random_resized_crop", height, width, DType::kFloat32);
  ImageOpOptions opts = options;
  // Directly after decode_jpeg of the same component: decode only the region (the same
  // pixels, as the region is chosen from the image's size alone), and in one node.
  auto* decode = dynamic_cast<const ImageOpDataset*>(input.get());
  if (decode && decode->op().kind == ImageOp::kDecodeJpeg &&
      decode->image_options().component == options.component) {
    const int64_t channels = decode->op().channels;
    op.arguments = str_cat("decode_jpeg(channels=", channels, "), ", op.arguments);
    op.resize = [=](const Tensor& in, Rng& rng, const image::ResizeEpilogue& epilogue) {
      const image::ChooseWindow choose = [&](int64_t h, int64_t w, image::Window& win) {
        win = resized_crop_window(h, w, range, rng);
      };
      image::Window where;
      Tensor rows = image::decode_jpeg_region(encoded(in).string(0), static_cast<int>(channels),
                                              choose, where);
      return image::resize_bilinear(rows, where, height, width, epilogue);
    };
    op.apply = [f = op.resize](Tensor in, Rng& rng) { return f(std::move(in), rng, {}); };
    const auto after = op.spec;
    op.spec = [before = decoded_spec("decode_jpeg", channels), after](const TensorSpec& in) {
      return after(before(in));
    };
    opts.num_parallel_calls =
        std::max(options.num_parallel_calls, decode->image_options().num_parallel_calls);
    if (options.num_parallel_calls == kAutotune ||
        decode->image_options().num_parallel_calls == kAutotune)
      opts.num_parallel_calls = kAutotune;
    if (!opts.deterministic) opts.deterministic = decode->image_options().deterministic;
    return make_node(decode->input(), std::move(op), opts, seed);
  }
  op.resize = [=](const Tensor& in, Rng& rng, const image::ResizeEpilogue& epilogue) {
    image::check_image(in);
    const image::Window win = resized_crop_window(in.dim(0), in.dim(1), range, rng);
    return image::resize_bilinear(in, win, height, width, epilogue);
  };
  op.apply = [f = op.resize](Tensor in, Rng& rng) { return f(std::move(in), rng, {}); };
  return make_node(std::move(input), std::move(op), opts, seed);
}

DatasetPtr make_random_flip_left_right(DatasetPtr input, int64_t seed,
                                       const ImageOpOptions& options) {
  ImageOp op;
  op.kind = ImageOp::kFlip;
  op.name = "random_flip_left_right";
  op.random = true;
  op.apply = [](Tensor in, Rng& rng) {
    image::check_image(in);
    return (rng.next() >> 63) ? image::flip_left_right(std::move(in)) : in;
  };
  op.spec = image_spec("random_flip_left_right", -1, -1, std::nullopt);
  return make_node(std::move(input), std::move(op), options, seed);
}

DatasetPtr make_image_cast(DatasetPtr input, DType dtype, const ImageOpOptions& options) {
  check_dtype("cast", dtype);
  ImageOp op;
  op.name = "cast";
  op.arguments = str_cat("dtype=", dtype_name(dtype));
  op.apply = [dtype](Tensor in, Rng&) { return image::cast(std::move(in), dtype); };
  op.spec = image_spec("cast", -1, -1, dtype);
  return make_node(std::move(input), std::move(op), options);
}

DatasetPtr make_normalize(DatasetPtr input, std::vector<float> mean, std::vector<float> stddev,
                          DType dtype, const ImageOpOptions& options) {
  check_dtype("normalize", dtype);
  DINPUT_CHECK_ARG(!mean.empty() && mean.size() == stddev.size(),
                   "normalize: mean and stddev must have the same number of values (one per "
                   "channel, or one), got ",
                   mean.size(), " and ", stddev.size());
  for (size_t i = 0; i < stddev.size(); ++i)
    DINPUT_CHECK_ARG(std::isfinite(stddev[i]) && stddev[i] != 0 && std::isfinite(mean[i]),
                     "normalize: mean[", i, "]=", mean[i], " and stddev[", i, "]=", stddev[i],
                     " must be finite, stddev nonzero");
  ImageOp op;
  op.kind = ImageOp::kNormalize;
  op.name = "normalize";
  op.mean = mean;
  op.stddev = stddev;
  op.dtype = dtype;
  std::string m, s;
  for (size_t i = 0; i < mean.size(); ++i) {
    m += str_cat(i ? "," : "", mean[i]);
    s += str_cat(i ? "," : "", stddev[i]);
  }
  op.arguments = str_cat("mean=[", m, "], stddev=[", s, "], dtype=", dtype_name(dtype));
  const int64_t n = static_cast<int64_t>(mean.size());
  op.apply = [mean = std::move(mean), stddev = std::move(stddev), dtype](Tensor in, Rng&) {
    return image::normalize(std::move(in), mean, stddev, dtype);
  };
  op.spec = [n, inner = image_spec("normalize", -1, -1, dtype)](const TensorSpec& in) {
    TensorSpec out = inner(in);
    DINPUT_CHECK_ARG(n == 1 || out.shape[2] == kUnknownDim || out.shape[2] == n, "normalize: ", n,
                     " mean values for images of ", out.shape[2], " channels");
    return out;
  };
  return make_node(std::move(input), std::move(op), options);
}

}  // namespace dinput
