#include "distribute/state_json.h"

#include <nlohmann/json.hpp>

#include "data/state.h"

namespace dinput {

namespace {

using Json = nlohmann::ordered_json;

constexpr uint64_t kHeaderBytes = 24;

// The operation's name and size of a section, without reading its fields (their layout is
// the operation's).
Json describe_section(StateReader& r) {
  Json out;
  out["operation"] = r.bytes("a section's operation name");
  const std::string body = r.bytes("a section's length");
  out["bytes"] = body.size();
  return out;
}

// The payload of a dataset iterator's state (after its container's header).
Json describe_plain(StateReader& r) {
  Json out;
  out["kind"] = "iterator";
  const uint64_t count = r.u64("the number of operations");
  Json pipeline = Json::array();
  for (uint64_t i = 0; i < count; ++i) pipeline.push_back(r.bytes("an operation's description"));
  out["pipeline"] = pipeline;
  const uint64_t seeds = r.u64_in("the number of random seeds", 0, count);
  Json random = Json::array();
  for (uint64_t k = 0; k < seeds; ++k) {
    Json seed;
    seed["operation"] = r.u64_in("an operation index", 0, count ? count - 1 : 0);
    seed["seed"] = r.u64("a random seed");
    random.push_back(seed);
  }
  out["random_seeds"] = random;
  out["ended"] = r.flag("ended");
  if (!out["ended"].get<bool>()) out["root"] = describe_section(r);
  r.finish();
  return out;
}

Json describe_container(std::string_view state, bool nested);

// A worker's part of a distributed state.
Json describe_part(const std::string& part) {
  StateReader r(part, 0, "dist_iterator worker");
  Json out;
  // 2: opened, reading what a job of another shape left (FILE sharding, elastic_file.cc).
  const uint64_t opened = r.u64_in("pipelines opened", 0, 2);
  out["opened"] = opened > 0;
  if (opened == 2) out["elastic"] = true;
  if (!opened) {
    r.finish();
    return out;
  }
  const uint64_t n = r.u64_in("the number of pipelines", 0, part.size());
  Json pipelines = Json::array();
  for (uint64_t i = 0; i < n; ++i) {
    Json p;
    p["ended"] = r.flag("pipeline ended");
    if (!p["ended"].get<bool>()) {
      p["state"] = describe_container(r.bytes("a pipeline's state"), true);
      p["split_position_bytes"] = r.bytes("a splitter's position").size();
    }
    pipelines.push_back(p);
  }
  out["pipelines"] = pipelines;
  r.finish();
  return out;
}

Json describe_container(std::string_view state, bool nested) {
  std::string_view payload = open_state(state);
  StateReader r(payload, kHeaderBytes, "pipeline");
  StateReader peek = r;
  const uint64_t count = peek.u64("the number of operations");
  const std::string first = count == 1 ? peek.bytes("an operation's description") : "";
  Json out;
  if (nested || first.rfind("dist_iterator(", 0) != 0) {
    out = describe_plain(r);
  } else {
    r = peek;
    out["kind"] = "distributed_iterator";
    out["job"] = first;
    const uint64_t W = r.u64_in("the number of workers", 1, 65536);
    out["workers"] = W;
    out["replicas_per_worker"] = r.u64("the replicas per worker");
    out["policy"] = r.bytes("the sharding policy");
    const uint64_t n = r.u64_in("the number of pipelines", 0, payload.size());
    Json seeds = Json::array();
    for (uint64_t i = 0; i < n; ++i)
      seeds.push_back(r.flag("a pipeline has an agreed seed") ? Json(r.u64("an agreed seed"))
                                                              : Json(nullptr));
    out["agreed_seeds"] = seeds;
    out["step"] = r.u64("step");
    out["ended"] = r.flag("ended");
    if (!out["ended"].get<bool>()) {
      Json parts = Json::array();
      for (uint64_t k = 0; k < W; ++k) {
        Json part = {{"worker", k}};
        part.update(describe_part(r.bytes("a worker's part")));
        parts.push_back(part);
      }
      out["parts"] = parts;
    }
    r.finish();
  }
  Json head = {{"version", 1}, {"bytes", state.size()}};
  head.update(out);
  return head;
}

}  // namespace

std::string describe_state(std::string_view state) {
  return describe_container(state, false).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace dinput
