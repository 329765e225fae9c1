// Per-stage statistics and traces in the tool (docs/statistics.md): run --stats adds each
// worker's stages to its last line, bench --stats prints a table of them, bench --trace FILE
// writes the workers' traces into one Trace Event JSON file.
#ifndef DINPUT_TOOL_STAGE_REPORT_H_
#define DINPUT_TOOL_STAGE_REPORT_H_

#include <string>
#include <vector>

#include "dinput.h"
#include "json_format.h"

namespace dinput_tool {

// The most trace events bench --trace keeps per pipeline (and for the steps).
constexpr int64_t kTraceEvents = 1000000;

// This worker's statistics (dinput_dist_iterator_statistics, schema
// "dinput.dist_statistics/1"), parsed.
JsonObject worker_statistics(dinput_dist_iterator_t* iterator);

// This worker's trace (dinput_dist_iterator_trace), parsed.
JsonObject worker_trace(const dinput_dist_iterator_t* iterator);

// One line per stage of every worker's pipelines, and one per worker with its get_next
// waits and slowest stage: bench --stats.
std::string stage_table(const std::vector<JsonObject>& workers);

// The workers' traces as one Trace Event JSON document, written to `path` whole
// (UNAVAILABLE naming the file when it cannot be).
void write_trace_file(const std::string& path, const std::vector<JsonObject>& traces);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_STAGE_REPORT_H_
