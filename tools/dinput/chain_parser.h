// Parser of the tf.data chain syntax used on the command line, e.g.
//   range(10).shuffle(4, seed=1).batch(2, drop_remainder=True)
// A pipeline is a source call followed by `.method(...)` calls. Arguments are positional or
// `keyword=value`, with Python-like literals. The parser knows nothing about which functions
// exist: that is the builder's table, so adding a function never touches the grammar.
// A call may also appear as a value, e.g. interleave(records(compression="ZSTD")): it stands
// for a function the builder applies later (here, a reader for each file name). A call value
// may go on with method calls, e.g. zip(range(3), range(3).batch(2)): a whole pipeline given
// as an argument (zip, concatenate, sample_from_datasets, choose_from_datasets).
//
// Grammar:
//   pipeline := call ('.' call)* END
//   call     := NAME '(' args ')'
//   args     := [arg (',' arg)* [',']]
//   arg      := NAME '=' value | value
//   value    := ['-'|'+'] (INT | FLOAT) | STRING | NAME ('.' NAME)* ['(' args ')' ('.' call)*]
//             | '[' [value (',' value)* [',']] ']'
//             | '(' ')' | '(' value ')' | '(' value ',' [value (',' value)* [',']] ')'
//             | '$' NAME ['(' [value (',' value)* [',']] ')']
//             | '{' [value ':' value (',' value ':' value)* [',']] '}'
// NAME covers True, False and None, which become their own value kinds. `(x)` is just x;
// `(x,)` is a one-element tuple, as in Python. `$name(...)` is a placeholder of a dataset_fn
// template (--from-function), resolved later.
#ifndef DINPUT_TOOL_CHAIN_PARSER_H_
#define DINPUT_TOOL_CHAIN_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dinput_tool {

struct Argument;
struct Call;

struct Value {
  enum class Kind {
    kInt,
    kFloat,
    kString,
    kBool,
    kNone,
    kList,
    kTuple,
    kName,
    kPlaceholder,
    kCall,
    kDict
  };

  Kind kind = Kind::kNone;
  size_t pos = 0;            // 0-based offset of the value in the pipeline text
  int64_t int_value = 0;     // kInt
  double float_value = 0;    // kFloat
  bool bool_value = false;   // kBool
  std::string text;          // kString (decoded bytes), kName (dotted), kPlaceholder, kCall (name)
  std::vector<Value> items;  // kList, kTuple, kPlaceholder (its arguments), kDict (k, v, ...)
  // kCall: the call's arguments. (std::vector may hold the still incomplete Argument since
  // C++17; Argument is complete before any member of this vector is used.)
  std::vector<Argument> args;
  // kCall: the method calls that follow it (`range(3).batch(2)`: batch(2)), in order.
  std::vector<Call> chain;
};

struct Argument {
  std::string keyword;  // empty for a positional argument
  size_t pos = 0;
  Value value;
};

struct Call {
  std::string name;
  size_t pos = 0;
  std::vector<Argument> args;
};

struct Pipeline {
  std::vector<Call> calls;  // calls[0] is the source, the rest are applied in order
};

struct ParseError {
  size_t pos = 0;
  // A complete sentence without the status name, e.g.
  // "syntax error at position 3: expected '(', found end of input".
  std::string message;
};

// Nesting of brackets deeper than this is rejected, so that hostile input cannot exhaust
// the stack of the recursive descent.
constexpr int kMaxNestingDepth = 64;

// Returns true and fills *out, or returns false and fills *error.
bool parse_pipeline(const std::string& text, Pipeline* out, ParseError* error);

// Human-readable kind of a value for error messages ("an integer", "a string", ...).
const char* describe_kind(Value::Kind kind);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_CHAIN_PARSER_H_
