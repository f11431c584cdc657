// The TorchScript archive reader, stage two: a logical line's tokens as
// expressions (names, numbers, strings, tuples, lists, dicts, attributes,
// calls with keyword arguments, indexing, negation). The operators TorchScript
// emits as calls (torch.add, torch.eq, ...) need no precedence; the infix and
// logical operators scripted code may hold are refused, naming the line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/torchscript/lexer.h"
#include "tracegraph/error.h"
#include "tracegraph/load_limits.h"

namespace tracegraph::torchscript {

struct Expr {
  enum class K { kName, kInt, kFloat, kStr, kTuple, kList, kDict, kAttr, kCall, kIndex, kNeg } k = K::kName;
  std::string s;                  // a name, an attribute, a string
  std::int64_t i = 0;
  double f = 0;
  std::vector<Expr> items;        // tuple/list elements; dict keys then values interleaved; attr/index/neg: [base, (index)]; call: [callee, args...]
  std::vector<std::string> keywords;  // a call's keyword names, for its last keywords.size() arguments
};

// Reads expressions from `toks` starting at `pos`; errors name `w`.
class ExprParser {
 public:
  ExprParser(const std::vector<Tok>& toks, std::size_t pos, const Where& w) : t_(toks), pos_(pos), w_(w) {}

  Expr expr();
  // Comma-separated expressions to the end: a tuple when there is a comma.
  Expr expr_list();
  bool at_end() const { return peek().t == Tok::T::kEnd; }
  std::size_t pos() const { return pos_; }

 private:
  const Tok& peek() const { return t_[pos_]; }
  bool is_op(std::string_view s) const { return peek().t == Tok::T::kOp && peek().s == s; }
  void expect(std::string_view s);
  Expr unary();
  Expr postfix();
  Expr atom();

  // Bounds the recursion a hostile line could drive ("((((((...") and the
  // depth of the tree it builds: a postfix chain (x[0][0]..., x.T.T...) is
  // read in a loop but nests its Expr one level per link, and evaluating or
  // destroying that tree recurses as deep. Each link counts as one level.
  static constexpr int kMaxDepth = static_cast<int>(LoadLimits{}.max_expression_depth);
  struct Nesting {
    explicit Nesting(ExprParser& p, int levels = 1) : p_(p), levels_(levels) {
      p_.depth_ += levels_;
      if (p_.depth_ > kMaxDepth) {
        fail(ErrorCode::kLimitExceeded, p_.w_.str() + ": an expression nested deeper than max_expression_depth (" + std::to_string(kMaxDepth) + ")");
      }
    }
    ~Nesting() { p_.depth_ -= levels_; }
    ExprParser& p_;
    int levels_;
  };

  const std::vector<Tok>& t_;
  std::size_t pos_;
  const Where& w_;
  int depth_ = 0;
};

}  // namespace tracegraph::torchscript
