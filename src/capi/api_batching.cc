// padded_batch, bucket_by_sequence_length, window, flat_map, and readers as values (the
// reader interleave and flat_map that run a built-in file reader instead of a callback).
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "capi/callbacks.h"
#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/transform_options.h"
#include "io/file_sources.h"

using namespace dinput;

struct dinput_padded_batch_options : dinput::capi::FreezableOptions {
  bool drop_remainder = false;
  std::optional<ElementSpec> padded_shapes;
  std::optional<Element> padding_values;
};

struct dinput_reader {
  ReaderSpec spec;
};

namespace {

template <typename Make>
dinput_status_t make_dataset(const char* fn, dinput_dataset_t** out, const dinput_dataset_t* input,
                             Make&& make) {
  return capi::guard(fn, [&] {
    if (!out) raise(Code::kInvalidArgument, fn, ": argument 'out' is NULL");
    *out = nullptr;
    if (!input) raise(Code::kInvalidArgument, fn, ": argument 'input' is NULL");
    *out = capi::new_handle<dinput_dataset>(make(input->ds));
  });
}

std::vector<Shape> shapes_of(const dinput_padded_batch_options& o) {
  std::vector<Shape> shapes;
  if (o.padded_shapes)
    for (const auto& s : *o.padded_shapes) shapes.push_back(s.shape);
  return shapes;
}

std::vector<Tensor> values_of(const dinput_padded_batch_options& o) {
  return o.padding_values.value_or(Element());
}

dinput_status_t new_reader(const char* fn, dinput_reader_t** out,
                           const std::function<ReaderSpec()>& spec) {
  return capi::guard(fn, [&] {
    DINPUT_REQUIRE_OUT(out);
    ReaderSpec r = spec();
    make_reader(r, {});  // its arguments are checked now
    *out = capi::new_handle<dinput_reader>(r);
  });
}

}  // namespace

extern "C" {

// ---- padded batch options ----

DINPUT_API dinput_status_t dinput_padded_batch_options_new(dinput_padded_batch_options_t** out) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = std::make_unique<dinput_padded_batch_options>().release();  // freed by _free
  });
}

DINPUT_API void dinput_padded_batch_options_free(dinput_padded_batch_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t dinput_padded_batch_options_set_drop_remainder(
    dinput_padded_batch_options_t* options, int drop_remainder) {
  return capi::set_option(__func__, options, [&](dinput_padded_batch_options& o) {
    o.drop_remainder = drop_remainder != 0;
  });
}

DINPUT_API int dinput_padded_batch_options_drop_remainder(
    const dinput_padded_batch_options_t* options) {
  return options && options->drop_remainder ? 1 : 0;
}

DINPUT_API dinput_status_t dinput_padded_batch_options_set_padded_shapes(
    dinput_padded_batch_options_t* options, const dinput_spec_t* shapes) {
  return capi::set_option(__func__, options, [&](dinput_padded_batch_options& o) {
    if (shapes) {
      o.padded_shapes = shapes->spec;
      shapes->frozen.freeze("dinput_padded_batch_options_set_padded_shapes");
    } else {
      o.padded_shapes.reset();
    }
  });
}

DINPUT_API dinput_status_t dinput_padded_batch_options_padded_shapes(
    dinput_spec_t** out, const dinput_padded_batch_options_t* options) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    if (options && options->padded_shapes)
      *out = capi::new_handle<dinput_spec>(*options->padded_shapes);
  });
}

DINPUT_API dinput_status_t dinput_padded_batch_options_set_padding_values(
    dinput_padded_batch_options_t* options, const dinput_element_t* values) {
  return capi::set_option(__func__, options, [&](dinput_padded_batch_options& o) {
    if (values)
      o.padding_values = capi::to_element(*values);
    else
      o.padding_values.reset();
  });
}

DINPUT_API dinput_status_t dinput_padded_batch_options_padding_values(
    dinput_element_t** out, const dinput_padded_batch_options_t* options) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    if (options && options->padding_values)
      *out = capi::new_handle<dinput_element>(Element(*options->padding_values));
  });
}

// ---- transforms ----

DINPUT_API dinput_status_t
dinput_dataset_padded_batch(dinput_dataset_t** out, const dinput_dataset_t* input,
                            int64_t batch_size, const dinput_padded_batch_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(options, "dinput_dataset_padded_batch",
                            make_dataset(__func__, out, input, [&](DatasetPtr in) {
                              return make_padded_batch(in, batch_size, o.drop_remainder,
                                                       shapes_of(o), values_of(o));
                            }));
}

DINPUT_API dinput_status_t dinput_dataset_bucket_by_sequence_length(
    dinput_dataset_t** out, const dinput_dataset_t* input, size_t length_component,
    const int64_t* boundaries, size_t num_boundaries, const int64_t* batch_sizes,
    size_t num_batch_sizes, int pad_to_bucket_boundary,
    const dinput_padded_batch_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_bucket_by_sequence_length",
      make_dataset(__func__, out, input, [&](DatasetPtr in) {
        const char* fn = "dinput_dataset_bucket_by_sequence_length";
        if (num_boundaries > 0 && !boundaries)
          raise(Code::kInvalidArgument, fn, ": argument 'boundaries' is NULL");
        if (num_batch_sizes > 0 && !batch_sizes)
          raise(Code::kInvalidArgument, fn, ": argument 'batch_sizes' is NULL");
        if (length_component > static_cast<size_t>(INT64_MAX))
          raise(Code::kInvalidArgument, fn, ": argument 'length_component' is too large");
        return make_bucket_by_sequence_length(
            in, static_cast<int64_t>(length_component),
            std::vector<int64_t>(boundaries, boundaries + num_boundaries),
            std::vector<int64_t>(batch_sizes, batch_sizes + num_batch_sizes), shapes_of(o),
            values_of(o), pad_to_bucket_boundary != 0, o.drop_remainder);
      }));
}

DINPUT_API dinput_status_t dinput_dataset_bucket_by_sequence_length_fn(
    dinput_dataset_t** out, const dinput_dataset_t* input, dinput_length_fn fn, void* user_data,
    dinput_free_fn free_user_data, const int64_t* boundaries, size_t num_boundaries,
    const int64_t* batch_sizes, size_t num_batch_sizes, int pad_to_bucket_boundary,
    const dinput_padded_batch_options_t* options) {
  auto owned = std::make_shared<capi::UserData>(user_data, free_user_data);
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_bucket_by_sequence_length_fn",
      make_dataset(__func__, out, input, [&](DatasetPtr in) {
        const char* name = "dinput_dataset_bucket_by_sequence_length_fn";
        if (!fn) raise(Code::kInvalidArgument, name, ": argument 'fn' is NULL");
        if (num_boundaries > 0 && !boundaries)
          raise(Code::kInvalidArgument, name, ": argument 'boundaries' is NULL");
        if (num_batch_sizes > 0 && !batch_sizes)
          raise(Code::kInvalidArgument, name, ": argument 'batch_sizes' is NULL");
        return make_bucket_by_sequence_length(
            in, capi::make_c_length(fn, owned),
            std::vector<int64_t>(boundaries, boundaries + num_boundaries),
            std::vector<int64_t>(batch_sizes, batch_sizes + num_batch_sizes), shapes_of(o),
            values_of(o), pad_to_bucket_boundary != 0, o.drop_remainder);
      }));
}

DINPUT_API dinput_status_t dinput_dataset_window(dinput_dataset_t** out,
                                                 const dinput_dataset_t* input, int64_t size,
                                                 int64_t shift, int64_t stride,
                                                 int drop_remainder) {
  return make_dataset(__func__, out, input, [&](DatasetPtr in) {
    return make_window(in, size, shift, stride, drop_remainder != 0);
  });
}

DINPUT_API dinput_status_t dinput_dataset_flat_map(dinput_dataset_t** out,
                                                   const dinput_dataset_t* input,
                                                   dinput_interleave_fn fn,
                                                   const dinput_spec_t* out_spec, void* user_data,
                                                   dinput_free_fn free_user_data) {
  auto owned = std::make_shared<capi::UserData>(user_data, free_user_data);
  return make_dataset(__func__, out, input, [&](DatasetPtr in) {
    if (!fn) raise(Code::kInvalidArgument, "dinput_dataset_flat_map: argument 'fn' is NULL");
    if (!out_spec)
      raise(Code::kInvalidArgument, "dinput_dataset_flat_map: argument 'out_spec' is NULL");
    DatasetPtr ds = make_flat_map(in, capi::make_c_interleave(fn, owned), out_spec->spec);
    out_spec->frozen.freeze("dinput_dataset_flat_map");
    return ds;
  });
}

// ---- readers ----

DINPUT_API dinput_status_t dinput_reader_records(dinput_reader_t** out,
                                                 const dinput_records_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(options, "dinput_reader_records", new_reader(__func__, out, [&] {
                              int c = static_cast<int>(o.compression);
                              if (c < 0 || c > 2)
                                raise(Code::kInvalidArgument,
                                      "dinput_reader_records: invalid compression ", c);
                              ReaderSpec r;
                              r.kind = ReaderSpec::Kind::kRecords;
                              r.compression = static_cast<Compression>(c);
                              r.buffer_size = o.buffer_size;
                              return r;
                            }));
}

DINPUT_API dinput_status_t dinput_reader_text_lines(dinput_reader_t** out) {
  return new_reader(__func__, out, [] {
    ReaderSpec r;
    r.kind = ReaderSpec::Kind::kTextLines;
    return r;
  });
}

DINPUT_API dinput_status_t dinput_reader_fixed_length_records(dinput_reader_t** out,
                                                              int64_t record_bytes,
                                                              int64_t header_bytes,
                                                              int64_t footer_bytes) {
  return new_reader(__func__, out, [&] {
    ReaderSpec r;
    r.kind = ReaderSpec::Kind::kFixedLengthRecords;
    r.record_bytes = record_bytes;
    r.header_bytes = header_bytes;
    r.footer_bytes = footer_bytes;
    return r;
  });
}

DINPUT_API void dinput_reader_free(dinput_reader_t* reader) { capi::free_handle(reader); }

DINPUT_API dinput_status_t dinput_dataset_interleave_reader(
    dinput_dataset_t** out, const dinput_dataset_t* input, const dinput_reader_t* reader,
    const dinput_interleave_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_interleave_reader",
      make_dataset(__func__, out, input, [&](DatasetPtr in) {
        if (!reader)
          raise(Code::kInvalidArgument,
                "dinput_dataset_interleave_reader: argument 'reader' is NULL");
        return make_reader_interleave(in, reader->spec, o.cycle_length, o.block_length,
                                      o.num_parallel_calls, capi::to_optional(o.deterministic),
                                      /*flat_map=*/false);
      }));
}

DINPUT_API dinput_status_t dinput_dataset_flat_map_reader(dinput_dataset_t** out,
                                                          const dinput_dataset_t* input,
                                                          const dinput_reader_t* reader) {
  return make_dataset(__func__, out, input, [&](DatasetPtr in) {
    if (!reader)
      raise(Code::kInvalidArgument, "dinput_dataset_flat_map_reader: argument 'reader' is NULL");
    return make_reader_interleave(in, reader->spec, 1, 1, 1, std::nullopt, /*flat_map=*/true);
  });
}

}  // extern "C"
