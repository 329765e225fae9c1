#include "chain_parser.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

namespace dinput_tool {

namespace {

struct Token {
  // kInvalid: a character that starts no token; kError: a malformed token (its message is
  // in `text`). Both end the token stream.
  enum class Kind { kName, kInt, kFloat, kString, kPunct, kInvalid, kEnd, kError };
  Kind kind = Kind::kEnd;
  size_t pos = 0;
  std::string source;  // the token's text as written (for messages and numbers)
  std::string text;    // kName: the name; kString: the decoded bytes; kError: the message
  char punct = 0;      // kPunct
};

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string syntax_error(size_t pos, const std::string& expected, const std::string& found) {
  return "syntax error at position " + std::to_string(pos) + ": expected " + expected + ", found " +
         found;
}

// How a character of the input is shown in a message: printable ASCII quoted, anything else
// by its byte value, so that a message is always one printable line.
std::string describe_char(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char buf[32];
  std::snprintf(buf, sizeof buf, "byte 0x%02X", u);
  return buf;
}

std::string quoted(const std::string& source) {
  constexpr size_t kMaxShown = 32;
  std::string shown;
  for (char c : source.substr(0, kMaxShown)) {
    unsigned char u = static_cast<unsigned char>(c);
    shown += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (source.size() > kMaxShown) shown += "...";
  return "'" + shown + "'";
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case Token::Kind::kEnd:
      return "end of input";
    case Token::Kind::kString:
      return "a string";
    case Token::Kind::kInvalid:
      return describe_char(token.source[0]);
    default:
      return quoted(token.source);
  }
}

void append_utf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Splits the whole text into tokens. A lexical error becomes a final kError token rather
// than failing at once, so that an earlier syntax error is still reported first.
class Lexer {
 public:
  explicit Lexer(const std::string& text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    for (;;) {
      Token token = next_token();
      Token::Kind kind = token.kind;
      tokens.push_back(std::move(token));
      if (kind == Token::Kind::kEnd || kind == Token::Kind::kError ||
          kind == Token::Kind::kInvalid) {
        return tokens;
      }
    }
  }

 private:
  char at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  Token error(size_t pos, std::string message) {
    Token token;
    token.kind = Token::Kind::kError;
    token.pos = pos;
    token.text = std::move(message);
    return token;
  }

  Token next_token() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
    Token token;
    token.pos = pos_;
    if (pos_ >= text_.size()) return token;  // kEnd
    char c = text_[pos_];
    // A `b` or `B` right before a quote is a Python bytes prefix, not a name.
    if ((c == 'b' || c == 'B') && (at(pos_ + 1) == '\'' || at(pos_ + 1) == '"')) {
      ++pos_;
      return lex_string(token.pos, /*bytes_literal=*/true);
    }
    if (is_name_start(c)) {
      size_t start = pos_;
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      token.kind = Token::Kind::kName;
      token.source = text_.substr(start, pos_ - start);
      token.text = token.source;
      return token;
    }
    if (is_digit(c) || (c == '.' && is_digit(at(pos_ + 1)))) return lex_number();
    if (c == '\'' || c == '"') return lex_string(token.pos, /*bytes_literal=*/false);
    static const std::string kPunct = "()[],.=-+${}:";
    if (kPunct.find(c) != std::string::npos) {
      ++pos_;
      token.kind = Token::Kind::kPunct;
      token.punct = c;
      token.source = std::string(1, c);
      return token;
    }
    token.kind = Token::Kind::kInvalid;
    token.source = std::string(1, c);
    return token;
  }

  // Python number syntax: digits with optional `_` separators, an optional fraction and
  // exponent. Any of '.', 'e' makes it a float.
  Token lex_number() {
    Token token;
    token.pos = pos_;
    size_t start = pos_;
    bool is_float = false;
    auto digits = [&]() {
      while (is_digit(at(pos_)) || (at(pos_) == '_' && is_digit(at(pos_ + 1)) && pos_ > start &&
                                    is_digit(at(pos_ - 1)))) {
        ++pos_;
      }
    };
    digits();
    if (at(pos_) == '.') {
      is_float = true;
      ++pos_;
      digits();
    }
    if (at(pos_) == 'e' || at(pos_) == 'E') {
      size_t exp = pos_ + 1;
      if (at(exp) == '+' || at(exp) == '-') ++exp;
      if (is_digit(at(exp))) {
        is_float = true;
        pos_ = exp;
        digits();
      }
    }
    token.kind = is_float ? Token::Kind::kFloat : Token::Kind::kInt;
    token.source = text_.substr(start, pos_ - start);
    for (char ch : token.source) {
      if (ch != '_') token.text.push_back(ch);
    }
    if (is_name_char(at(pos_))) {
      // "12abc" is not a number followed by a name in Python either.
      return error(pos_, syntax_error(pos_, "',' or a closing bracket after a number",
                                      describe_char(at(pos_))));
    }
    return token;
  }

  Token lex_string(size_t token_pos, bool bytes_literal) {
    Token token;
    token.kind = Token::Kind::kString;
    token.pos = token_pos;
    char quote = text_[pos_++];
    for (;;) {
      if (pos_ >= text_.size()) {
        return error(pos_, syntax_error(pos_, std::string("closing ") + quote, "end of input"));
      }
      char c = text_[pos_];
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c == '\n') {
        return error(pos_, syntax_error(pos_, std::string("closing ") + quote, "end of line"));
      }
      if (c != '\\') {
        token.text.push_back(c);
        ++pos_;
        continue;
      }
      size_t escape_pos = pos_;
      char e = at(pos_ + 1);
      pos_ += 2;
      switch (e) {
        case '\\':
          token.text.push_back('\\');
          break;
        case '\'':
          token.text.push_back('\'');
          break;
        case '"':
          token.text.push_back('"');
          break;
        case 'n':
          token.text.push_back('\n');
          break;
        case 't':
          token.text.push_back('\t');
          break;
        case 'r':
          token.text.push_back('\r');
          break;
        case 'a':
          token.text.push_back('\a');
          break;
        case 'b':
          token.text.push_back('\b');
          break;
        case 'f':
          token.text.push_back('\f');
          break;
        case 'v':
          token.text.push_back('\v');
          break;
        case '\n':
          break;  // line continuation
        case '\0':
          if (escape_pos + 1 >= text_.size()) {
            return error(
                escape_pos + 1,
                syntax_error(escape_pos + 1, std::string("closing ") + quote, "end of input"));
          }
          token.text.push_back('\\');
          token.text.push_back('\0');
          break;
        case 'x': {
          int hi = hex_value(at(pos_)), lo = hex_value(at(pos_ + 1));
          if (hi < 0 || lo < 0) {
            size_t bad = hi < 0 ? pos_ : pos_ + 1;
            return error(escape_pos, syntax_error(escape_pos, "two hex digits after \\x",
                                                  bad < text_.size() ? describe_char(at(bad))
                                                                     : "end of input"));
          }
          token.text.push_back(static_cast<char>(hi * 16 + lo));
          pos_ += 2;
          break;
        }
        case 'u':
        case 'U': {
          if (bytes_literal) {  // as in Python, \u means nothing in a bytes literal
            token.text.push_back('\\');
            token.text.push_back(e);
            break;
          }
          int count = e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int i = 0; i < count; ++i) {
            int v = hex_value(at(pos_ + i));
            if (v < 0) {
              return error(
                  escape_pos,
                  syntax_error(
                      escape_pos, std::to_string(count) + " hex digits after \\" + e,
                      pos_ + i < text_.size() ? describe_char(at(pos_ + i)) : "end of input"));
            }
            cp = cp * 16 + static_cast<uint32_t>(v);
          }
          if (cp > 0x10FFFF) {
            return error(escape_pos, syntax_error(escape_pos, "a code point up to \\U0010FFFF",
                                                  quoted(text_.substr(escape_pos, count + 2))));
          }
          append_utf8(&token.text, cp);
          pos_ += count;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {  // octal escape, up to three digits
            int value = e - '0';
            for (int i = 0; i < 2 && at(pos_) >= '0' && at(pos_) <= '7'; ++i) {
              value = value * 8 + (at(pos_++) - '0');
            }
            token.text.push_back(static_cast<char>(value & 0xFF));
          } else {
            // Python keeps unknown escapes as written.
            token.text.push_back('\\');
            token.text.push_back(e);
          }
      }
    }
    token.source = text_.substr(token_pos, pos_ - token_pos);
    return token;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  bool parse_pipeline(Pipeline* out, ParseError* error) {
    error_ = error;
    Call call;
    if (!parse_call(&call)) return false;
    out->calls.push_back(std::move(call));
    while (!at_end()) {
      if (!is_punct('.')) return fail("'.' or end of input");
      ++index_;
      Call next;
      if (!parse_call(&next)) return false;
      out->calls.push_back(std::move(next));
    }
    return true;
  }

 private:
  const Token& peek(size_t ahead = 0) const {
    size_t i = index_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  bool at_end() const { return peek().kind == Token::Kind::kEnd; }
  bool is_punct(char c, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::kPunct && peek(ahead).punct == c;
  }

  // Reports "expected <expected>, found <current token>", unless the current token is a
  // lexical error, whose own message is more precise.
  bool fail(const std::string& expected) {
    const Token& token = peek();
    if (token.kind == Token::Kind::kError) {
      error_->pos = token.pos;
      error_->message = token.text;
    } else {
      error_->pos = token.pos;
      error_->message = syntax_error(token.pos, expected, describe(token));
    }
    return false;
  }

  bool fail_at(size_t pos, std::string message) {
    error_->pos = pos;
    error_->message = std::move(message);
    return false;
  }

  bool parse_call(Call* call) {
    if (peek().kind != Token::Kind::kName) return fail("a function name");
    call->name = peek().text;
    call->pos = peek().pos;
    ++index_;
    if (!is_punct('(')) return fail("'('");
    ++index_;
    return parse_arguments(&call->args, 0);
  }

  // Parses the arguments of a call after its '(' up to and including the ')'.
  bool parse_arguments(std::vector<Argument>* args, int depth) {
    bool seen_keyword = false;
    for (;;) {
      if (is_punct(')')) {
        ++index_;
        return true;
      }
      Argument arg;
      arg.pos = peek().pos;
      if (peek().kind == Token::Kind::kName && is_punct('=', 1)) {
        arg.keyword = peek().text;
        index_ += 2;
        seen_keyword = true;
        if (!parse_value(&arg.value, depth, "a value")) return false;
      } else {
        if (seen_keyword && peek().kind != Token::Kind::kError) {
          // Python rejects f(a=1, 2) as a syntax error too.
          return fail(
              "a keyword argument (positional arguments cannot follow keyword "
              "arguments) or ')'");
        }
        if (!parse_value(&arg.value, depth, "an argument or ')'")) return false;
      }
      args->push_back(std::move(arg));
      if (is_punct(',')) {
        ++index_;
      } else if (!is_punct(')')) {
        return fail("',' or ')'");
      }
    }
  }

  // Parses comma-separated values up to `close`, allowing a trailing comma. Sets
  // *saw_comma when at least one comma was read (it decides between (x) and (x,)).
  bool parse_sequence(std::vector<Value>* items, char close, int depth, bool* saw_comma) {
    const std::string closing = std::string("'") + close + "'";
    *saw_comma = false;
    for (;;) {
      if (is_punct(close)) {
        ++index_;
        return true;
      }
      Value item;
      if (!parse_value(&item, depth, "a value or " + closing)) return false;
      items->push_back(std::move(item));
      if (is_punct(',')) {
        *saw_comma = true;
        ++index_;
      } else if (!is_punct(close)) {
        return fail("',' or " + closing);
      }
    }
  }

  bool parse_value(Value* value, int depth, const std::string& expected) {
    const Token& token = peek();
    value->pos = token.pos;
    if (token.kind == Token::Kind::kPunct) {
      switch (token.punct) {
        case '-':
        case '+':
          return parse_signed_number(value);
        case '[':
        case '(': {
          if (depth >= kMaxNestingDepth) {
            return fail("at most " + std::to_string(kMaxNestingDepth) + " nested brackets");
          }
          char close = token.punct == '[' ? ']' : ')';
          bool is_list = token.punct == '[';
          ++index_;
          std::vector<Value> items;
          bool saw_comma = false;
          if (!parse_sequence(&items, close, depth + 1, &saw_comma)) return false;
          if (!is_list && items.size() == 1 && !saw_comma) {
            size_t pos = value->pos;
            *value = std::move(items[0]);  // (x) is only grouping
            value->pos = pos;
            return true;
          }
          value->kind = is_list ? Value::Kind::kList : Value::Kind::kTuple;
          value->items = std::move(items);
          return true;
        }
        case '{':
          return parse_dict(value, depth);
        case '$':
          return parse_placeholder(value, depth);
        default:
          break;
      }
      return fail(expected);
    }
    switch (token.kind) {
      case Token::Kind::kInt:
      case Token::Kind::kFloat:
        return parse_signed_number(value);
      case Token::Kind::kString:
        value->kind = Value::Kind::kString;
        value->text = token.text;
        ++index_;
        // Adjacent string literals concatenate, as in Python.
        while (peek().kind == Token::Kind::kString) {
          value->text += peek().text;
          ++index_;
        }
        return true;
      case Token::Kind::kName:
        return parse_name(value, depth);
      default:
        return fail(expected);
    }
  }

  // {key: value, ...}, as in Python; the items hold key, value, key, value, ...
  bool parse_dict(Value* value, int depth) {
    if (depth >= kMaxNestingDepth) {
      return fail("at most " + std::to_string(kMaxNestingDepth) + " nested brackets");
    }
    ++index_;  // '{'
    value->kind = Value::Kind::kDict;
    for (;;) {
      if (is_punct('}')) {
        ++index_;
        return true;
      }
      Value key, item;
      if (!parse_value(&key, depth + 1, "a key or '}'")) return false;
      if (!is_punct(':')) return fail("':'");
      ++index_;
      if (!parse_value(&item, depth + 1, "a value")) return false;
      value->items.push_back(std::move(key));
      value->items.push_back(std::move(item));
      if (is_punct(',')) {
        ++index_;
      } else if (!is_punct('}')) {
        return fail("',' or '}'");
      }
    }
  }

  bool parse_name(Value* value, int depth) {
    std::string name = peek().text;
    ++index_;
    bool dotted = false;
    while (is_punct('.')) {
      ++index_;
      if (peek().kind != Token::Kind::kName) return fail("a name after '.'");
      name += "." + peek().text;
      dotted = true;
      ++index_;
    }
    if (is_punct('(')) {  // a call used as a value, e.g. records(compression="ZSTD")
      if (depth >= kMaxNestingDepth) {
        return fail("at most " + std::to_string(kMaxNestingDepth) + " nested brackets");
      }
      ++index_;
      value->kind = Value::Kind::kCall;
      value->text = name;
      if (!parse_arguments(&value->args, depth + 1)) return false;
      // A pipeline as a value: the call goes on with `.method(...)` calls.
      while (is_punct('.')) {
        ++index_;
        Call next;
        if (peek().kind != Token::Kind::kName) return fail("a function name after '.'");
        next.name = peek().text;
        next.pos = peek().pos;
        ++index_;
        if (!is_punct('(')) return fail("'('");
        ++index_;
        if (!parse_arguments(&next.args, depth + 1)) return false;
        value->chain.push_back(std::move(next));
      }
      return true;
    }
    if (!dotted && (name == "True" || name == "False")) {
      value->kind = Value::Kind::kBool;
      value->bool_value = name == "True";
    } else if (!dotted && name == "None") {
      value->kind = Value::Kind::kNone;
    } else {
      value->kind = Value::Kind::kName;
      value->text = name;
    }
    return true;
  }

  bool parse_placeholder(Value* value, int depth) {
    ++index_;  // '$'
    if (peek().kind != Token::Kind::kName) return fail("a placeholder name after '$'");
    value->kind = Value::Kind::kPlaceholder;
    value->text = peek().text;
    ++index_;
    if (is_punct('(')) {
      ++index_;
      bool saw_comma = false;
      if (!parse_sequence(&value->items, ')', depth + 1, &saw_comma)) return false;
    }
    return true;
  }

  bool parse_signed_number(Value* value) {
    bool negative = false;
    size_t start = peek().pos;
    if (peek().kind == Token::Kind::kPunct) {
      negative = peek().punct == '-';
      ++index_;
      if (peek().kind != Token::Kind::kInt && peek().kind != Token::Kind::kFloat) {
        return fail("a number");
      }
    }
    const Token& number = peek();
    ++index_;
    if (number.kind == Token::Kind::kFloat) {
      value->kind = Value::Kind::kFloat;
      double magnitude = std::strtod(number.text.c_str(), nullptr);
      // float_text literals become float32 tensors: one that rounds to an infinity there would
      // silently change the data, so it is refused (tiny ones underflow to 0, as in TF).
      if (std::isinf(static_cast<float>(magnitude))) {
        std::string written = (negative ? "-" : "") + number.source;
        return fail_at(
            start, "float literal " + quoted(written) + " at position " + std::to_string(start) +
                       " is out of the float32 range (largest magnitude about 3.4028235e38)");
      }
      value->float_value = negative ? -magnitude : magnitude;
      return true;
    }
    // Accumulate the magnitude as unsigned so that -9223372036854775808 is representable.
    uint64_t magnitude = 0;
    const uint64_t limit =
        negative ? uint64_t{1} << 63 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    for (char c : number.text) {
      uint64_t digit = static_cast<uint64_t>(c - '0');
      if (magnitude > (limit - digit) / 10) {
        std::string written = (negative ? "-" : "") + number.source;
        return fail_at(start, "integer literal " + quoted(written) + " at position " +
                                  std::to_string(start) + " is out of the int64 range");
      }
      magnitude = magnitude * 10 + digit;
    }
    value->kind = Value::Kind::kInt;
    value->int_value =
        negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return true;
  }

  std::vector<Token> tokens_;
  size_t index_ = 0;
  ParseError* error_ = nullptr;
};

}  // namespace

bool parse_pipeline(const std::string& text, Pipeline* out, ParseError* error) {
  Pipeline pipeline;
  Parser parser(Lexer(text).run());
  if (!parser.parse_pipeline(&pipeline, error)) return false;
  *out = std::move(pipeline);
  return true;
}

const char* describe_kind(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kInt:
      return "an integer";
    case Value::Kind::kFloat:
      return "a float";
    case Value::Kind::kString:
      return "a string";
    case Value::Kind::kBool:
      return "a bool";
    case Value::Kind::kNone:
      return "None";
    case Value::Kind::kList:
      return "a list";
    case Value::Kind::kTuple:
      return "a tuple";
    case Value::Kind::kName:
      return "a name";
    case Value::Kind::kPlaceholder:
      return "a placeholder";
    case Value::Kind::kCall:
      return "a call";
    case Value::Kind::kDict:
      return "a dict";
  }
  return "a value";
}

}  // namespace dinput_tool
