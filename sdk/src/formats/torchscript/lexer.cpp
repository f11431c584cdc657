#include "formats/torchscript/lexer.h"

#include <cctype>
#include <exception>

#include "tracegraph/error.h"

namespace tracegraph::torchscript {

std::vector<Line> logical_lines(std::string_view src, const std::string& entry, std::uint64_t max_line_bytes) {
  std::vector<Line> out;
  Line cur;
  int depth = 0;
  std::size_t number = 0;
  while (!src.empty()) {
    const auto nl = src.find('\n');
    std::string_view phys = src.substr(0, nl);
    src = nl == std::string_view::npos ? std::string_view() : src.substr(nl + 1);
    ++number;
    std::size_t indent = 0;
    while (indent < phys.size() && phys[indent] == ' ') ++indent;
    std::string_view body = phys.substr(indent);
    if (depth == 0) {
      if (body.empty() || body[0] == '#') continue;
      cur = Line{number, indent, {}};
    } else {
      cur.text += ' ';
    }
    char quote = 0;
    for (std::size_t i = 0; i < body.size(); ++i) {
      const char c = body[i];
      if (quote) {
        if (c == '\\' && i + 1 < body.size()) {
          cur.text += c;
          cur.text += body[++i];
          continue;
        }
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '#') {
        break;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        --depth;
      }
      cur.text += c;
    }
    if (cur.text.size() > max_line_bytes) {
      fail(ErrorCode::kLimitExceeded, entry + " line " + std::to_string(cur.number) + ": a line of more than max_code_line_bytes (" +
                                          std::to_string(max_line_bytes) + ") bytes");
    }
    if (depth == 0) out.push_back(std::move(cur));
  }
  if (depth != 0) out.push_back(std::move(cur));  // an unclosed bracket: the parser reports it
  return out;
}

[[noreturn]] void unsupported(const Where& w, const std::string& what) { fail(ErrorCode::kUnsupported, w.str() + ": " + what); }
[[noreturn]] void bad_code(const Where& w, const std::string& what) { fail(ErrorCode::kParse, w.str() + ": " + what); }

std::vector<Tok> tokenize(const std::string& text, const Where& w) {
  std::vector<Tok> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    Tok t;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = i;
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
      t.t = Tok::T::kName;
      t.s = text.substr(start, i - start);
    } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      const std::size_t start = i;
      bool real = false;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (i < text.size() && text[i] == '.') {
        real = true;
        ++i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      }
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        real = true;
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      }
      const std::string num = text.substr(start, i - start);
      try {
        if (real) {
          t.t = Tok::T::kFloat;
          t.f = std::stod(num);
        } else {
          t.t = Tok::T::kInt;
          t.i = std::stoll(num);
        }
      } catch (const std::exception&) {
        bad_code(w, "the number " + num + " does not fit");
      }
    } else if (c == '"' || c == '\'') {
      ++i;
      t.t = Tok::T::kStr;
      while (i < text.size() && text[i] != c) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          const char e = text[++i];
          t.s += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
          t.s += text[i];
        }
        ++i;
      }
      if (i >= text.size()) bad_code(w, "a string without its end");
      ++i;
    } else {
      static constexpr std::string_view kTwo[] = {"->", "==", "!=", "<=", ">=", "//", "**"};
      t.t = Tok::T::kOp;
      t.s = std::string(1, c);
      for (std::string_view two : kTwo) {
        if (text.compare(i, 2, two) == 0) t.s = std::string(two);
      }
      i += t.s.size();
    }
    out.push_back(std::move(t));
  }
  out.push_back(Tok{});
  return out;
}

}  // namespace tracegraph::torchscript
