// The TorchScript archive reader, stage one: the code's text (code/*.py in
// the archive) as logical lines and tokens. A logical line joins the physical
// lines a bracket keeps open and drops comments; its indent is what says
// which block it belongs to (the statements stage reads blocks by it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tracegraph::torchscript {

struct Line {
  std::size_t number = 0;  // 1-based, of its first physical line
  std::size_t indent = 0;
  std::string text;
};

// Physical lines joined while a bracket is open, comments dropped. A logical
// line past `max_line_bytes` (LoadLimits::max_code_line_bytes) is
// kLimitExceeded naming `entry` and the line, before it is joined further:
// its tokens and expressions would take about 200 times its bytes.
std::vector<Line> logical_lines(std::string_view src, const std::string& entry, std::uint64_t max_line_bytes);

struct Tok {
  enum class T { kName, kInt, kFloat, kStr, kOp, kEnd } t = T::kEnd;
  std::string s;
  std::int64_t i = 0;
  double f = 0;
};

// A place in the code for messages: "model.ts:archive/code/__torch__.py line 12".
struct Where {
  std::string entry;
  std::size_t line = 0;
  std::string str() const { return entry + " line " + std::to_string(line); }
};

// kUnsupported (code the reader does not follow) and kParse (code that is
// not well formed), naming the place.
[[noreturn]] void unsupported(const Where& w, const std::string& what);
[[noreturn]] void bad_code(const Where& w, const std::string& what);

// One logical line's tokens, ending with a kEnd token.
std::vector<Tok> tokenize(const std::string& text, const Where& w);

}  // namespace tracegraph::torchscript
