// Fuzz target of the `dinput` tool's chain-syntax parser (tools/dinput/chain_parser.h).
// Besides "no crash, no hang, no leak", it checks what the parser's header promises:
//   - on success: at least one call, and every position inside the text;
//   - on failure: a non-empty message on one printable line, and a position within the text
//     (or at its end);
//   - nesting deeper than kMaxNestingDepth is rejected (so the recursion is bounded).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "chain_parser.h"

namespace {

using dinput_tool::Value;

[[noreturn]] void fail(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "chain_parser_fuzz: invariant violated: %s\ninput (%zu bytes)\n",
               what.c_str(), text.size());
  std::abort();
}

void check_value(const Value& v, const std::string& text, int depth) {
  if (depth > dinput_tool::kMaxNestingDepth + 1)
    fail("nesting deeper than kMaxNestingDepth was accepted", text);
  if (v.pos > text.size()) fail("a value position past the end of the text", text);
  if (!dinput_tool::describe_kind(v.kind)) fail("describe_kind returned NULL", text);
  for (const Value& item : v.items) check_value(item, text, depth + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  dinput_tool::Pipeline pipeline;
  dinput_tool::ParseError error;
  if (dinput_tool::parse_pipeline(text, &pipeline, &error)) {
    if (pipeline.calls.empty()) fail("success without a call", text);
    for (const auto& call : pipeline.calls) {
      if (call.name.empty()) fail("a call without a name", text);
      if (call.pos > text.size()) fail("a call position past the end of the text", text);
      for (const auto& arg : call.args) {
        if (arg.pos > text.size()) fail("an argument position past the end of the text", text);
        check_value(arg.value, text, 1);
      }
    }
  } else {
    if (error.message.empty()) fail("a failure without a message", text);
    if (error.pos > text.size()) fail("an error position past the end of the text", text);
    for (char c : error.message) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f)
        fail("an error message that is not one printable line: " + error.message, text);
    }
  }
  return 0;
}
