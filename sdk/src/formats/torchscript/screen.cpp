// screen_torchscript_archive(): what LibTorch's own loader would parse of a
// TorchScript archive, checked by the core's bounded readers before
// torch::jit::load sees it. LibTorch parses every code file and unpickles
// every pickle when it loads; its parser recurses once per bracket and per
// postfix link, its unpickler trusts lengths, and its zip reader inflates
// what the directory says. Those are the defects this guards against, so the
// screen refuses only what is hostile by the core's measure (hostile()
// below) and leaves every other doubt to LibTorch, whose reader knows
// more than the core's. The archive itself is held to the core's zip
// reader whole: torch never writes a zip that reader refuses, and one it
// refuses (entries that disagree with the directory, a directory past the
// end) is where LibTorch's zip reader would read something else.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/error.h"
#include "tracegraph/file_io.h"
#include "tracegraph/pickle.h"
#include "tracegraph/torchscript_archive.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph {
namespace {

// The codes that say a file is built to cost more than it can need, or
// disagrees with itself; a code the core does not follow (kParse of a pickle
// opcode the core does not know, kUnsupported) is left to LibTorch.
bool hostile(ErrorCode code) {
  switch (code) {
    case ErrorCode::kTruncated:
    case ErrorCode::kLimitExceeded:
    case ErrorCode::kOutOfRange:
    case ErrorCode::kOverlap:
      return true;
    default:
      return false;
  }
}

// One code file's text: no physical line longer than max_code_line_bytes,
// and no expression deeper than max_expression_depth, where each open
// bracket and each postfix link (x.T, x[0], f(x) after a name or a closing
// bracket) counts one level, as the core's parser counts them. LibTorch's
// parser and emitter also recurse once per prefix operator (-x, ~x, not x:
// a level until its operand ends, at the next binary operator), per binary
// operator of a chain (x + x + x: its tree is as deep as the chain is long;
// a level each until the bracket, argument or line ends) and per link of a
// right-associative chain (x ** y ** z, a if c else b if d else e, the
// same); 100,000 minuses or 10,000 terms of a sum took its stack. Strings and
// comments are skipped; the scan is one pass and needs no tokens, so no
// character can hide what follows it.
void screen_code(std::string_view text, const std::string& where, const LoadLimits& limits) {
  enum class Prev { kNone, kName, kCloser, kDot, kOther };
  std::vector<std::uint64_t> chains{0};  // the links of the chain open at each bracket depth
  std::vector<std::uint64_t> prefixes{0};  // prefix operators open at each bracket depth
  std::vector<std::uint64_t> operators{0};  // binary operators and if-else links of the expression at each bracket depth
  std::uint64_t level = 0;                 // brackets open plus all the links, prefixes and right links open
  Prev prev = Prev::kNone;
  std::size_t line = 1;
  std::size_t line_start = 0;
  const auto deeper = [&](std::size_t i) {
    if (++level > limits.max_expression_depth) {
      fail(ErrorCode::kLimitExceeded, where + " line " + std::to_string(line) + " (byte " + std::to_string(i) +
                                          "): an expression nested deeper than max_expression_depth (" +
                                          std::to_string(limits.max_expression_depth) + ")");
    }
  };
  const auto end_chain = [&] {
    level -= chains.back();
    chains.back() = 0;
  };
  const auto end_prefixes = [&] {
    level -= prefixes.back();
    prefixes.back() = 0;
  };
  const auto end_expression = [&] {  // a bracket, an argument or a line ends
    end_chain();
    end_prefixes();
    level -= operators.back();
    operators.back() = 0;
  };
  const auto open = [&](std::vector<std::uint64_t>& counts, std::size_t i) {
    ++counts.back();
    deeper(i);
  };
  const auto is_name_char = [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  const auto new_line = [&](std::size_t i) {
    if (i - line_start > limits.max_code_line_bytes) {
      fail(ErrorCode::kLimitExceeded, where + " line " + std::to_string(line) + " is " + std::to_string(i - line_start) +
                                          " bytes, more than max_code_line_bytes (" + std::to_string(limits.max_code_line_bytes) + ")");
    }
    ++line;
    line_start = i + 1;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      new_line(i);
      if (chains.size() == 1) {
        end_expression();
        prev = Prev::kNone;
      }
    } else if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      // A string, triple-quoted or not, to its closing quote; escapes
      // skipped. One not closed on its line ends there, and the newline is
      // read as any other.
      const bool triple = i + 2 < text.size() && text[i + 1] == c && text[i + 2] == c;
      std::size_t j = i + (triple ? 3 : 1);
      for (; j < text.size(); ++j) {
        if (text[j] == '\\') {
          if (j + 1 < text.size() && text[j + 1] == '\n') new_line(j + 1);
          ++j;
        } else if (text[j] == '\n') {
          if (!triple) break;
          new_line(j);
        } else if (text[j] == c && (!triple || (j + 2 < text.size() && text[j + 1] == c && text[j + 2] == c))) {
          j += triple ? 2 : 0;
          break;
        }
      }
      i = j < text.size() && text[j] == '\n' ? j - 1 : std::min(j, text.size() - 1);
      prev = Prev::kName;
    } else if (is_name_char(c)) {
      if (i == 0 || !is_name_char(text[i - 1])) {
        // A word may be an operator: `not` where an operand starts;
        // `and`, `or`, `in`, `is` after one; `if` and `else` inside an
        // expression (not a statement's); and `return`, `raise`, `assert`
        // start an operand.
        std::size_t j = i;
        while (j < text.size() && is_name_char(text[j])) ++j;
        const std::string_view word = text.substr(i, j - i);
        const bool operand_starts = prev == Prev::kNone || prev == Prev::kOther;
        const bool after_operand = prev == Prev::kName || prev == Prev::kCloser;
        const bool binary = after_operand && (word == "and" || word == "or" || word == "in" || word == "is");
        const bool ternary = (word == "if" || word == "else") && prev != Prev::kNone;
        const bool statement = word == "return" || word == "raise" || word == "assert";
        if ((word == "not" && operand_starts) || binary || ternary || statement) {
          end_chain();
          if (binary || ternary) {
            end_prefixes();
            open(operators, i);
          }
          if (word == "not") open(prefixes, i);
          prev = Prev::kOther;
          i = j - 1;
          continue;
        }
      }
      if (prev != Prev::kName && prev != Prev::kDot) end_chain();
      prev = Prev::kName;
    } else if (c == '.') {
      if (prev == Prev::kName || prev == Prev::kCloser) {
        ++chains.back();
        deeper(i);
      }
      prev = Prev::kDot;
    } else if (c == '(' || c == '[' || c == '{') {
      if (prev == Prev::kName || prev == Prev::kCloser) {
        ++chains.back();
        deeper(i);
      } else {
        end_chain();
      }
      chains.push_back(0);
      prefixes.push_back(0);
      operators.push_back(0);
      deeper(i);
      prev = Prev::kOther;
    } else if (c == ')' || c == ']' || c == '}') {
      if (chains.size() > 1) {
        end_expression();
        chains.pop_back();
        prefixes.pop_back();
        operators.pop_back();
        --level;
      }
      prev = Prev::kCloser;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      const bool operand_starts = prev == Prev::kNone || prev == Prev::kOther;
      if (c == ',') {
        end_expression();
      } else if (operand_starts && (c == '-' || c == '+' || c == '~')) {
        end_chain();
        open(prefixes, i);
      } else {
        // A binary operator (or '=', ':', which nest nothing): the operand
        // before it ended. Its second character (==, **, ->) is not another.
        end_chain();
        if (!operand_starts) {
          end_prefixes();
          if (c != '=' && c != ':') open(operators, i);
        }
      }
      prev = Prev::kOther;
    }
  }
  new_line(text.size());
}

}  // namespace

void screen_torchscript_archive(std::span<const std::byte> bytes, std::string_view source, const LoadLimits& limits) {
  if (!looks_like_zip(bytes)) return;  // not a zip archive: LibTorch's own message says why
  const ZipArchive zip = ZipArchive::open(bytes, nullptr, std::string(source), limits);
  for (const ZipEntry& entry : zip.entries()) {
    const std::string_view name = entry.name;
    const bool pickle = name.ends_with(".pkl") || name.ends_with(".debug_pkl");
    const bool code = name_in_root(name).starts_with("code/") && name.ends_with(".py");
    if (!pickle && !code) continue;
    const ZipData data = zip.read(entry);
    const std::string where = std::string(source) + ":" + entry.name;
    if (code) {
      screen_code(data.text(), where, limits);
      continue;
    }
    // A pickle the core does not follow (an opcode it does not know) leaves
    // the other entries screened; one that is hostile stops here.
    try {
      read_pickle(data.bytes, where, limits);
    } catch (const Error& e) {
      if (hostile(e.code())) throw;
    }
  }
}

void screen_torchscript_archive(const std::string& path, const LoadLimits& limits) {
  const auto bytes = read_file_bytes(path, limits.max_file_bytes);
  screen_torchscript_archive(std::span<const std::byte>(bytes->data(), bytes->size()), path, limits);
}

}  // namespace tracegraph
