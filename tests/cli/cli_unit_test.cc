// Unit tests of the dinput tool's pieces that do not need the library: the
// chain-syntax parser and the JSON number/string formatting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "chain_parser.h"
#include "json_format.h"
#include "progress.h"
#include "suggest.h"

namespace dinput_tool {
namespace {

Pipeline must_parse(const std::string& text) {
  Pipeline pipeline;
  ParseError error;
  EXPECT_TRUE(parse_pipeline(text, &pipeline, &error)) << text << ": " << error.message;
  return pipeline;
}

std::string error_of(const std::string& text) {
  Pipeline pipeline;
  ParseError error;
  EXPECT_FALSE(parse_pipeline(text, &pipeline, &error)) << text;
  return error.message;
}

TEST(ChainParser, SourceAndMethods) {
  Pipeline p = must_parse("range(8).shuffle(4, seed=1).batch(2, drop_remainder=True)");
  ASSERT_EQ(p.calls.size(), 3u);
  EXPECT_EQ(p.calls[0].name, "range");
  EXPECT_EQ(p.calls[0].pos, 0u);
  ASSERT_EQ(p.calls[0].args.size(), 1u);
  EXPECT_EQ(p.calls[0].args[0].value.kind, Value::Kind::kInt);
  EXPECT_EQ(p.calls[0].args[0].value.int_value, 8);
  EXPECT_EQ(p.calls[1].name, "shuffle");
  EXPECT_EQ(p.calls[1].pos, 9u);
  ASSERT_EQ(p.calls[1].args.size(), 2u);
  EXPECT_EQ(p.calls[1].args[1].keyword, "seed");
  EXPECT_EQ(p.calls[1].args[1].value.int_value, 1);
  EXPECT_EQ(p.calls[2].args[1].keyword, "drop_remainder");
  EXPECT_EQ(p.calls[2].args[1].value.kind, Value::Kind::kBool);
  EXPECT_TRUE(p.calls[2].args[1].value.bool_value);
}

TEST(ChainParser, Dicts) {
  Pipeline p = must_parse(
      "x().parse_example({\"id\": FixedLenFeature([], int64), 'b': VarLenFeature(bytes),})");
  const Value& d = p.calls[1].args[0].value;
  ASSERT_EQ(d.kind, Value::Kind::kDict);
  ASSERT_EQ(d.items.size(), 4u);  // key, value, key, value
  EXPECT_EQ(d.items[0].text, "id");
  EXPECT_EQ(d.items[1].kind, Value::Kind::kCall);
  EXPECT_EQ(d.items[1].text, "FixedLenFeature");
  EXPECT_EQ(d.items[2].text, "b");
  EXPECT_EQ(must_parse("x({})").calls[0].args[0].value.items.size(), 0u);
  Pipeline out;
  ParseError error;
  EXPECT_FALSE(parse_pipeline("x({1 2})", &out, &error));
  EXPECT_NE(error.message.find("expected ':'"), std::string::npos) << error.message;
  EXPECT_FALSE(parse_pipeline("x({1: 2)", &out, &error));
}

TEST(ChainParser, WhitespaceAndTrailingCommas) {
  Pipeline p = must_parse("  range( 1 , 5 , ) \n . batch ( 2 , )  ");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].args.size(), 2u);
  EXPECT_EQ(p.calls[1].args.size(), 1u);
}

TEST(ChainParser, Numbers) {
  Pipeline p = must_parse(
      "f(-3, +4, 1_000, 2.5, -1e3, .5, 5., "
      "9223372036854775807, -9223372036854775808)");
  const auto& a = p.calls[0].args;
  ASSERT_EQ(a.size(), 9u);
  EXPECT_EQ(a[0].value.int_value, -3);
  EXPECT_EQ(a[1].value.int_value, 4);
  EXPECT_EQ(a[2].value.int_value, 1000);
  EXPECT_EQ(a[3].value.kind, Value::Kind::kFloat);
  EXPECT_DOUBLE_EQ(a[3].value.float_value, 2.5);
  EXPECT_DOUBLE_EQ(a[4].value.float_value, -1000.0);
  EXPECT_DOUBLE_EQ(a[5].value.float_value, 0.5);
  EXPECT_DOUBLE_EQ(a[6].value.float_value, 5.0);
  EXPECT_EQ(a[7].value.int_value, INT64_MAX);
  EXPECT_EQ(a[8].value.int_value, INT64_MIN);
}

TEST(ChainParser, IntegerOverflow) {
  EXPECT_EQ(error_of("range(9223372036854775808)"),
            "integer literal '9223372036854775808' at position 6 is out of the "
            "int64 range");
  EXPECT_EQ(error_of("range(-9223372036854775809)"),
            "integer literal '-9223372036854775809' at position 6 is out of "
            "the int64 range");
}

// A float literal is a float32 value: one beyond the float32 range would silently become
// an infinity, so it is refused, naming the literal as written.
TEST(ChainParser, FloatLiteralBeyondFloat32IsRejected) {
  EXPECT_EQ(error_of("from_tensors([1e39])"),
            "float literal '1e39' at position 14 is out of the float32 range "
            "(largest magnitude about 3.4028235e38)");
  EXPECT_EQ(error_of("from_tensors(-1e400)"),
            "float literal '-1e400' at position 13 is out of the float32 range "
            "(largest magnitude about 3.4028235e38)");
  must_parse("from_tensors(3.4028235e38)");
  must_parse("from_tensors([-1e-50])");  // underflows to 0, as tf.constant does
}

TEST(ChainParser, Strings) {
  Pipeline p = must_parse(R"(f('a"b', "c'd", "\n\t\\\x41\101", b"\xff", "\u00e9", "x" 'y'))");
  const auto& a = p.calls[0].args;
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[0].value.text, "a\"b");
  EXPECT_EQ(a[1].value.text, "c'd");
  EXPECT_EQ(a[2].value.text, "\n\t\\AA");
  EXPECT_EQ(a[3].value.text, "\xff");
  EXPECT_EQ(a[4].value.text, "\xc3\xa9");
  EXPECT_EQ(a[5].value.text, "xy");
}

TEST(ChainParser, ListsTuplesAndGrouping) {
  Pipeline p = must_parse("from_tensors(([1.],[1.])).f((1,), (2), (), [[1, 2], [3, 4]], [])");
  const Value& pair = p.calls[0].args[0].value;
  EXPECT_EQ(pair.kind, Value::Kind::kTuple);
  ASSERT_EQ(pair.items.size(), 2u);
  EXPECT_EQ(pair.items[0].kind, Value::Kind::kList);
  EXPECT_EQ(pair.items[0].items[0].kind, Value::Kind::kFloat);
  const auto& a = p.calls[1].args;
  EXPECT_EQ(a[0].value.kind, Value::Kind::kTuple);
  EXPECT_EQ(a[0].value.items.size(), 1u);
  EXPECT_EQ(a[1].value.kind, Value::Kind::kInt);  // (2) is only grouping
  EXPECT_EQ(a[1].value.pos, p.calls[1].args[1].pos);
  EXPECT_EQ(a[2].value.kind, Value::Kind::kTuple);
  EXPECT_TRUE(a[2].value.items.empty());
  EXPECT_EQ(a[3].value.items[1].items[0].int_value, 3);
  EXPECT_EQ(a[4].value.kind, Value::Kind::kList);
}

TEST(ChainParser, NamesAndPlaceholders) {
  Pipeline p = must_parse(
      "range(8).shard(SHARD_HINT, SHARD_HINT).prefetch(tf.data.AUTOTUNE)"
      ".with_options(auto_shard_policy=AutoShardPolicy.OFF).batch($per_replica_"
      "batch_size(64))"
      ".take($num_input_pipelines).repeat(None)");
  EXPECT_EQ(p.calls[1].args[0].value.kind, Value::Kind::kName);
  EXPECT_EQ(p.calls[1].args[0].value.text, "SHARD_HINT");
  EXPECT_EQ(p.calls[2].args[0].value.text, "tf.data.AUTOTUNE");
  EXPECT_EQ(p.calls[3].args[0].value.text, "AutoShardPolicy.OFF");
  const Value& g = p.calls[4].args[0].value;
  EXPECT_EQ(g.kind, Value::Kind::kPlaceholder);
  EXPECT_EQ(g.text, "per_replica_batch_size");
  ASSERT_EQ(g.items.size(), 1u);
  EXPECT_EQ(g.items[0].int_value, 64);
  EXPECT_EQ(p.calls[5].args[0].value.kind, Value::Kind::kPlaceholder);
  EXPECT_TRUE(p.calls[5].args[0].value.items.empty());
  EXPECT_EQ(p.calls[6].args[0].value.kind, Value::Kind::kNone);
}

TEST(ChainParser, CallsAsValues) {
  Pipeline p = must_parse(
      "list_files(\"*.rec\").interleave(records(compression=\"ZSTD\"), cycle_length=2)"
      ".interleave(text_lines).interleave(fixed_length_records(16, footer_bytes=1))"
      ".interleave(tf.f())");
  ASSERT_EQ(p.calls.size(), 5u);
  const Value& reader = p.calls[1].args[0].value;
  EXPECT_EQ(reader.kind, Value::Kind::kCall);
  EXPECT_EQ(reader.text, "records");
  EXPECT_EQ(reader.pos, 31u);
  ASSERT_EQ(reader.args.size(), 1u);
  EXPECT_EQ(reader.args[0].keyword, "compression");
  EXPECT_EQ(reader.args[0].value.text, "ZSTD");
  EXPECT_EQ(p.calls[1].args[1].keyword, "cycle_length");
  EXPECT_EQ(p.calls[2].args[0].value.kind, Value::Kind::kName);
  const Value& fixed = p.calls[3].args[0].value;
  EXPECT_EQ(fixed.kind, Value::Kind::kCall);
  ASSERT_EQ(fixed.args.size(), 2u);
  EXPECT_TRUE(fixed.args[0].keyword.empty());
  EXPECT_EQ(fixed.args[0].value.int_value, 16);
  EXPECT_EQ(fixed.args[1].keyword, "footer_bytes");
  const Value& dotted = p.calls[4].args[0].value;
  EXPECT_EQ(dotted.kind, Value::Kind::kCall);
  EXPECT_EQ(dotted.text, "tf.f");
  EXPECT_TRUE(dotted.args.empty());
  EXPECT_STREQ(describe_kind(Value::Kind::kCall), "a call");
}

TEST(ChainParser, CallValueErrors) {
  EXPECT_EQ(error_of("f(g(1)"),
            "syntax error at position 6: expected ',' or ')', found end of input");
  EXPECT_EQ(error_of("f(g(a=1, 2))"),
            "syntax error at position 9: expected a keyword argument (positional arguments "
            "cannot follow keyword arguments) or ')', found '2'");
  std::string deep = "f(";
  for (int i = 0; i < 100000; ++i) deep += "g(";
  // Each "g(" is two characters; the '(' of the first call too deep is reported.
  const size_t too_deep = 2 + 2 * kMaxNestingDepth + 1;
  EXPECT_EQ(error_of(deep), "syntax error at position " + std::to_string(too_deep) +
                                ": expected at most " + std::to_string(kMaxNestingDepth) +
                                " nested brackets, found '('");
}

// A call value may go on with method calls: a pipeline given as an argument.
TEST(ChainParser, PipelinesAsValues) {
  Pipeline p = must_parse(
      "zip(range(3), range(9).batch(2, drop_remainder=True).take(2))"
      ".concatenate(records(\"a\").skip(1))");
  ASSERT_EQ(p.calls.size(), 2u);
  const Value& plain = p.calls[0].args[0].value;
  EXPECT_EQ(plain.kind, Value::Kind::kCall);
  EXPECT_TRUE(plain.chain.empty());
  const Value& chained = p.calls[0].args[1].value;
  EXPECT_EQ(chained.text, "range");
  ASSERT_EQ(chained.chain.size(), 2u);
  EXPECT_EQ(chained.chain[0].name, "batch");
  EXPECT_EQ(chained.chain[0].pos, 23u);
  ASSERT_EQ(chained.chain[0].args.size(), 2u);
  EXPECT_EQ(chained.chain[0].args[1].keyword, "drop_remainder");
  EXPECT_EQ(chained.chain[1].name, "take");
  ASSERT_EQ(p.calls[1].args[0].value.chain.size(), 1u);
  EXPECT_EQ(p.calls[1].args[0].value.chain[0].name, "skip");
  EXPECT_EQ(error_of("zip(range(3).batch)"),
            "syntax error at position 18: expected '(', found ')'");
  EXPECT_EQ(error_of("zip(range(3).)"),
            "syntax error at position 13: expected a function name after '.', found ')'");
}

TEST(ChainParser, SyntaxErrorsNameExpectedAndFound) {
  EXPECT_EQ(error_of(""),
            "syntax error at position 0: expected a function "
            "name, found end of input");
  EXPECT_EQ(error_of("range(6).batch(4"),
            "syntax error at position 16: expected ',' or ')', found end of input");
  EXPECT_EQ(error_of("range(6)..batch(4)"),
            "syntax error at position 9: expected a function name, found '.'");
  EXPECT_EQ(error_of("range(6) batch(4)"),
            "syntax error at position 9: expected '.' or end of input, found "
            "'batch'");
  EXPECT_EQ(error_of("range(6)).batch(2)"),
            "syntax error at position 8: expected '.' or end of input, found ')'");
  EXPECT_EQ(error_of("range(6).batch(4) @"),
            "syntax error at position 18: expected '.' or end of input, found '@'");
  EXPECT_EQ(error_of("range"), "syntax error at position 5: expected '(', found end of input");
  EXPECT_EQ(error_of("range(,)"),
            "syntax error at position 6: expected an argument or ')', found ','");
  EXPECT_EQ(error_of("f(x=)"), "syntax error at position 4: expected a value, found ')'");
  EXPECT_EQ(error_of("f([1,2)"), "syntax error at position 6: expected ',' or ']', found ')'");
  EXPECT_EQ(error_of("f(-x)"), "syntax error at position 3: expected a number, found 'x'");
  EXPECT_EQ(error_of("text_lines(\"abc"),
            "syntax error at position 15: expected closing \", found end of input");
  EXPECT_EQ(error_of("f(a=1, 2)"),
            "syntax error at position 7: expected a keyword argument "
            "(positional arguments "
            "cannot follow keyword arguments) or ')', found '2'");
  EXPECT_EQ(error_of("f(\"\\x4\")"),
            "syntax error at position 3: expected two "
            "hex digits after \\x, found '\"'");
  EXPECT_EQ(error_of("f(12abc)"),
            "syntax error at position 4: expected ',' or "
            "a closing bracket after a number, "
            "found 'a'");
  EXPECT_EQ(error_of("f(\xc3\xa9)"),
            "syntax error at position 2: expected an argument or ')', "
            "found byte 0xC3");
  EXPECT_EQ(error_of("f($)"),
            "syntax error at position 3: expected a placeholder name after "
            "'$', found ')'");
}

TEST(ChainParser, EarlierSyntaxErrorWinsOverLaterLexicalError) {
  EXPECT_EQ(error_of("range(6) x(\"unterminated"),
            "syntax error at position 9: expected '.' or end of input, found 'x'");
}

TEST(ChainParser, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "f(" + std::string(100000, '[') + ")";
  std::string message = error_of(deep);
  EXPECT_EQ(message, "syntax error at position " + std::to_string(2 + kMaxNestingDepth) +
                         ": expected at most " + std::to_string(kMaxNestingDepth) +
                         " nested brackets, found '['");
}

TEST(ChainParser, GarbageNeverCrashes) {
  const char* inputs[] = {"(",
                          ")",
                          "[[",
                          "range((",
                          "f(1,,2)",
                          "f(\"\\",
                          "f('\\u12",
                          "f(b'x",
                          "f(1e)",
                          "f(1e+)",
                          "....",
                          "f()()",
                          "f().g",
                          "$x",
                          "f(--1)",
                          "f(\x01)",
                          "f(\"\n\")",
                          "f(a.)",
                          "f(a..b)",
                          "f(1_)",
                          "f(1__0)",
                          "f(0x10)",
                          "f('\\U00110000')",
                          "f(\"\\777\")"};
  for (const char* input : inputs) {
    Pipeline pipeline;
    ParseError error;
    if (!parse_pipeline(input, &pipeline, &error)) {
      EXPECT_EQ(error.message.find('\n'), std::string::npos) << input;
      EXPECT_FALSE(error.message.empty()) << input;
    }
  }
}

std::string double_text(double v) {
  std::string s;
  append_double(&s, v);
  return s;
}
std::string float_text(float v) {
  std::string s;
  append_float32(&s, v);
  return s;
}

TEST(JsonFormat, FloatsLikePythonRepr) {
  EXPECT_EQ(double_text(1.0), "1.0");
  EXPECT_EQ(double_text(0.5), "0.5");
  EXPECT_EQ(double_text(-0.0), "-0.0");
  EXPECT_EQ(double_text(0.0), "0.0");
  EXPECT_EQ(double_text(123456.0), "123456.0");
  EXPECT_EQ(double_text(1e15), "1000000000000000.0");
  EXPECT_EQ(double_text(1e16), "1e+16");
  EXPECT_EQ(double_text(1.5e16), "1.5e+16");
  EXPECT_EQ(double_text(0.0001), "0.0001");
  EXPECT_EQ(double_text(0.00001), "1e-05");
  EXPECT_EQ(double_text(-2.5e-5), "-2.5e-05");
  EXPECT_EQ(double_text(0.1), "0.1");
  EXPECT_EQ(double_text(1e300), "1e+300");
  // Non-finite values are JSON strings, so that strict JSON parsers read every line.
  EXPECT_EQ(double_text(NAN), "\"NaN\"");
  EXPECT_EQ(double_text(INFINITY), "\"Infinity\"");
  EXPECT_EQ(double_text(-INFINITY), "\"-Infinity\"");
  EXPECT_EQ(float_text(NAN), "\"NaN\"");
  EXPECT_EQ(float_text(-INFINITY), "\"-Infinity\"");
  // float32 uses the shortest text that reads back as the same float32.
  EXPECT_EQ(float_text(0.1f), "0.1");
  EXPECT_EQ(float_text(1.0f), "1.0");
  EXPECT_EQ(float_text(16777216.0f), "16777216.0");
  EXPECT_EQ(float_text(1e16f), "1e+16");
  EXPECT_EQ(float_text(3.4028235e38f), "3.4028235e+38");
}

TEST(JsonFormat, HalfPrecision) {
  std::string s;
  append_float16(&s, 0x3C00);  // 1.0
  EXPECT_EQ(s, "1.0");
  s.clear();
  append_float16(&s, 0x2E66);  // nearest half to 0.1
  EXPECT_EQ(s, "0.1");
  s.clear();
  append_float16(&s, 0x7BFF);  // largest half, 65504, shortest as numpy prints it
  EXPECT_EQ(s, "65500.0");
  s.clear();
  append_float16(&s, 0x0001);  // smallest subnormal, 2^-24
  EXPECT_EQ(s, "6e-08");
  s.clear();
  append_float16(&s, 0xFC00);
  EXPECT_EQ(s, "\"-Infinity\"");
  s.clear();
  append_bfloat16(&s, 0x3F80);  // 1.0
  EXPECT_EQ(s, "1.0");
  s.clear();
  append_bfloat16(&s, 0x3DCD);  // nearest bfloat16 to 0.1
  EXPECT_EQ(s, "0.1");
}

std::string json_text(const std::string& bytes) {
  std::string s;
  append_json_string(&s, bytes);
  return s;
}

TEST(JsonFormat, Strings) {
  EXPECT_EQ(json_text("abc"), "\"abc\"");
  EXPECT_EQ(json_text("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_text("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(json_text(std::string("\x01\0", 2)), "\"\\u0001\\u0000\"");
  EXPECT_EQ(json_text("\xc3\xa9"), "\"\xc3\xa9\"");  // valid UTF-8 is kept
  EXPECT_EQ(json_text("\xe2\x82\xac"), "\"\xe2\x82\xac\"");
  EXPECT_EQ(json_text("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
  // Invalid bytes become lone surrogates \udcXX (Python's surrogateescape).
  EXPECT_EQ(json_text("\xff"), "\"\\udcff\"");
  EXPECT_EQ(json_text("a\xc3"), "\"a\\udcc3\"");           // truncated sequence
  EXPECT_EQ(json_text("\xc0\xaf"), "\"\\udcc0\\udcaf\"");  // overlong
  EXPECT_EQ(json_text("\xed\xa0\x80"),
            "\"\\udced\\udca0\\udc80\"");  // encoded surrogate
}

TEST(JsonFormat, DumpJsonWritesBytesMembersWithSurrogateEscapes) {
  JsonObject line;
  line["file"] = nullptr;
  line["note"] = "tab\there \"q\" \x01";  // escaped by nlohmann-json
  line["smallest"] = nullptr;             // a real null stays null
  line["n"] = 3;
  EXPECT_EQ(dump_json(line, {{"file", "a\xff\nb"}}),
            "{\"file\":\"a\\udcff\\nb\",\"note\":\"tab\\there \\\"q\\\" "
            "\\u0001\",\"smallest\":null,\"n\":3}");
  EXPECT_EQ(dump_json(line),
            "{\"file\":null,\"note\":\"tab\\there \\\"q\\\" \\u0001\",\"smallest\":null,\"n\":3}");
}

TEST(Suggest, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("shuffle", "shuffle"), 0u);
  EXPECT_EQ(edit_distance("shufle", "shuffle"), 1u);    // a deletion
  EXPECT_EQ(edit_distance("shufflle", "shuffle"), 1u);  // an insertion
  EXPECT_EQ(edit_distance("bacth", "batch"), 1u);       // two neighbours swapped
  EXPECT_EQ(edit_distance("repaet", "repeat"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Suggest, OnlyCloseNamesAreSuggested) {
  const std::vector<std::string> names = {"batch", "shuffle", "shard", "skip", "take", "map"};
  EXPECT_EQ(did_you_mean("shufle", names), " (did you mean 'shuffle'?)");
  EXPECT_EQ(did_you_mean("bacth", names), " (did you mean 'batch'?)");
  EXPECT_EQ(did_you_mean("tkae", names), " (did you mean 'take'?)");
  EXPECT_EQ(did_you_mean("frobnicate", names), "");  // nothing close
  EXPECT_EQ(did_you_mean("foo", names), "");         // short: one edit at most
  EXPECT_EQ(did_you_mean("x", names), "");
  EXPECT_EQ(did_you_mean("batch", names), "");  // an exact name is not misspelt
  EXPECT_EQ(closest_name("--replics", {"--replicas", "--devices"}), "--replicas");
}

TEST(Progress, PercentAndTimeLeftWhenTheStepsAreKnown) {
  Progress p;
  p.steps = 250;
  p.rows = 250;
  p.bytes = 2000000;
  p.seconds = 2.5;
  p.total_steps = 1000;
  EXPECT_EQ(progress_text(p),
            "bench: 250/1000 steps (25.0%), ETA 8s, 250 rows, 2.0 MB, 100 rows/s");
  p.total_steps = -1;
  EXPECT_EQ(progress_text(p), "bench: 250 steps, 250 rows, 2.0 MB, 100 rows/s");
  p.total_steps = 100;  // the data outlasting the estimate never shows more than 100%
  EXPECT_EQ(progress_text(p),
            "bench: 250/100 steps (100.0%), ETA 0s, 250 rows, 2.0 MB, 100 rows/s");
  p = Progress{};
  p.total_steps = 10;
  EXPECT_EQ(progress_text(p), "bench: 0/10 steps (0.0%), ETA unknown, 0 rows, 0.0 MB, 0 rows/s");
  EXPECT_EQ(duration_text(42.4), "42s");
  EXPECT_EQ(duration_text(187), "3m07s");
  EXPECT_EQ(duration_text(7500), "2h05m");
}

}  // namespace
}  // namespace dinput_tool
