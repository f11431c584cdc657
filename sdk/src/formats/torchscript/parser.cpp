#include "formats/torchscript/parser.h"

#include <utility>

namespace tracegraph::torchscript {

Expr ExprParser::expr() {
  const Nesting nesting(*this);
  Expr e = unary();
  const Tok& n = peek();
  if (n.t == Tok::T::kOp && n.s != "," && n.s != ")" && n.s != "]" && n.s != "}" && n.s != ":" && n.s != "=") {
    unsupported(w_, "the operator '" + n.s + "' (scripted arithmetic is not read yet)");
  }
  if (n.t == Tok::T::kName && (n.s == "if" || n.s == "and" || n.s == "or" || n.s == "in" || n.s == "is" || n.s == "for")) {
    unsupported(w_, "the operator '" + n.s + "' (scripted logic is not read yet)");
  }
  return e;
}

Expr ExprParser::expr_list() {
  Expr first = expr();
  if (!is_op(",")) return first;
  Expr tuple;
  tuple.k = Expr::K::kTuple;
  tuple.items.push_back(std::move(first));
  while (is_op(",")) {
    ++pos_;
    if (peek().t == Tok::T::kEnd) break;
    tuple.items.push_back(expr());
  }
  return tuple;
}

void ExprParser::expect(std::string_view s) {
  if (!is_op(s)) bad_code(w_, "expected '" + std::string(s) + "', found '" + (peek().t == Tok::T::kEnd ? std::string("the end of the line") : peek().s) + "'");
  ++pos_;
}

Expr ExprParser::unary() {
  if (is_op("-")) {
    const Nesting nesting(*this);
    ++pos_;
    Expr inner = unary();
    if (inner.k == Expr::K::kInt) {
      inner.i = -inner.i;
      return inner;
    }
    if (inner.k == Expr::K::kFloat) {
      inner.f = -inner.f;
      return inner;
    }
    Expr neg;
    neg.k = Expr::K::kNeg;
    neg.items.push_back(std::move(inner));
    return neg;
  }
  if (peek().t == Tok::T::kName && peek().s == "not") unsupported(w_, "the operator 'not' (scripted logic is not read yet)");
  return postfix();
}

Expr ExprParser::postfix() {
  Expr e = atom();
  // The chain's links are held as nesting until the whole postfix is read.
  int links = 0;
  struct Release {
    ExprParser& p;
    int& n;
    ~Release() { p.depth_ -= n; }
  } release{*this, links};
  auto link = [&] {
    ++links;
    if (++depth_ > kMaxDepth) {
      fail(ErrorCode::kLimitExceeded, w_.str() + ": an expression nested deeper than max_expression_depth (" + std::to_string(kMaxDepth) + ")");
    }
  };
  for (;;) {
    if (is_op(".") || is_op("(") || is_op("[")) link();
    if (is_op(".")) {
      ++pos_;
      if (peek().t != Tok::T::kName) bad_code(w_, "expected a name after '.'");
      Expr a;
      a.k = Expr::K::kAttr;
      a.s = peek().s;
      ++pos_;
      a.items.push_back(std::move(e));
      e = std::move(a);
    } else if (is_op("(")) {
      ++pos_;
      Expr call;
      call.k = Expr::K::kCall;
      call.items.push_back(std::move(e));
      while (!is_op(")")) {
        if (peek().t == Tok::T::kName && t_[pos_ + 1].t == Tok::T::kOp && t_[pos_ + 1].s == "=") {
          call.keywords.push_back(peek().s);
          pos_ += 2;
        } else if (!call.keywords.empty()) {
          bad_code(w_, "a positional argument after a keyword one");
        }
        call.items.push_back(expr());
        if (!is_op(",")) break;
        ++pos_;
      }
      expect(")");
      e = std::move(call);
    } else if (is_op("[")) {
      ++pos_;
      Expr idx;
      idx.k = Expr::K::kIndex;
      idx.items.push_back(std::move(e));
      idx.items.push_back(expr());
      expect("]");
      e = std::move(idx);
    } else {
      return e;
    }
  }
}

Expr ExprParser::atom() {
  const Tok& t = peek();
  Expr e;
  switch (t.t) {
    case Tok::T::kName: e.k = Expr::K::kName; e.s = t.s; ++pos_; return e;
    case Tok::T::kInt: e.k = Expr::K::kInt; e.i = t.i; ++pos_; return e;
    case Tok::T::kFloat: e.k = Expr::K::kFloat; e.f = t.f; ++pos_; return e;
    case Tok::T::kStr: e.k = Expr::K::kStr; e.s = t.s; ++pos_; return e;
    case Tok::T::kEnd: bad_code(w_, "an expression ends early");
    case Tok::T::kOp: break;
  }
  if (t.s == "(" || t.s == "[") {
    const bool list = t.s == "[";
    const std::string close = list ? "]" : ")";
    ++pos_;
    Expr seq;
    seq.k = list ? Expr::K::kList : Expr::K::kTuple;
    bool comma = false;
    while (!is_op(close)) {
      seq.items.push_back(expr());
      if (!is_op(",")) break;
      comma = true;
      ++pos_;
    }
    expect(close);
    if (!list && seq.items.size() == 1 && !comma) return std::move(seq.items[0]);  // parentheses
    return seq;
  }
  if (t.s == "{") {
    ++pos_;
    Expr dict;
    dict.k = Expr::K::kDict;
    while (!is_op("}")) {
      dict.items.push_back(expr());
      expect(":");
      dict.items.push_back(expr());
      if (!is_op(",")) break;
      ++pos_;
    }
    expect("}");
    return dict;
  }
  bad_code(w_, "unexpected '" + t.s + "'");
}

}  // namespace tracegraph::torchscript
