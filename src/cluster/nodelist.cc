// SLURM's compressed host lists ("n[1-3,7],m5") and task counts ("2(x3),1").
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/env_util.h"
#include "core/status.h"

namespace dinput {

using cluster_detail::shown;

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads one host expression: literal text and bracket groups, up to a top-level comma or the
// end. Throws naming the offset of the first byte that does not parse.
class NodelistParser {
 public:
  NodelistParser(const std::string& value, const std::string& variable, size_t max_hosts)
      : s_(value), variable_(variable), max_hosts_(max_hosts) {}

  std::vector<std::string> parse() {
    if (s_.empty()) fail(0, "the list is empty");
    std::vector<std::string> hosts;
    while (true) {
      expression(hosts);
      if (pos_ == s_.size()) break;
      ++pos_;  // the comma between expressions
      if (pos_ == s_.size()) fail(pos_, "a host name is missing after the last ','");
    }
    return hosts;
  }

 private:
  // One expression: its parts are literal text (one choice) or bracket groups (many);
  // every combination is a host, the last part varying fastest.
  void expression(std::vector<std::string>& hosts) {
    const size_t start = pos_;
    std::vector<std::vector<std::string>> parts;
    while (pos_ < s_.size() && s_[pos_] != ',') {
      if (s_[pos_] == '[') {
        parts.push_back(group());
      } else if (s_[pos_] == ']') {
        fail(pos_, "']' without '['");
      } else {
        size_t end = pos_;
        while (end < s_.size() && s_[end] != ',' && s_[end] != '[' && s_[end] != ']') {
          char c = s_[end];
          if (c == ' ' || c == '\t' || c == '\n' || static_cast<unsigned char>(c) < 0x20)
            fail(end, "a host name cannot hold spaces or control characters");
          ++end;
        }
        parts.push_back({s_.substr(pos_, end - pos_)});
        pos_ = end;
      }
    }
    if (parts.empty()) fail(start, "a host name is missing");
    size_t count = 1;
    for (const auto& p : parts) {
      count *= p.size();
      if (count + hosts.size() > max_hosts_)
        fail(start, "the list names more than " + std::to_string(max_hosts_) + " hosts");
    }
    std::vector<size_t> index(parts.size(), 0);
    for (size_t n = 0; n < count; ++n) {
      std::string host;
      for (size_t i = 0; i < parts.size(); ++i) host += parts[i][index[i]];
      hosts.push_back(std::move(host));
      for (size_t i = parts.size(); i-- > 0;) {
        if (++index[i] < parts[i].size()) break;
        index[i] = 0;
      }
    }
  }

  // "[a-b,c,...]": numbers and ranges; a range keeps the width of its lower bound, so
  // 001-012 gives 001..012 and 9-11 gives 9, 10, 11.
  std::vector<std::string> group() {
    const size_t open = pos_++;
    std::vector<std::string> out;
    while (true) {
      const size_t lo_at = pos_;
      std::string lo = number();
      if (pos_ < s_.size() && s_[pos_] == '-') {
        ++pos_;
        std::string hi = number();
        // number() allows at most 18 digits, which std::stoull reads without overflow.
        unsigned long long a = std::stoull(lo);
        unsigned long long b = std::stoull(hi);
        if (b < a) fail(lo_at, "the range " + lo + "-" + hi + " runs backwards");
        if (b - a + 1 > max_hosts_)
          fail(lo_at, "the range " + lo + "-" + hi + " names more than " +
                          std::to_string(max_hosts_) + " hosts");
        for (unsigned long long v = a; v <= b; ++v) {
          std::string digits = std::to_string(v);
          if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');
          out.push_back(std::move(digits));
        }
      } else {
        out.push_back(lo);
      }
      if (out.size() > max_hosts_)
        fail(open, "the group names more than " + std::to_string(max_hosts_) + " hosts");
      if (pos_ >= s_.size()) fail(open, "'[' is never closed");
      if (s_[pos_] == ']') {
        ++pos_;
        return out;
      }
      if (s_[pos_] != ',') fail(pos_, "expected a digit, '-', ',' or ']' in a bracket group");
      ++pos_;
    }
  }

  std::string number() {
    const size_t start = pos_;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    if (pos_ == start) {
      if (pos_ >= s_.size()) fail(pos_, "'[' is never closed");
      fail(pos_, "expected a number in a bracket group");
    }
    if (pos_ - start > 18) fail(start, "a number in a bracket group is too long");
    return s_.substr(start, pos_ - start);
  }

  [[noreturn]] void fail(size_t offset, const std::string& why) const {
    raise(Code::kInvalidArgument, variable_, "=", shown(s_), " is not a SLURM host list: ", why,
          " (at offset ", offset, ")");
  }

  const std::string& s_;
  const std::string& variable_;
  const size_t max_hosts_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<std::string> expand_slurm_nodelist(const std::string& value,
                                               const std::string& variable, size_t max_hosts) {
  return NodelistParser(value, variable, max_hosts).parse();
}

std::vector<int> expand_slurm_tasks_per_node(const std::string& value,
                                             const std::string& variable) {
  auto fail = [&](size_t offset, const char* why) {
    raise(Code::kInvalidArgument, variable, "=", shown(value),
          " is not a SLURM task count list (like 2(x3),1): ", why, " (at offset ", offset, ")");
  };
  std::vector<int> out;
  size_t pos = 0;
  auto number = [&](size_t max_digits) {
    const size_t start = pos;
    while (pos < value.size() && is_digit(value[pos])) ++pos;
    if (pos == start) fail(pos, "expected a number");
    if (pos - start > max_digits) fail(start, "a number is too large");
    return std::stoll(value.substr(start, pos - start));
  };
  if (value.empty()) fail(0, "the list is empty");
  while (true) {
    long long tasks = number(9);
    long long repeat = 1;
    if (pos < value.size() && value[pos] == '(') {
      if (value.compare(pos, 2, "(x") != 0) fail(pos, "expected '(x'");
      pos += 2;
      const size_t at = pos;
      repeat = number(7);
      if (repeat < 1) fail(at, "a repeat count must be >= 1");
      if (pos >= value.size() || value[pos] != ')') fail(pos, "expected ')'");
      ++pos;
    }
    if (out.size() + static_cast<size_t>(repeat) > (1u << 20)) fail(0, "too many nodes");
    out.insert(out.end(), static_cast<size_t>(repeat), static_cast<int>(tasks));
    if (pos == value.size()) return out;
    if (value[pos] != ',') fail(pos, "expected ',' or '(x'");
    ++pos;
  }
}

}  // namespace dinput
