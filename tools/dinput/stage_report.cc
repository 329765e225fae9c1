#include "stage_report.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "status.h"

namespace dinput_tool {

namespace {

// Copies a string the library returned into a JSON value and frees it.
JsonObject take_json(char* text, dinput_status_t status, const char* what) {
  struct Free {
    char* p;
    ~Free() { dinput_string_free(p); }
  } owned{text};
  check(status, what);
  return JsonObject::parse(text);
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

double ms(const JsonObject& ns) { return static_cast<double>(ns.get<int64_t>()) / 1e6; }

}  // namespace

JsonObject worker_statistics(dinput_dist_iterator_t* iterator) {
  char* text = nullptr;
  const dinput_status_t st = dinput_dist_iterator_statistics(&text, iterator, 0);
  return take_json(text, st, "dinput_dist_iterator_statistics");
}

JsonObject worker_trace(const dinput_dist_iterator_t* iterator) {
  char* text = nullptr;
  const dinput_status_t st = dinput_dist_iterator_trace(&text, iterator);
  return take_json(text, st, "dinput_dist_iterator_trace");
}

namespace {

// "worker W pipeline P: autotuned stage 1 (batch) parallelism 2, ..." (docs/autotune.md), or
// nothing when no stage has a knob.
std::string autotune_line(const JsonObject& pipeline, int worker, size_t p) {
  std::string knobs;
  for (const JsonObject& stage : pipeline["stages"]) {
    const JsonObject* list = stage.contains("autotune") ? &stage["autotune"] : nullptr;
    if (list == nullptr || !list->is_array()) continue;
    for (const JsonObject& k : *list)
      knobs +=
          format("%sstage %d (%s) %s %lld", knobs.empty() ? "" : ", ", stage["id"].get<int>(),
                 stage["name"].get<std::string>().c_str(), k["knob"].get<std::string>().c_str(),
                 static_cast<long long>(k["value"].get<int64_t>()));
  }
  if (knobs.empty()) return "";
  return format("worker %d pipeline %zu: autotuned %s\n", worker, p, knobs.c_str());
}

}  // namespace

std::string stage_table(const std::vector<JsonObject>& workers) {
  std::string out =
      format("%-6s %-8s %-5s %-22s %12s %14s %12s %12s %s\n", "worker", "pipeline", "stage",
             "operation", "elements", "bytes", "produce_ms", "wait_ms", "buffer");
  for (const JsonObject& w : workers) {
    if (w.is_null()) continue;
    const int worker = w["worker"].get<int>();
    const JsonObject& pipelines = w["pipelines"];
    for (size_t p = 0; p < pipelines.size(); ++p) {
      // The output stage first: the order a reader follows the data backwards in.
      const JsonObject& stages = pipelines[p]["stages"];
      for (size_t i = stages.size(); i-- > 0;) {
        const JsonObject& s = stages[i];
        std::string buffer = "-";
        if (!s["buffer"].is_null()) {
          const JsonObject& b = s["buffer"];
          buffer = format("%.1f/%lld", b["mean_fill"].get<double>(),
                          static_cast<long long>(b["capacity"].get<int64_t>()));
          // A shuffle's copies out of its oldest read buffers (docs/records.md).
          if (b.contains("copied_bytes") && b["copied_bytes"].get<int64_t>() > 0)
            buffer +=
                format(", copied %lld B", static_cast<long long>(b["copied_bytes"].get<int64_t>()));
        }
        out += format("%-6d %-8zu %-5d %-22s %12lld %14lld %12.3f %12.3f %s\n", worker, p,
                      s["id"].get<int>(), s["name"].get<std::string>().c_str(),
                      static_cast<long long>(s["elements"].get<int64_t>()),
                      static_cast<long long>(s["bytes"].get<int64_t>()), ms(s["produce_ns"]),
                      ms(s["input_wait_ns"]), buffer.c_str());
      }
    }
    const JsonObject& c = w["consumer"];
    if (!c.is_null())
      out += format(
          "worker %d: get_next waited %.3f ms, %.3f ms between calls (%.1f%% input-bound)\n",
          worker, ms(c["wait_ns"]), ms(c["between_ns"]), c["input_bound_percent"].get<double>());
    for (size_t p = 0; p < pipelines.size(); ++p) {
      const int slowest = pipelines[p]["slowest_stage"].get<int>();
      if (slowest >= 0)
        out += format("worker %d pipeline %zu: slowest stage %d (%s)\n", worker, p, slowest,
                      pipelines[p]["stages"][static_cast<size_t>(slowest)]["name"]
                          .get<std::string>()
                          .c_str());
      out += autotune_line(pipelines[p], worker, p);
    }
  }
  return out;
}

void write_trace_file(const std::string& path, const std::vector<JsonObject>& traces) {
  JsonObject events = JsonObject::array();
  int64_t dropped = 0;
  for (const JsonObject& t : traces) {
    if (t.is_null()) continue;
    for (const auto& e : t["traceEvents"]) events.push_back(e);
    dropped += t["otherData"]["dropped_events"].get<int64_t>();
  }
  JsonObject doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ns";
  doc["otherData"] = {{"schema", "dinput.trace/1"}, {"dropped_events", dropped}};
  const std::string text = doc.dump() + "\n";
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(temporary.c_str(), "wb");
  if (!f)
    throw Failure(DINPUT_UNAVAILABLE,
                  "cannot create '" + temporary + "' for the trace: " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    throw Failure(DINPUT_UNAVAILABLE, "cannot write the trace file '" + path + "': " + why);
  }
}

}  // namespace dinput_tool
