// Record files: the records and fixed_length_records sources, and the record writer.
#include <memory>
#include <string>
#include <vector>

#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/transform_options.h"
#include "io/file_sources.h"
#include "io/record_writer.h"

using namespace dinput;

struct dinput_record_writer {
  std::unique_ptr<RecordWriter> writer;
};

namespace {

// The file names of a source call; INVALID_ARGUMENT naming the function for NULLs.
std::vector<std::string> file_list(const char* fn, const char* const* files, size_t num_files) {
  if (num_files > 0 && !files) raise(Code::kInvalidArgument, fn, ": argument 'files' is NULL");
  std::vector<std::string> names;
  names.reserve(num_files);
  for (size_t i = 0; i < num_files; ++i) {
    if (!files[i]) raise(Code::kInvalidArgument, fn, ": files[", i, "] is NULL");
    names.emplace_back(files[i]);
  }
  return names;
}

Compression to_compression(const char* fn, dinput_compression_t compression) {
  int c = static_cast<int>(compression);
  if (c < 0 || c > 2)
    raise(
        Code::kInvalidArgument, fn, ": invalid compression ", c,
        " (expected DINPUT_COMPRESSION_NONE, DINPUT_COMPRESSION_ZSTD or DINPUT_COMPRESSION_GZIP)");
  return static_cast<Compression>(c);
}

}  // namespace

// Inside a guard() body `__func__` is the lambda's "operator()"; messages use
// capi::current_function(), the exported function that guard() recorded.
extern "C" {

DINPUT_API dinput_status_t dinput_dataset_records(dinput_dataset_t** out, const char* const* files,
                                                  size_t num_files,
                                                  const dinput_records_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_records", capi::guard(__func__, [&] {
        DINPUT_REQUIRE_OUT(out);
        auto names = file_list(capi::current_function(), files, num_files);
        *out = capi::new_handle<dinput_dataset>(
            make_records(std::move(names), to_compression(capi::current_function(), o.compression),
                         o.buffer_size));
      }));
}

DINPUT_API dinput_status_t dinput_dataset_fixed_length_records(
    dinput_dataset_t** out, const char* const* files, size_t num_files, int64_t record_bytes,
    int64_t header_bytes, int64_t footer_bytes) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    auto names = file_list(capi::current_function(), files, num_files);
    *out = capi::new_handle<dinput_dataset>(
        make_fixed_length_records(std::move(names), record_bytes, header_bytes, footer_bytes));
  });
}

DINPUT_API dinput_status_t dinput_record_writer_open(
    dinput_record_writer_t** out, const char* path, const dinput_record_writer_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_record_writer_open", capi::guard(__func__, [&] {
        DINPUT_REQUIRE_OUT(out);
        DINPUT_REQUIRE(path);
        Compression c = to_compression(capi::current_function(), o.compression);
        *out = capi::new_handle<dinput_record_writer>(
            std::make_unique<RecordWriter>(path, c, o.level, o.zstd_window_log));
      }));
}

DINPUT_API dinput_status_t dinput_record_writer_write(dinput_record_writer_t* writer,
                                                      const void* data, size_t size) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(writer);
    if (size > 0 && !data)
      raise(Code::kInvalidArgument, capi::current_function(),
            ": argument 'data' is NULL but size is ", size);
    writer->writer->write(data, size);
  });
}

DINPUT_API dinput_status_t dinput_record_writer_flush(dinput_record_writer_t* writer) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(writer);
    writer->writer->flush();
  });
}

DINPUT_API dinput_status_t dinput_record_writer_close(dinput_record_writer_t* writer) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(writer);
    writer->writer->close();
  });
}

DINPUT_API dinput_status_t dinput_record_writer_discard(dinput_record_writer_t* writer) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(writer);
    writer->writer->discard();
  });
}

DINPUT_API void dinput_record_writer_free(dinput_record_writer_t* writer) {
  // The destructor closes a writer that is still open, swallowing the error as documented.
  capi::free_handle(writer);
}

}  // extern "C"
