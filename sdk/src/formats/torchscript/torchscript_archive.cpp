#include "tracegraph/torchscript_archive.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "formats/torchscript/aten_schemas.h"
#include "formats/storage.h"
#include "formats/torchscript/torchscript_shapes.h"
#include "tracegraph/error.h"
#include "tracegraph/file_io.h"
#include "tracegraph/op_table.h"
#include "tracegraph/pickle.h"
#include "tracegraph/shape_rules.h"
#include "tracegraph/optimizer.h"
#include "tracegraph/transforms/transforms.h"
#include "tracegraph/transforms/inplace_to_functional.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph {
namespace {

using PKind = PickleValue::Kind;

// ---- the code: logical lines, tokens, expressions ---------------------------

struct Line {
  std::size_t number = 0;  // 1-based, of its first physical line
  std::size_t indent = 0;
  std::string text;
};

// Physical lines joined while a bracket is open, comments dropped.
std::vector<Line> logical_lines(std::string_view src) {
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
    if (depth == 0) out.push_back(std::move(cur));
  }
  if (depth != 0) out.push_back(std::move(cur));  // an unclosed bracket: the parser reports it
  return out;
}

struct Tok {
  enum class T { kName, kInt, kFloat, kStr, kOp, kEnd } t = T::kEnd;
  std::string s;
  std::int64_t i = 0;
  double f = 0;
};

struct Expr {
  enum class K { kName, kInt, kFloat, kStr, kTuple, kList, kDict, kAttr, kCall, kIndex, kNeg } k = K::kName;
  std::string s;                  // a name, an attribute, a string
  std::int64_t i = 0;
  double f = 0;
  std::vector<Expr> items;        // tuple/list elements; dict keys then values interleaved; attr/index/neg: [base, (index)]; call: [callee, args...]
  std::vector<std::string> keywords;  // a call's keyword names, for its last keywords.size() arguments
};

// A place in the code for messages: "model.ts:archive/code/__torch__.py line 12".
struct Where {
  std::string entry;
  std::size_t line = 0;
  std::string str() const { return entry + " line " + std::to_string(line); }
};

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

class ExprParser {
 public:
  ExprParser(const std::vector<Tok>& toks, std::size_t pos, const Where& w) : t_(toks), pos_(pos), w_(w) {}

  Expr expr() {
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
  // Comma-separated expressions to the end: a tuple when there is a comma.
  Expr expr_list() {
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
  bool at_end() const { return peek().t == Tok::T::kEnd; }
  std::size_t pos() const { return pos_; }

 private:
  const Tok& peek() const { return t_[pos_]; }
  bool is_op(std::string_view s) const { return peek().t == Tok::T::kOp && peek().s == s; }
  void expect(std::string_view s) {
    if (!is_op(s)) bad_code(w_, "expected '" + std::string(s) + "', found '" + (peek().t == Tok::T::kEnd ? std::string("the end of the line") : peek().s) + "'");
    ++pos_;
  }
  Expr unary() {
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
  Expr postfix() {
    Expr e = atom();
    for (;;) {
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
  Expr atom() {
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

  // Bounds the recursion a hostile line could drive ("((((((...").
  struct Nesting {
    explicit Nesting(ExprParser& p) : p_(p) {
      if (++p_.depth_ > 200) unsupported(p_.w_, "an expression nested deeper than 200");
    }
    ~Nesting() { --p_.depth_; }
    ExprParser& p_;
  };

  const std::vector<Tok>& t_;
  std::size_t pos_;
  const Where& w_;
  int depth_ = 0;
};

// ---- what names hold while the code runs ------------------------------------

struct Pending;

struct Slot {
  enum class K { kNone, kInt, kFloat, kBool, kString, kTensor, kScalar, kRuntimeList, kList, kTuple, kDict, kModule, kPath, kPendingList };
  K k = K::kNone;
  std::int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;                       // a string; a kPath ("torch.conv2d", "__torch__.mod.fn")
  ValueId v;                           // kTensor, kScalar (an int or float the graph computes), kRuntimeList (an int[])
  std::string scalar;                  // kScalar's type: "I", "F", "B" or "N" (a number)
  std::vector<Slot> items;             // list, tuple, dict values
  std::vector<std::string> keys;       // dict keys
  const PickleValue* module = nullptr;  // kModule
  std::shared_ptr<Pending> pending;    // kPendingList
  // kScalar (one number), kRuntimeList (its items): what the graph will
  // compute, known from the input shapes while reading (x.size(2), x.dim() - 2).
  std::optional<std::vector<double>> known;
  bool from_shape = false;  // kScalar, kRuntimeList: computed from a tensor's shape

  bool constant_number() const { return k == K::kInt || k == K::kFloat || k == K::kBool; }
};

// A call that returns a Tensor[]: its node is made once the code says how
// many elements it has (`a, b, = torch.chunk(x, 2)`).
struct Pending {
  std::string op, name;
  std::vector<ValueId> inputs;
  Attributes attributes;
  std::optional<NodeId> node;
};

Slot constant_int(std::int64_t x) {
  Slot s;
  s.k = Slot::K::kInt;
  s.i = x;
  return s;
}

// A method or function in the code.
struct Function {
  Where where;  // its def line
  std::vector<std::string> params;
  std::vector<std::string> defaults;  // each parameter's default as written ("None", "[0, 0]"); empty: none
  std::vector<Line> body;
  // Returns None and changes nothing (no in-place op, no submodule call): an
  // argument check (`_check_input_dim`, `_verify_batch_size`).
  bool check = false;
};

// A line that may change a value in place: a call of an in-place op
// (`torch.add_(`, not `__contains__(`) or of a module's method.
bool may_mutate(const std::string& text) {
  for (std::size_t i = text.find("_("); i != std::string::npos; i = text.find("_(", i + 1)) {
    if (i > 0 && text[i - 1] != '_' && (std::isalnum(static_cast<unsigned char>(text[i - 1])))) return true;
  }
  return text.find(").forward(") != std::string::npos;
}

std::optional<DType> storage_dtype(std::string_view type) {
  static const std::map<std::string, DType, std::less<>> kTypes = {
      {"torch.FloatStorage", DType::kFloat32}, {"torch.DoubleStorage", DType::kFloat64}, {"torch.HalfStorage", DType::kFloat16},
      {"torch.BFloat16Storage", DType::kBFloat16}, {"torch.LongStorage", DType::kInt64}, {"torch.IntStorage", DType::kInt32},
      {"torch.ShortStorage", DType::kInt16}, {"torch.CharStorage", DType::kInt8}, {"torch.ByteStorage", DType::kUInt8},
      {"torch.BoolStorage", DType::kBool}, {"torch.ComplexFloatStorage", DType::kComplex64}};
  auto it = kTypes.find(type);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

class Reader {
 public:
  Reader(const ZipArchive& zip, const LoadLimits& limits, const std::vector<Shape>& input_shapes)
      : zip_(zip), limits_(limits), input_shapes_(input_shapes) {}

  ExportedGraph read() {
    for (const ZipEntry& e : zip_.entries()) {
      if (name_in_root(e.name) == "data.pkl") root_ = e.name.substr(0, e.name.size() - std::string_view("data.pkl").size());
    }
    if (!zip_.find(root_ + "data.pkl")) {
      fail(ErrorCode::kUnsupported, zip_.source() + ": no data.pkl: not a TorchScript archive (torch.jit.save)");
    }
    data_ = read_pickle(zip_.read(root_ + "data.pkl").bytes, zip_.source() + ":" + root_ + "data.pkl", limits_);
    if (zip_.find(root_ + "constants.pkl")) {
      constants_ = read_pickle(zip_.read(root_ + "constants.pkl").bytes, zip_.source() + ":" + root_ + "constants.pkl", limits_);
    }
    if (data_->kind != PKind::kBuild || data_->callable().substr(0, 10) != "__torch__.") {
      fail(ErrorCode::kUnsupported, zip_.source() + ":" + root_ + "data.pkl holds a " + std::string(data_->callable()) +
                                        ", not a TorchScript module (a torch.save file?)");
    }
    Slot self;
    self.k = Slot::K::kModule;
    self.module = data_.get();
    const Function& forward = method(std::string(data_->callable()), "forward", Where{zip_.source(), 0});
    std::vector<Slot> args;
    if (!input_shapes_.empty() && input_shapes_.size() + 1 != forward.params.size()) {
      fail(ErrorCode::kInvalidArgument, forward.where.str() + ": forward takes " + std::to_string(forward.params.size() - 1) + " inputs, given " +
                                            std::to_string(input_shapes_.size()) + " input shapes");
    }
    for (std::size_t i = 1; i < forward.params.size(); ++i) {
      Slot in;
      in.k = Slot::K::kTensor;
      in.v = graph().add_input(graph().unique_value_name(forward.params[i]));
      if (!input_shapes_.empty()) {
        checked_nbytes(DType::kFloat32, input_shapes_[i - 1]);
        shapes_[in.v] = input_shapes_[i - 1];
      }
      args.push_back(in);
    }
    const Slot result = call(forward, self, args, {}, 0);
    std::vector<ValueId> outputs;
    out_.out_spec = spec_of(result, outputs, forward.where);
    graph().set_outputs(outputs);
    std::vector<TreeSpec> leaves(graph().inputs().size(), TreeSpec::leaf());
    out_.in_spec = TreeSpec::tuple({TreeSpec::tuple(std::move(leaves)), TreeSpec::dict({})});
    inplace_to_functional(graph());
    // What shape queries left behind (sizes read for a branch that is gone).
    TransformContext dce(std::nullopt, nullptr, 0);
    dead_code_elimination(graph(), dce);
    // The shapes followed from the input shapes, on the values (as the native
    // reader's probe gives them): what the activation's channel ranges and
    // the page's shapes read.
    // Nodes made since (the scatters of writes in place) follow from theirs.
    if (!input_shapes_.empty()) {
      for (NodeId id : graph().nodes()) {
        const Node& n = graph().node(id);
        if (std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) { return !shapes_.count(v); })) record(id);
      }
    }
    for (const auto& [v, shape] : shapes_) {
      if (graph().is_live(v) && !graph().value(v).shape) graph().set_value_type(v, graph().value(v).dtype, symbolic(shape));
    }
    out_.metadata["reader"] = "torchscript archive";
    out_.metadata["source"] = zip_.source();
    // Control flow decided by the input shapes' sizes (not only their ranks),
    // as the native reader says it: the graph holds for inputs of these shapes.
    if (specialized_) {
      std::string shapes;
      for (const Shape& sh : input_shapes_) shapes += (shapes.empty() ? "" : ", ") + shape_str(symbolic(sh));
      out_.metadata["specialized_to_input_shapes"] = shapes;
    }
    graph().verify();
    return std::move(out_);
  }

 private:
  Graph& graph() { return out_.graph; }
  // `base`, or base.1, base.2, ...: unique among the nodes.
  std::string node_name(const std::string& base) {
    std::string name = base;
    for (int k = 1; graph().find_node(name); ++k) name = base + "." + std::to_string(k);
    return name;
  }
  // list[index] of an int[] the graph computes (x.size()[1]).
  Slot list_item(const Slot& list, std::int64_t index, const std::string& hint) {
    Attributes attrs;
    attrs.set("idx", index);
    attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"list"});
    attrs.set(std::string(kOverloadAttribute), std::string("t"));
    Slot out;
    out.k = Slot::K::kScalar;
    out.scalar = "I";
    out.from_shape = list.from_shape;
    out.v = graph().node(graph().add_node("aten::__getitem__", {list.v}, {NewValue(graph().unique_value_name(hint))}, std::move(attrs), node_name(hint))).outputs[0];
    if (list.known) {
      const auto n = static_cast<std::int64_t>(list.known->size());
      if (index < -n || index >= n) unsupported(Where{zip_.source(), 0}, "index " + std::to_string(index) + " of a list of " + std::to_string(n) + " sizes");
      out.known = std::vector<double>{(*list.known)[static_cast<std::size_t>(index < 0 ? index + n : index)]};
      numbers_[out.v] = *out.known;
    }
    return out;
  }

  // ---- the code's files --------------------------------------------------------
  // A method: "__torch__.torch.nn.modules.conv.___torch_mangle_4.Conv2d", "forward" is
  // `def forward(` in `class Conv2d(` of code/__torch__/torch/nn/modules/conv/___torch_mangle_4.py.
  const Function& method(const std::string& qualified_class, const std::string& name, const Where& from) {
    const auto dot = qualified_class.rfind('.');
    return find_def(qualified_class.substr(0, dot), qualified_class.substr(dot + 1), name, from);
  }
  // A function: "__torch__.torch.nn.functional.relu" is `def relu(` of code/__torch__/torch/nn/functional.py.
  const Function& function(const std::string& qualified, const Where& from) {
    const auto dot = qualified.rfind('.');
    return find_def(qualified.substr(0, dot), "", qualified.substr(dot + 1), from);
  }

  const Function& find_def(const std::string& module, const std::string& cls, const std::string& name, const Where& from) {
    const std::string key = module + "|" + cls + "|" + name;
    if (auto it = functions_.find(key); it != functions_.end()) return it->second;
    std::string path = module;
    std::replace(path.begin(), path.end(), '.', '/');
    const std::string entry = root_ + "code/" + path + ".py";
    const std::string what = cls.empty() ? "function " + module + "." + name : "method " + name + " of " + module + "." + cls;
    if (!zip_.find(entry)) unsupported(from, "no code for the " + what + " (entry '" + entry + "' is not in the archive)");
    const std::vector<Line>& lines = file(entry);
    std::size_t i = 0, def_indent = 0;
    if (!cls.empty()) {
      while (i < lines.size() && !(lines[i].indent == 0 && lines[i].text.rfind("class " + cls + "(", 0) == 0)) ++i;
      if (i + 1 >= lines.size()) unsupported(from, "no class " + cls + " in '" + entry + "'");
      def_indent = lines[++i].indent;
      if (def_indent == 0) unsupported(from, "class " + cls + " in '" + entry + "' has no body");
    }
    const std::string wanted = "def " + name + "(";
    for (; i < lines.size(); ++i) {
      if (!cls.empty() && lines[i].indent < def_indent) break;
      if (lines[i].indent == def_indent && lines[i].text.rfind(wanted, 0) == 0) break;
    }
    if (i >= lines.size() || lines[i].indent != def_indent || lines[i].text.rfind(wanted, 0) != 0) {
      unsupported(from, "no " + what + " in '" + entry + "'");
    }
    Function fn;
    fn.where = Where{zip_.source() + ":" + entry, lines[i].number};
    // def name(self: T, x: Tensor, ...) -> R:
    const std::string& def = lines[i].text;
    int depth = 0;
    std::string param;
    for (std::size_t k = def.find('(') + 1; k < def.size(); ++k) {
      const char c = def[k];
      if ((c == ',' || c == ')') && depth == 0) {
        // "name: Type=default"
        const std::string p = param.substr(0, param.find(':'));
        const auto b = p.find_first_not_of(' '), e = p.find_last_not_of(' ');
        if (b != std::string::npos) {
          fn.params.push_back(p.substr(b, e - b + 1));
          const auto eq = top_level_equals(param);
          fn.defaults.push_back(eq == std::string::npos ? std::string() : param.substr(eq + 1));
        }
        param.clear();
        if (c == ')') break;
        continue;
      }
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      param += c;
    }
    for (++i; i < lines.size() && lines[i].indent > def_indent; ++i) fn.body.push_back(lines[i]);
    fn.check = def.find("-> NoneType:") != std::string::npos &&
               std::none_of(fn.body.begin(), fn.body.end(), [](const Line& l) { return may_mutate(l.text); });
    return functions_.emplace(key, std::move(fn)).first->second;
  }

  const std::vector<Line>& file(const std::string& entry) {
    if (auto it = files_.find(entry); it != files_.end()) return it->second;
    return files_.emplace(entry, logical_lines(zip_.read(entry).text())).first->second;
  }

  // ---- running the code ----------------------------------------------------------
  Slot call(const Function& fn, const Slot& self, const std::vector<Slot>& args, const std::vector<std::pair<std::string, Slot>>& kwargs, int depth) {
    if (depth > 64) unsupported(fn.where, "calls nest deeper than 64 (recursion?)");
    std::unordered_map<std::string, Slot> env;
    std::size_t next = 0;
    const bool method = !fn.params.empty() && fn.params[0] == "self";
    if (method) env["self"] = self;
    for (std::size_t p = method ? 1 : 0; p < fn.params.size(); ++p) {
      if (next < args.size()) {
        env[fn.params[p]] = args[next++];
        continue;
      }
      auto kw = std::find_if(kwargs.begin(), kwargs.end(), [&](const auto& a) { return a.first == fn.params[p]; });
      if (kw != kwargs.end()) {
        env[fn.params[p]] = kw->second;
      } else if (!fn.defaults[p].empty()) {
        env[fn.params[p]] = constant_expression(fn.defaults[p], fn.where, depth);
      } else {
        unsupported(fn.where, "parameter '" + fn.params[p] + "' is not given");
      }
    }
    if (next != args.size()) unsupported(fn.where, "called with " + std::to_string(args.size()) + " arguments");
    if (fn.check) {
      // A check the reader cannot follow (its loops and branches on the
      // input) computes nothing the graph uses: dropped, as a branch that only raises is.
      try {
        run_block(fn, 0, fn.body.size(), env, depth);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kUnsupported && e.code() != ErrorCode::kNeedsInputShapes) throw;
      }
      return Slot{};
    }
    std::optional<Slot> result = run_block(fn, 0, fn.body.size(), env, depth);
    return result ? std::move(*result) : Slot{};
  }

  // The lines [begin, end) of `fn`'s body, one block: what a `return` in it
  // returns, or nullopt when it runs to its end.
  std::optional<Slot> run_block(const Function& fn, std::size_t begin, std::size_t end, std::unordered_map<std::string, Slot>& env, int depth) {
    for (std::size_t li = begin; li < end; ++li) {
      const Line& line = fn.body[li];
      const Where w{fn.where.entry, line.number};
      const std::vector<Tok> toks = tokenize(line.text, w);
      if (toks[0].t == Tok::T::kName) {
        if (toks[0].s == "if") {
          // if COND: BLOCK [else: BLOCK], each block the lines indented under it.
          const std::size_t then_begin = li + 1, then_end = block_end(fn, then_begin, end, line.indent);
          std::size_t else_begin = then_end, else_end = then_end;
          if (then_end < end && fn.body[then_end].indent == line.indent && fn.body[then_end].text == "else:") {
            else_begin = then_end + 1;
            else_end = block_end(fn, else_begin, end, line.indent);
          }
          if (line.text.back() != ':') bad_code(w, "an if without its ':'");
          std::vector<Tok> cond(toks.begin() + 1, toks.end() - 2);  // without `if` and the ':'
          cond.push_back(Tok{});
          ExprParser p(cond, 0, w);
          const Slot c = static_value(eval(p.expr(), env, w, "cond", depth));
          bool take;
          if (c.constant_number() || c.k == Slot::K::kNone) {
            take = c.k == Slot::K::kBool ? c.b : c.k == Slot::K::kInt ? c.i != 0 : c.k == Slot::K::kFloat ? c.f != 0 : false;
          } else if (only_raises(fn, then_begin, then_end)) {
            take = false;  // an argument check (`if x.dim() != 4: raise`): the model runs when it passes
          } else if (only_raises(fn, else_begin, else_end) && else_begin != else_end) {
            take = true;
          } else {
            run_time(w, c, "this 'if'");
          }
          const auto r = take ? run_block(fn, then_begin, then_end, env, depth) : run_block(fn, else_begin, else_end, env, depth);
          if (r) return r;
          li = else_end - 1;
          continue;
        }
        if (toks[0].s == "for") {
          if (auto r = run_for(fn, li, end, env, depth)) return r;
          li = block_end(fn, li + 1, end, line.indent) - 1;
          continue;
        }
        static const std::set<std::string> kControl = {"elif", "else", "while", "with", "try", "except", "raise",
                                                       "assert", "del", "break", "continue", "global", "lambda", "yield"};
        if (kControl.count(toks[0].s)) unsupported(w, "'" + toks[0].s + "' (loops and these scripted statements are not read yet)");
        if (toks[0].s == "pass") continue;
        if (toks[0].s == "return") {
          ExprParser p(toks, 1, w);
          return p.at_end() ? Slot{} : eval(p.expr_list(), env, w, "out", depth);
        }
      }
      // TARGETS = EXPR
      std::size_t eq = 0;
      int level = 0;
      for (std::size_t k = 0; k < toks.size(); ++k) {
        if (toks[k].t != Tok::T::kOp) continue;
        if (toks[k].s == "(" || toks[k].s == "[" || toks[k].s == "{") ++level;
        if (toks[k].s == ")" || toks[k].s == "]" || toks[k].s == "}") --level;
        if (toks[k].s == "=" && level == 0) {
          eq = k;
          break;
        }
      }
      if (eq == 0) {
        ExprParser p(toks, 0, w);
        eval(p.expr_list(), env, w, "t", depth);  // a call for its effect
        continue;
      }
      std::vector<std::string> targets;
      // NAME : TYPE = EXPR (an annotated assignment): the type is not a value.
      const bool annotated = eq > 2 && toks[0].t == Tok::T::kName && toks[1].t == Tok::T::kOp && toks[1].s == ":";
      for (std::size_t k = 0; k < (annotated ? 1 : eq); ++k) {
        if (toks[k].t == Tok::T::kName) targets.push_back(toks[k].s);
        else if (!(toks[k].t == Tok::T::kOp && toks[k].s == ",")) unsupported(w, "assigns to something other than names");
      }
      const bool unpack = !annotated && eq > 1;
      ExprParser p(toks, eq + 1, w);
      Slot value = eval(p.expr_list(), env, w, targets.size() == 1 ? targets[0] : "t", depth);
      if (!p.at_end()) bad_code(w, "more after the expression");
      if (!unpack) {
        env[targets[0]] = std::move(value);
        continue;
      }
      std::vector<Slot> parts = unpacked(value, targets, w);
      for (std::size_t k = 0; k < targets.size(); ++k) env[targets[k]] = std::move(parts[k]);
    }
    return std::nullopt;
  }

  // for NAME in range(N): / for NAME in LIST: with the trip count known
  // while reading (the rank of a tensor, a list's length): unrolled.
  std::optional<Slot> run_for(const Function& fn, std::size_t li, std::size_t end, std::unordered_map<std::string, Slot>& env, int depth) {
    const Line& line = fn.body[li];
    const Where w{fn.where.entry, line.number};
    const std::vector<Tok> toks = tokenize(line.text, w);
    if (toks.size() < 6 || toks[1].t != Tok::T::kName || toks[2].t != Tok::T::kName || toks[2].s != "in" || line.text.back() != ':') {
      unsupported(w, "a 'for' other than `for NAME in ITERABLE:`");
    }
    std::vector<Tok> it(toks.begin() + 3, toks.end() - 2);  // without `for NAME in` and the ':'
    it.push_back(Tok{});
    ExprParser p(it, 0, w);
    const Expr iterable = p.expr();
    std::vector<Slot> items;
    if (iterable.k == Expr::K::kCall && iterable.items[0].k == Expr::K::kName && iterable.items[0].s == "range" && !env.count("range")) {
      std::vector<std::int64_t> bounds;
      for (std::size_t k = 1; k < iterable.items.size(); ++k) {
        const Slot b = static_value(eval(iterable.items[k], env, w, "n", depth));
        if (b.k != Slot::K::kInt) run_time(w, b, "this loop's trip count");
        bounds.push_back(b.i);
      }
      if (bounds.empty() || bounds.size() > 3) bad_code(w, "range() takes 1 to 3 arguments");
      const std::int64_t lo = bounds.size() == 1 ? 0 : bounds[0], hi = bounds.size() == 1 ? bounds[0] : bounds[1];
      const std::int64_t step = bounds.size() == 3 ? bounds[2] : 1;
      if (step == 0) bad_code(w, "range() with a step of 0");
      for (std::int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) {
        if (items.size() >= kMaxTrips) unsupported(w, "a loop of more than " + std::to_string(kMaxTrips) + " trips");
        items.push_back(constant_int(i));
      }
    } else {
      const Slot v = eval(iterable, env, w, "item", depth);
      auto xs = as_items(v);
      if (!xs) run_time(w, v, "this loop's trip count");
      items = std::move(*xs);
    }
    const std::size_t body_end = block_end(fn, li + 1, end, line.indent);
    for (Slot& item : items) {
      if (++trips_ > kMaxTotalTrips) unsupported(w, "loops run more than " + std::to_string(kMaxTotalTrips) + " trips in all");
      env[toks[1].s] = std::move(item);
      if (auto r = run_block(fn, li + 1, body_end, env, depth)) return r;
    }
    return std::nullopt;
  }

  // A known scalar (a size the input shapes say) as the constant it is where
  // the reader must decide something by it.
  Slot static_value(const Slot& s) {
    if (s.k != Slot::K::kScalar || !s.known || s.known->size() != 1) return s;
    specialized_ = true;
    const double x = (*s.known)[0];
    if (s.scalar == "F" || (s.scalar == "N" && x != std::floor(x))) {
      Slot f;
      f.k = Slot::K::kFloat;
      f.f = x;
      return f;
    }
    if (s.scalar == "B") {
      Slot b;
      b.k = Slot::K::kBool;
      b.b = x != 0;
      return b;
    }
    return constant_int(static_cast<std::int64_t>(x));
  }

  // The items of a list the reader sees, or of an int[] the graph computes whose length the input shapes say.
  std::optional<std::vector<Slot>> as_items(const Slot& v) {
    if (v.k == Slot::K::kList || v.k == Slot::K::kTuple) return v.items;
    if (v.k != Slot::K::kRuntimeList || !v.known) return std::nullopt;
    std::vector<Slot> out;
    for (std::size_t k = 0; k < v.known->size(); ++k) out.push_back(list_item(v, static_cast<std::int64_t>(k), "size"));
    return out;
  }

  // Refuses to decide `what` by `c`, a value the graph computes: typed by why.
  [[noreturn]] void run_time(const Where& w, const Slot& c, const std::string& what) {
    if (c.from_shape && input_shapes_.empty()) {
      fail(ErrorCode::kNeedsInputShapes, w.str() + ": " + what + " depends on the input's shape: read the archive with the input shapes "
                                         "(read_torchscript_archive's input_shapes, loadModel's inputShapes, --input-shape)");
    }
    if (c.from_shape) {
      unsupported(w, what + " depends on a size the reader cannot follow: " +
                         (lost_shape_.empty() ? std::string("a shape it does not know") : "no shape rule past node " + lost_shape_));
    }
    unsupported(w, what + " depends on a value known only at run time (the graph would depend on the input)");
  }

  // A default or a class constant as written ("None", "[0, 0]", "1.0000000000000001e-05").
  Slot constant_expression(const std::string& text, const Where& w, int depth) {
    const std::vector<Tok> toks = tokenize(text, w);
    ExprParser p(toks, 0, w);
    std::unordered_map<std::string, Slot> none;
    Slot v = eval(p.expr(), none, w, "default", depth);
    if (!p.at_end()) bad_code(w, "more after the value '" + text + "'");
    return v;
  }

  // The position of the first '=' outside brackets, npos when none.
  static std::size_t top_level_equals(const std::string& text) {
    int depth = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c == '=' && depth == 0 && (i + 1 >= text.size() || text[i + 1] != '=') && (i == 0 || (text[i - 1] != '=' && text[i - 1] != '!' && text[i - 1] != '<' && text[i - 1] != '>'))) return i;
    }
    return std::string::npos;
  }

  // The end of the block that starts at `begin`: the first line at most as indented as its header.
  static std::size_t block_end(const Function& fn, std::size_t begin, std::size_t end, std::size_t header_indent) {
    std::size_t i = begin;
    while (i < end && fn.body[i].indent > header_indent) ++i;
    return i;
  }
  // A block that does nothing but raise (a check's failing branch), strings built for its message aside.
  static bool only_raises(const Function& fn, std::size_t begin, std::size_t end) {
    bool raises = false;
    for (std::size_t i = begin; i < end; ++i) {
      const std::string& t = fn.body[i].text;
      if (t.find("ops.prim.RaiseException(") != std::string::npos) raises = true;
      else if (t.find("torch.format(") == std::string::npos && t != "pass" && t.find("= \"") == std::string::npos) return false;
    }
    return raises;
  }

  std::vector<Slot> unpacked(const Slot& v, const std::vector<std::string>& names, const Where& w) {
    const std::size_t n = names.size();
    if (v.k == Slot::K::kTuple || v.k == Slot::K::kList) {
      if (v.items.size() != n) unsupported(w, "unpacks " + std::to_string(v.items.size()) + " values into " + std::to_string(n));
      return v.items;
    }
    std::vector<Slot> out(n);
    if (v.k == Slot::K::kPendingList) {
      Pending& p = *v.pending;
      if (p.node) unsupported(w, "unpacks a list result a second time");
      std::vector<NewValue> outs;
      for (const auto& name : names) outs.emplace_back(graph().unique_value_name(name));
      p.node = graph().add_node(p.op, p.inputs, std::move(outs), p.attributes, node_name(p.name));
      record(*p.node);
      for (std::size_t k = 0; k < n; ++k) {
        out[k].k = Slot::K::kTensor;
        out[k].v = graph().node(*p.node).outputs[k];
      }
      return out;
    }
    if (v.k == Slot::K::kRuntimeList) {
      // `b, c, h, w = x.size()`: element k of a list computed at run time.
      for (std::size_t k = 0; k < n; ++k) out[k] = list_item(v, static_cast<std::int64_t>(k), names[k]);
      return out;
    }
    unsupported(w, "unpacks a value that is not a tuple or a list");
  }

  Slot eval(const Expr& e, std::unordered_map<std::string, Slot>& env, const Where& w, const std::string& hint, int depth) {
    using K = Expr::K;
    switch (e.k) {
      case K::kInt: return constant_int(e.i);
      case K::kFloat: {
        Slot s;
        s.k = Slot::K::kFloat;
        s.f = e.f;
        return s;
      }
      case K::kStr: {
        Slot s;
        s.k = Slot::K::kString;
        s.s = e.s;
        return s;
      }
      case K::kName: {
        if (auto it = env.find(e.s); it != env.end()) return it->second;
        if (e.s == "None") return Slot{};
        if (e.s == "True" || e.s == "False") {
          Slot s;
          s.k = Slot::K::kBool;
          s.b = e.s == "True";
          return s;
        }
        Slot path;
        path.k = Slot::K::kPath;
        path.s = e.s;  // torch, ops, CONSTANTS, int, getattr, __torch__, ...
        return path;
      }
      case K::kTuple:
      case K::kList: {
        Slot s;
        s.k = e.k == K::kTuple ? Slot::K::kTuple : Slot::K::kList;
        for (const Expr& x : e.items) s.items.push_back(eval(x, env, w, hint, depth));
        return s;
      }
      case K::kDict: {
        Slot s;
        s.k = Slot::K::kDict;
        for (std::size_t k = 0; k + 1 < e.items.size(); k += 2) {
          const Slot key = eval(e.items[k], env, w, hint, depth);
          if (key.k != Slot::K::kString) unsupported(w, "a dict with a key that is not a string");
          s.keys.push_back(key.s);
          s.items.push_back(eval(e.items[k + 1], env, w, key.s, depth));
        }
        return s;
      }
      case K::kNeg: {
        const Slot x = eval(e.items[0], env, w, hint, depth);
        if (x.k == Slot::K::kInt) return constant_int(-x.i);
        if (x.k == Slot::K::kFloat) {
          Slot s = x;
          s.f = -x.f;
          return s;
        }
        unsupported(w, "negates a value the graph computes");
      }
      case K::kIndex: {
        const Slot base = eval(e.items[0], env, w, hint, depth);
        const Slot index = static_value(eval(e.items[1], env, w, hint, depth));
        if ((base.k == Slot::K::kTuple || base.k == Slot::K::kList) && index.k == Slot::K::kInt) {
          std::int64_t i = index.i;
          if (i < 0) i += static_cast<std::int64_t>(base.items.size());
          if (i < 0 || i >= static_cast<std::int64_t>(base.items.size())) unsupported(w, "an index past the end");
          return base.items[static_cast<std::size_t>(i)];
        }
        if (base.k == Slot::K::kRuntimeList && index.k == Slot::K::kInt) return list_item(base, index.i, hint);
        if (base.k == Slot::K::kDict && index.k == Slot::K::kString) {
          const auto at = std::find(base.keys.begin(), base.keys.end(), index.s);
          if (at == base.keys.end()) unsupported(w, "no key '" + index.s + "' in the dict");
          return base.items[static_cast<std::size_t>(at - base.keys.begin())];
        }
        if (index.k == Slot::K::kScalar) run_time(w, index, "this index");
        unsupported(w, "indexes a value whose elements the reader cannot see");
      }
      case K::kAttr: {
        const Slot base = eval(e.items[0], env, w, hint, depth);
        if (base.k == Slot::K::kPath) {
          if (base.s == "CONSTANTS" && e.s.size() > 1 && e.s[0] == 'c') return constant(e.s, w);
          Slot p = base;
          p.s += "." + e.s;
          return p;
        }
        if (base.k == Slot::K::kModule) return attribute(*base.module, e.s, w);
        unsupported(w, "reads attribute '" + e.s + "' of a value that is not a module");
      }
      case K::kCall: return eval_call(e, env, w, hint, depth);
    }
    unsupported(w, "an expression the reader does not know");
  }

  Slot eval_call(const Expr& e, std::unordered_map<std::string, Slot>& env, const Where& w, const std::string& hint, int depth) {
    const Expr& callee = e.items[0];
    // annotate(List[Optional[Tensor]], v): the type is not a value.
    if (callee.k == Expr::K::kName && (callee.s == "annotate" || callee.s == "unchecked_cast") && !env.count(callee.s)) {
      if (e.items.size() != 3) bad_code(w, callee.s + " takes a type and a value");
      return eval(e.items[2], env, w, hint, depth);
    }
    if (callee.k == Expr::K::kName && callee.s == "uninitialized" && !env.count(callee.s)) return Slot{};
    std::vector<Slot> args;
    std::vector<std::pair<std::string, Slot>> kwargs;
    const std::size_t positional = e.items.size() - 1 - e.keywords.size();
    for (std::size_t k = 1; k < e.items.size(); ++k) {
      Slot v = eval(e.items[k], env, w, hint, depth);
      if (k - 1 < positional) args.push_back(std::move(v));
      else kwargs.emplace_back(e.keywords[k - 1 - positional], std::move(v));
    }
    // (module).forward(x): the submodule's method, inlined.
    if (callee.k == Expr::K::kAttr) {
      const Slot object = eval(callee.items[0], env, w, hint, depth);
      if (object.k == Slot::K::kModule) {
        const Function& fn = method(std::string(object.module->callable()), callee.s, w);
        return call(fn, object, args, kwargs, depth + 1);
      }
    }
    const Slot f = eval(callee, env, w, hint, depth);
    if (f.k != Slot::K::kPath) unsupported(w, "calls a value that is not a function");
    const std::string& name = f.s;
    if (name == "getattr") {
      if (args.size() != 2 || args[0].k != Slot::K::kModule || args[1].k != Slot::K::kString) unsupported(w, "getattr of something other than a module's attribute");
      return attribute(*args[0].module, args[1].s, w);
    }
    if (auto folded = fold(name, args)) return *folded;
    if (auto listed = list_op(name, args, e, env, w)) return *listed;
    if (name == "torch.dim" && args.size() == 1 && is_tensor(args[0])) {
      if (auto it = shapes_.find(args[0].v); it != shapes_.end()) return constant_int(static_cast<std::int64_t>(it->second.size()));
    }
    if (name == "torch.len" && args.size() == 1 && args[0].k == Slot::K::kRuntimeList) {
      // len(x.size()): aten::len.t(t[] a) -> int, at run time
      Attributes attrs;
      attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"a"});
      attrs.set(std::string(kOverloadAttribute), std::string("t"));
      Slot out;
      out.k = Slot::K::kScalar;
      out.scalar = "I";
      out.v = graph().node(graph().add_node("aten::len", {args[0].v}, {NewValue(graph().unique_value_name(hint))}, std::move(attrs), node_name(hint))).outputs[0];
      out.from_shape = true;
      return out;
    }
    if (name == "torch.device") {
      if (args.size() != 1 || args[0].k != Slot::K::kString) unsupported(w, "torch.device of something other than a string");
      return args[0];
    }
    if (name == "int" || name == "float" || name == "bool") {
      if (args.size() != 1) bad_code(w, name + "() takes one argument");
      const Slot& a = args[0];
      if (a.constant_number()) {
        const double x = a.k == Slot::K::kInt ? static_cast<double>(a.i) : a.k == Slot::K::kFloat ? a.f : a.b;
        Slot s;
        if (name == "int") return constant_int(static_cast<std::int64_t>(x));
        s.k = name == "float" ? Slot::K::kFloat : Slot::K::kBool;
        s.f = x;
        s.b = x != 0;
        return s;
      }
      return aten(name == "int" ? "Int" : name == "float" ? "Float" : "Bool", args, kwargs, w, hint);
    }
    if (name == "ops.prim.NumToTensor") {
      if (args.size() != 1 || (args[0].k != Slot::K::kScalar && !args[0].constant_number())) unsupported(w, "NumToTensor of a value that is not a number");
      Slot out;
      out.k = Slot::K::kTensor;
      std::vector<ValueId> ins{as_value(args[0], hint)};
      Attributes attrs;  // prim::NumToTensor.Scalar(Scalar a) -> Tensor
      attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"a"});
      attrs.set(std::string(kOverloadAttribute), std::string("Scalar"));
      out.v = graph().node(graph().add_node("prim::NumToTensor", ins, {NewValue(graph().unique_value_name(hint))}, std::move(attrs), node_name(hint))).outputs[0];
      return out;
    }
    if (name.rfind("torch.", 0) == 0 && name.find('.', 6) == std::string::npos) return aten(name.substr(6), args, kwargs, w, hint);
    if (name.rfind("ops.aten.", 0) == 0) return aten(name.substr(9), args, kwargs, w, hint);
    if (name.rfind("__torch__.", 0) == 0) {  // a function of the code: __torch__.torch.nn.functional.relu
      return call(function(name, w), Slot{}, args, kwargs, depth + 1);
    }
    unsupported(w, "calls " + name + ", which the reader does not know");
  }

  // Python's list operations on lists the reader sees (and int[]s the graph
  // computes whose length the input shapes say): append, +, *, slicing,
  // list(), `in`. nullopt for other calls.
  std::optional<Slot> list_op(const std::string& name, const std::vector<Slot>& args, const Expr& e,
                              std::unordered_map<std::string, Slot>& env, const Where& w) {
    const auto is_list = [](const Slot& x) { return x.k == Slot::K::kList || x.k == Slot::K::kTuple || (x.k == Slot::K::kRuntimeList && x.known); };
    // The same on an int[] whose length is known only at run time: no node says it.
    static const std::set<std::string> kListOps = {"torch.list", "torch.slice", "torch.__contains__", "torch.add", "torch.mul"};
    const auto unknown = [](const Slot& x) { return x.k == Slot::K::kRuntimeList && !x.known; };
    if (kListOps.count(name) && !args.empty() && (unknown(args[0]) || (name == "torch.add" && args.size() == 2 && is_list(args[0]) && unknown(args[1])))) {
      run_time(w, unknown(args[0]) ? args[0] : args[1], "this list operation");
    }
    if (args.empty() || !is_list(args[0])) return std::nullopt;
    if (name == "torch.append" && args.size() == 2) {
      // list.append(x) on a list a name holds: the name's list grows.
      const Expr& target = e.items[1];
      auto it = target.k == Expr::K::kName ? env.find(target.s) : env.end();
      if (it == env.end() || it->second.k != Slot::K::kList) unsupported(w, "appends to a list that is not a name's");
      if (it->second.items.size() >= kMaxTrips) unsupported(w, "a list of more than " + std::to_string(kMaxTrips) + " items");
      it->second.items.push_back(args[1]);
      return Slot{};
    }
    if (name == "torch.len" && args.size() == 1) return constant_int(static_cast<std::int64_t>(as_items(args[0])->size()));
    Slot out;
    out.k = Slot::K::kList;
    if (name == "torch.list" && args.size() == 1) {
      out.items = *as_items(args[0]);
      return out;
    }
    if (name == "torch.add" && args.size() == 2 && is_list(args[1])) {
      out.items = *as_items(args[0]);
      const std::vector<Slot> more = *as_items(args[1]);
      out.items.insert(out.items.end(), more.begin(), more.end());
      return out;
    }
    if (name == "torch.mul" && args.size() == 2) {
      const Slot n = static_value(args[1]);
      if (n.k != Slot::K::kInt) return std::nullopt;
      const std::vector<Slot> items = *as_items(args[0]);
      if (n.i > 0 && items.size() * static_cast<std::size_t>(n.i) > kMaxTrips) unsupported(w, "a list of more than " + std::to_string(kMaxTrips) + " items");
      for (std::int64_t k = 0; k < n.i; ++k) out.items.insert(out.items.end(), items.begin(), items.end());
      return out;
    }
    if (name == "torch.slice" && args.size() >= 1 && args.size() <= 4) {
      const std::vector<Slot> items = *as_items(args[0]);
      std::int64_t bound[3] = {0, static_cast<std::int64_t>(items.size()), 1};
      for (std::size_t k = 1; k < args.size(); ++k) {
        const Slot b = static_value(args[k]);
        if (b.k == Slot::K::kNone) continue;
        if (b.k != Slot::K::kInt) return std::nullopt;
        bound[k - 1] = b.i;
      }
      const auto s = shape_rules::slice(static_cast<std::int64_t>(items.size()), bound[0], bound[1], bound[2]);
      if (!s) unsupported(w, "a list slice with a step that is not positive");
      for (std::int64_t k = 0; k < s->length; ++k) out.items.push_back(items[static_cast<std::size_t>(s->start + k * bound[2])]);
      return out;
    }
    if (name == "torch.__contains__" && args.size() == 2) {
      const Slot key = static_value(args[1]);
      const auto same = [](const Slot& a, const Slot& b) {
        if (a.k == Slot::K::kString || b.k == Slot::K::kString) return a.k == b.k && a.s == b.s;
        const auto num = [](const Slot& x) { return x.k == Slot::K::kInt ? static_cast<double>(x.i) : x.k == Slot::K::kFloat ? x.f : x.b ? 1.0 : 0.0; };
        return num(a) == num(b);
      };
      if (!(key.constant_number() || key.k == Slot::K::kString)) return std::nullopt;
      Slot found;
      found.k = Slot::K::kBool;
      const std::vector<Slot> items = *as_items(args[0]);
      for (const Slot& x : items) {
        const Slot item = static_value(x);
        if (!(item.constant_number() || item.k == Slot::K::kString)) return std::nullopt;
        found.b = found.b || same(item, key);
      }
      return found;
    }
    return std::nullopt;
  }

  // Scripted code's arithmetic and tests on values known while reading
  // (`if training:`, `torch.__is__(stride, None)`, `torch.lt(eps, 0.)`):
  // folded, so that the branch they decide is known.
  static std::optional<Slot> fold(const std::string& name, const std::vector<Slot>& args) {
    auto boolean = [](bool b) {
      Slot s;
      s.k = Slot::K::kBool;
      s.b = b;
      return s;
    };
    const auto known = [](const Slot& x) { return x.constant_number() || x.k == Slot::K::kNone || x.k == Slot::K::kString; };
    if ((name == "torch.__is__" || name == "torch.__isnot__") && args.size() == 2 && (args[1].k == Slot::K::kNone || args[0].k == Slot::K::kNone)) {
      const Slot& other = args[0].k == Slot::K::kNone ? args[1] : args[0];
      if (other.k == Slot::K::kScalar) return std::nullopt;  // an optional the graph computes
      const bool is_none = other.k == Slot::K::kNone;
      return boolean(name == "torch.__is__" ? is_none : !is_none);
    }
    if (name == "torch.__not__" && args.size() == 1 && args[0].constant_number()) {
      return boolean(!(args[0].k == Slot::K::kBool ? args[0].b : args[0].k == Slot::K::kInt ? args[0].i != 0 : args[0].f != 0));
    }
    if (name == "torch.len" && args.size() == 1 && (args[0].k == Slot::K::kList || args[0].k == Slot::K::kTuple)) {
      return constant_int(static_cast<std::int64_t>(args[0].items.size()));
    }
    if (auto x = arithmetic(name, args)) return x;
    static const std::set<std::string> kCompare = {"torch.eq", "torch.ne", "torch.lt", "torch.le", "torch.gt", "torch.ge"};
    if (kCompare.count(name) && args.size() == 2 && known(args[0]) && known(args[1])) {
      const auto num = [](const Slot& x) { return x.k == Slot::K::kInt ? static_cast<double>(x.i) : x.k == Slot::K::kFloat ? x.f : x.b ? 1.0 : 0.0; };
      if (args[0].k == Slot::K::kString || args[1].k == Slot::K::kString || args[0].k == Slot::K::kNone || args[1].k == Slot::K::kNone) {
        if (name != "torch.eq" && name != "torch.ne") return std::nullopt;
        const bool same = args[0].k == args[1].k && args[0].s == args[1].s;
        return boolean(name == "torch.eq" ? same : !same);
      }
      const double a = num(args[0]), b = num(args[1]);
      const std::string op = name.substr(6);
      return boolean(op == "eq" ? a == b : op == "ne" ? a != b : op == "lt" ? a < b : op == "le" ? a <= b : op == "gt" ? a > b : a >= b);
    }
    return std::nullopt;
  }

  // Python's arithmetic on constant numbers (ints stay ints; / is true
  // division), and the loop helpers scripting emits.
  static std::optional<Slot> arithmetic(const std::string& name, const std::vector<Slot>& args) {
    if (args.empty() || args.size() > 3) return std::nullopt;
    for (const Slot& a : args) {
      if (a.k != Slot::K::kInt && a.k != Slot::K::kFloat) return std::nullopt;
    }
    const bool ints = std::all_of(args.begin(), args.end(), [](const Slot& a) { return a.k == Slot::K::kInt; });
    const auto num = [](const Slot& a) { return a.k == Slot::K::kInt ? static_cast<double>(a.i) : a.f; };
    const auto real = [](double x) {
      Slot s;
      s.k = Slot::K::kFloat;
      s.f = x;
      return s;
    };
    const std::string op = name.rfind("torch.", 0) == 0 ? name.substr(6) : name;
    if (args.size() == 3) {
      if (!ints) return std::nullopt;
      if (op == "__derive_index") return constant_int(args[1].i + args[0].i * args[2].i);  // (index, start, step)
      if (op != "__range_length") return std::nullopt;
      const std::int64_t lo = args[0].i, hi = args[1].i, step = args[2].i;
      if (step == 0) return std::nullopt;
      const std::int64_t n = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0) : (lo > hi ? (lo - hi - step - 1) / -step : 0);
      return constant_int(n);
    }
    if (args.size() == 1) {
      const double x = num(args[0]);
      if (op == "neg") return ints ? constant_int(-args[0].i) : real(-x);
      if (op == "floor" || op == "ceil") return constant_int(static_cast<std::int64_t>(op == "floor" ? std::floor(x) : std::ceil(x)));
      return std::nullopt;
    }
    const double a = num(args[0]), b = num(args[1]);
    if (op == "__derive_index" || op == "__range_length") return std::nullopt;  // (the three-argument forms above)
    if (ints) {
      const std::int64_t x = args[0].i, y = args[1].i;
      if (op == "add") return constant_int(x + y);
      if (op == "sub") return constant_int(x - y);
      if (op == "mul") return constant_int(x * y);
      if (op == "floordiv" || op == "remainder") {
        const auto r = op == "floordiv" ? shape_rules::floor_divide(x, y) : shape_rules::remainder(x, y);
        return r ? std::optional<Slot>(constant_int(*r)) : std::nullopt;
      }
      if (op == "min") return constant_int(std::min(x, y));
      if (op == "max") return constant_int(std::max(x, y));
    }
    if (op == "add") return real(a + b);
    if (op == "sub") return real(a - b);
    if (op == "mul") return real(a * b);
    if (op == "div" && b != 0) return real(a / b);
    if (op == "floordiv" && b != 0) return real(std::floor(a / b));
    if (op == "min") return real(std::min(a, b));
    if (op == "max") return real(std::max(a, b));
    return std::nullopt;
  }

  // A constant number (or a scalar the graph computes) as a value: 0-d constants, as the native reader makes them.
  ValueId as_value(const Slot& s, const std::string& hint) {
    if (s.k == Slot::K::kScalar || s.k == Slot::K::kTensor || s.k == Slot::K::kRuntimeList) return s.v;
    Tensor t;
    if (s.k == Slot::K::kInt) t = Tensor::from_vector<std::int64_t>({s.i}, {});
    else if (s.k == Slot::K::kFloat) t = Tensor::from_vector<double>({s.f}, {});
    else if (s.k == Slot::K::kBool) t = Tensor::from_vector<bool>({s.b}, {});
    else fail(ErrorCode::kInternal, "as_value of a slot that is not a number");
    return graph().add_constant(graph().unique_value_name(hint + ".item"), std::move(t));
  }

  // ---- aten calls ---------------------------------------------------------------
  static bool is_tensor(const Slot& s) { return s.k == Slot::K::kTensor; }
  // How well `v` fits schema argument `a`: -1 not at all, 1 by conversion
  // (an int where a float goes, one int for an int[]), 2 exactly.
  static int fit(const detail::SchemaArg& a, const Slot& v) {
    std::string type = a.type;
    if (a.optional()) {
      if (v.k == Slot::K::kNone) return 1;
      type.pop_back();
    }
    const auto all = [&](auto pred) {
      return (v.k == Slot::K::kList || v.k == Slot::K::kTuple) && std::all_of(v.items.begin(), v.items.end(), pred);
    };
    const auto is_int = [](const Slot& x) { return x.k == Slot::K::kInt || (x.k == Slot::K::kScalar && x.scalar == "I"); };
    const auto number = [](const Slot& x) { return x.constant_number() || x.k == Slot::K::kScalar; };
    if (type == "T") return is_tensor(v) ? 2 : -1;
    if (type == "TL") return all(is_tensor) ? 2 : -1;
    if (type == "T?L") return all([](const Slot& x) { return is_tensor(x) || x.k == Slot::K::kNone; }) ? 2 : -1;
    if (type == "I") return is_int(v) ? 2 : (v.k == Slot::K::kScalar && v.scalar != "F") ? 1 : -1;
    if (type == "D" || type == "Y" || type == "M") return is_int(v) ? 1 : -1;
    if (type == "F") return (v.k == Slot::K::kFloat || (v.k == Slot::K::kScalar && v.scalar == "F")) ? 2 : number(v) && v.k != Slot::K::kBool ? 1 : -1;
    if (type == "N") return number(v) ? 1 : -1;
    if (type == "B") return (v.k == Slot::K::kBool || (v.k == Slot::K::kScalar && v.scalar == "B")) ? 2 : -1;
    if (type == "IL") return (v.k == Slot::K::kRuntimeList || all(is_int)) ? 2 : v.k == Slot::K::kInt ? 1 : -1;
    if (type == "FL") return all(number) ? 2 : -1;
    if (type == "BL") return all([](const Slot& x) { return x.k == Slot::K::kBool; }) ? 2 : -1;
    if (type == "S" || type == "V") return v.k == Slot::K::kString ? 2 : -1;
    return -1;
  }

  // The schema whose arguments these are: of those that take them, the one
  // they fit best (the table's order breaks ties).
  const detail::Schema* bind(const std::vector<detail::Schema>& schemas, const std::vector<Slot>& args,
                             const std::vector<std::pair<std::string, Slot>>& kwargs, std::vector<const Slot*>& bound) const {
    const detail::Schema* best = nullptr;
    int best_score = -1;
    std::vector<const Slot*> b;
    for (const detail::Schema& s : schemas) {
      b.assign(s.args.size(), nullptr);
      bool ok = args.size() <= s.args.size();
      int score = 0;
      auto take = [&](std::size_t k, const Slot& v) {
        const int f = fit(s.args[k], v);
        ok = f >= 0;
        score += f;
        b[k] = &v;
      };
      for (std::size_t k = 0; ok && k < args.size(); ++k) {
        if (s.args[k].keyword_only) ok = false;
        else take(k, args[k]);
      }
      for (const auto& kw : kwargs) {  // (not a structured binding: clang 14 cannot capture one)
        if (!ok) break;
        auto it = std::find_if(s.args.begin(), s.args.end(), [&](const detail::SchemaArg& a) { return a.name == kw.first; });
        ok = it != s.args.end() && !b[static_cast<std::size_t>(it - s.args.begin())];
        if (ok) take(static_cast<std::size_t>(it - s.args.begin()), kw.second);
      }
      for (std::size_t k = 0; ok && k < s.args.size(); ++k) ok = b[k] || s.args[k].has_default || s.args[k].optional();
      ok = ok && std::all_of(s.returns.begin(), s.returns.end(), [](const std::string& r) {
        return r == "T" || r == "TL" || r == "I" || r == "F" || r == "N" || r == "B" || r == "IL";
      });
      if (ok && score > best_score) {
        best = &s;
        best_score = score;
        bound = b;
      }
    }
    return best;
  }

  Slot aten(const std::string& name, const std::vector<Slot>& args, const std::vector<std::pair<std::string, Slot>>& kwargs, const Where& w,
            const std::string& hint) {
    const auto& schemas = detail::aten_schemas(name);
    if (schemas.empty()) unsupported(w, "aten::" + name + " is not an operator this build knows");
    std::vector<const Slot*> bound;
    const detail::Schema* s = bind(schemas, args, kwargs, bound);
    if (!s) unsupported(w, "no overload of aten::" + name + " takes these arguments");
    std::vector<ValueId> inputs;
    std::vector<std::string> names;
    Attributes attrs;
    for (std::size_t k = 0; k < s->args.size(); ++k) {
      const Slot* v = bound[k];
      const detail::SchemaArg& a = s->args[k];
      if (!v || v->k == Slot::K::kNone) continue;
      auto input = [&](ValueId id) {
        inputs.push_back(id);
        names.push_back(a.name);
      };
      switch (v->k) {
        case Slot::K::kTensor:
        case Slot::K::kScalar:
        case Slot::K::kRuntimeList: input(v->v); break;
        case Slot::K::kInt: attrs.set(a.name, v->i); break;
        case Slot::K::kFloat: attrs.set(a.name, v->f); break;
        case Slot::K::kBool: attrs.set(a.name, v->b); break;
        case Slot::K::kString: attrs.set(a.name, v->s); break;
        case Slot::K::kList:
        case Slot::K::kTuple: {
          const bool tensors = a.type.rfind("T", 0) == 0;
          if (tensors) {
            std::vector<bool> present;
            for (const Slot& x : v->items) {
              present.push_back(x.k != Slot::K::kNone);
              if (x.k != Slot::K::kNone) input(x.v);
            }
            if (std::find(present.begin(), present.end(), false) != present.end()) attrs.set(a.name, std::move(present));
            break;
          }
          const bool runtime = std::any_of(v->items.begin(), v->items.end(), [](const Slot& x) { return x.k == Slot::K::kScalar; });
          if (runtime) {
            std::vector<ValueId> items;
            for (const Slot& x : v->items) items.push_back(as_value(x, hint + "." + a.name));
            const NodeId list = graph().add_node("prim::ListConstruct", std::move(items), {NewValue(graph().unique_value_name(hint + "." + a.name))}, {},
                                                 node_name(hint + "." + a.name));
            std::vector<double> known;
            for (ValueId x : graph().node(list).inputs) {
              const auto n = number_of(x);
              if (!n) break;
              known.push_back(*n);
            }
            if (known.size() == graph().node(list).inputs.size()) numbers_[graph().node(list).outputs[0]] = std::move(known);
            input(graph().node(list).outputs[0]);
          } else if (a.type.rfind("FL", 0) == 0) {
            std::vector<double> xs;
            for (const Slot& x : v->items) xs.push_back(x.k == Slot::K::kFloat ? x.f : static_cast<double>(x.k == Slot::K::kInt ? x.i : x.b));
            attrs.set(a.name, std::move(xs));
          } else if (a.type.rfind("BL", 0) == 0) {
            std::vector<bool> xs;
            for (const Slot& x : v->items) xs.push_back(x.b);
            attrs.set(a.name, std::move(xs));
          } else {
            std::vector<std::int64_t> xs;
            for (const Slot& x : v->items) xs.push_back(x.i);
            attrs.set(a.name, std::move(xs));
          }
          break;
        }
        default: unsupported(w, "argument '" + a.name + "' of aten::" + name + " is a value the reader cannot pass");
      }
    }
    if (!inputs.empty()) attrs.set(std::string(kArgNamesAttribute), names);
    if (!s->overload.empty()) attrs.set(std::string(kOverloadAttribute), s->overload);
    const std::string op = "aten::" + name;
    if (s->returns.size() == 1 && s->returns[0] == "TL") {
      Slot out;
      out.k = Slot::K::kPendingList;
      out.pending = std::make_shared<Pending>(Pending{op, hint, std::move(inputs), std::move(attrs), std::nullopt});
      return out;
    }
    std::vector<NewValue> outs;
    for (std::size_t k = 0; k < std::max<std::size_t>(1, s->returns.size()); ++k) {
      outs.emplace_back(graph().unique_value_name(s->returns.size() > 1 ? hint + "." + std::to_string(k) : hint));
    }
    const NodeId id = graph().add_node(op, std::move(inputs), std::move(outs), std::move(attrs), node_name(hint));
    record(id);
    static const std::set<std::string> kShapeQueries = {"size", "dim", "len", "numel", "sym_size", "sym_numel"};
    const bool from_shape = kShapeQueries.count(name) || std::any_of(bound.begin(), bound.end(), [](const Slot* v) {
                              return v && (v->from_shape || std::any_of(v->items.begin(), v->items.end(), [](const Slot& x) { return x.from_shape; }));
                            });
    auto slot_of = [&](std::size_t k) {
      Slot out;
      const std::string& r = s->returns.empty() ? std::string("T") : s->returns[k];
      out.k = r == "T" ? Slot::K::kTensor : r == "IL" ? Slot::K::kRuntimeList : Slot::K::kScalar;
      out.scalar = r;
      out.v = graph().node(id).outputs[k];
      if (out.k != Slot::K::kTensor) {
        out.from_shape = from_shape;
        if (auto it = numbers_.find(out.v); it != numbers_.end()) out.known = it->second;
      }
      return out;
    };
    if (s->returns.size() <= 1) return slot_of(0);
    Slot tuple;
    tuple.k = Slot::K::kTuple;
    for (std::size_t k = 0; k < s->returns.size(); ++k) tuple.items.push_back(slot_of(k));
    return tuple;
  }

  // ---- what the input shapes say -------------------------------------------------
  // A value's shape and numbers, as far as the reader follows them.
  detail::Known known_of(ValueId v) const {
    detail::Known k;
    const Value& value = out_.graph.value(v);
    if (auto it = shapes_.find(v); it != shapes_.end()) k.shape = it->second;
    else if (value.is_constant()) k.shape = value.data.shape();
    std::vector<double> xs;
    if (auto it = numbers_.find(v); it != numbers_.end()) xs = it->second;
    else if (value.is_constant() && value.data.numel() <= 64) xs = constant_numbers(value.data);
    if (!xs.empty() || numbers_.count(v)) {
      std::vector<std::int64_t> ints;
      for (double x : xs) {
        if (x != std::floor(x)) return k;
        ints.push_back(static_cast<std::int64_t>(x));
      }
      k.ints = std::move(ints);
    }
    return k;
  }
  static std::vector<double> constant_numbers(const Tensor& t) {
    std::vector<double> out;
    const auto n = static_cast<std::size_t>(t.numel());
    for (std::size_t i = 0; i < n; ++i) {
      switch (t.dtype()) {
        case DType::kInt64: out.push_back(static_cast<double>(t.data_as<std::int64_t>()[i])); break;
        case DType::kInt32: out.push_back(t.data_as<std::int32_t>()[i]); break;
        case DType::kBool: out.push_back(t.data_as<bool>()[i] ? 1 : 0); break;
        case DType::kFloat64: out.push_back(t.data_as<double>()[i]); break;
        default: return {};
      }
    }
    return out;
  }
  // One number a value holds, when the reader knows it.
  std::optional<double> number_of(ValueId v) const {
    if (auto it = numbers_.find(v); it != numbers_.end()) return it->second.size() == 1 ? std::optional<double>(it->second[0]) : std::nullopt;
    const Value& value = out_.graph.value(v);
    if (value.is_constant() && value.data.numel() == 1) {
      const auto xs = constant_numbers(value.data);
      if (xs.size() == 1) return xs[0];
    }
    return std::nullopt;
  }

  // After a node is made: its outputs' shapes and numbers, as far as the rules go.
  void record(NodeId id) {
    const Node& n = graph().node(id);
    const detail::KnownOf known = [this](ValueId v) { return known_of(v); };
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      if (auto sh = detail::infer_shape(n, k, known)) {
        shapes_[n.outputs[k]] = std::move(*sh);
      } else if (lost_shape_.empty() && !n.inputs.empty() && shapes_.count(n.inputs[0])) {
        lost_shape_ = n.name + " (" + n.op + ")";
      }
    }
    if (n.outputs.size() == 1) {
      if (auto xs = numbers_of(n)) numbers_[n.outputs[0]] = std::move(*xs);
    }
  }

  // The numbers a shape query or int arithmetic computes (aten::size,
  // aten::dim, aten::sub.int, ...), when its inputs' are known.
  std::optional<std::vector<double>> numbers_of(const Node& n) const {
    std::vector<std::string> names;
    if (const auto* a = n.attributes.find(kArgNamesAttribute)) {
      if (const auto* v = std::get_if<std::vector<std::string>>(a)) names = *v;
    }
    const auto input = [&](std::string_view arg) -> std::optional<ValueId> {
      for (std::size_t i = 0; i < names.size() && i < n.inputs.size(); ++i) {
        if (names[i] == arg) return n.inputs[i];
      }
      return std::nullopt;
    };
    const auto number = [&](std::string_view arg) -> std::optional<double> {
      if (const AttributeValue* a = n.attributes.find(arg)) {
        if (const auto* i = std::get_if<std::int64_t>(a)) return static_cast<double>(*i);
        if (const auto* d = std::get_if<double>(a)) return *d;
        if (const auto* b = std::get_if<bool>(a)) return *b ? 1.0 : 0.0;
        return std::nullopt;
      }
      const auto v = input(arg);
      return v ? number_of(*v) : std::nullopt;
    };
    const std::string op = n.op.rfind("aten::", 0) == 0 ? n.op.substr(6) : n.op;
    if (op == "size" || op == "dim" || op == "numel" || op == "sym_size" || op == "sym_numel") {
      const auto self = input("self");
      const auto shape = self ? known_of(*self).shape : std::nullopt;
      if (!shape) return std::nullopt;
      if (op == "dim") return std::vector<double>{static_cast<double>(shape->size())};
      if (op == "numel" || op == "sym_numel") {
        double total = 1;
        for (auto d : *shape) total *= static_cast<double>(d);
        return std::vector<double>{total};
      }
      if (const auto dim = number("dim")) {
        auto d = static_cast<std::int64_t>(*dim);
        const auto rank = static_cast<std::int64_t>(shape->size());
        if (d < 0) d += rank;
        if (d < 0 || d >= rank) return std::nullopt;
        return std::vector<double>{static_cast<double>((*shape)[static_cast<std::size_t>(d)])};
      }
      return std::vector<double>(shape->begin(), shape->end());
    }
    if (op == "len") {
      const auto list = input("a");
      if (!list) return std::nullopt;
      auto it = numbers_.find(*list);
      return it == numbers_.end() ? std::nullopt : std::optional<std::vector<double>>(std::vector<double>{static_cast<double>(it->second.size())});
    }
    const auto one = [](double x) { return std::optional<std::vector<double>>(std::vector<double>{x}); };
    // A traced shape computation: sizes as 0-dim tensors (prim::NumToTensor),
    // their arithmetic on tensors (the crop offset (a - b) // 2 of a skip
    // connection), read back by aten::Int.
    if (n.op == "prim::NumToTensor") {
      const auto a = number("a");
      return a ? one(*a) : std::nullopt;
    }
    if (const auto self = input("self")) {
      const auto x = number_of(*self);
      const auto y = number("other");
      if (!x || !y || (known_of(*self).shape && !known_of(*self).shape->empty())) return std::nullopt;
      const double alpha = number("alpha").value_or(1);
      if (op == "add") return one(*x + alpha * *y);
      if (op == "sub") return one(*x - alpha * *y);
      if (op == "mul") return one(*x * *y);
      if (op == "div") return *y == 0 ? std::nullopt : one(*x / *y);
      if (op == "floor_divide") return *y == 0 ? std::nullopt : one(std::floor(*x / *y));
      return std::nullopt;
    }
    if (input("input")) return std::nullopt;  // a tensor op
    const auto a = number("a");
    if (!a) return std::nullopt;
    if (op == "neg") return one(-*a);
    if (op == "floor") return one(std::floor(*a));
    if (op == "Int") return one(std::trunc(*a));
    if (op == "ceil") return one(std::ceil(*a));
    if (op == "Float" || op == "Bool") return one(op == "Bool" ? (*a != 0) : *a);
    const auto b = number("b");
    if (!b) return std::nullopt;
    if (op == "add") return one(*a + *b);
    if (op == "sub") return one(*a - *b);
    if (op == "mul") return one(*a * *b);
    if (op == "div") return *b == 0 ? std::nullopt : one(*a / *b);
    if (op == "floordiv") return *b == 0 ? std::nullopt : one(std::floor(*a / *b));
    if (op == "remainder") return *b == 0 ? std::nullopt : one(*a - std::floor(*a / *b) * *b);
    if (op == "min") return one(std::min(*a, *b));
    if (op == "max") return one(std::max(*a, *b));
    if (op == "eq") return one(*a == *b);
    if (op == "ne") return one(*a != *b);
    if (op == "lt") return one(*a < *b);
    if (op == "le") return one(*a <= *b);
    if (op == "gt") return one(*a > *b);
    if (op == "ge") return one(*a >= *b);
    return std::nullopt;
  }

  // ---- the module's attributes and tensors ---------------------------------------
  Slot attribute(const PickleValue& module, const std::string& name, const Where& w) {
    const PickleValue* state = module.kind == PKind::kBuild && module.items.size() == 2 ? module.items[1].get() : nullptr;
    const PickleValue* v = state ? state->find(name) : nullptr;
    if (v) return from_pickle(*v, "data/", name, w);
    if (auto c = class_constant(std::string(module.callable()), name, w)) return *c;
    unsupported(w, "module " + std::string(module.callable()) + " has no attribute '" + name + "'");
  }

  // A class's `name : Final[T] = value` (a scripted module's constants: eps, momentum, ...).
  std::optional<Slot> class_constant(const std::string& qualified_class, const std::string& name, const Where& w) {
    const auto dot = qualified_class.rfind('.');
    std::string path = qualified_class.substr(0, dot);
    std::replace(path.begin(), path.end(), '.', '/');
    const std::string entry = root_ + "code/" + path + ".py";
    if (!zip_.find(entry)) return std::nullopt;
    const std::vector<Line>& lines = file(entry);
    const std::string cls = "class " + qualified_class.substr(dot + 1) + "(";
    std::size_t i = 0;
    while (i < lines.size() && !(lines[i].indent == 0 && lines[i].text.rfind(cls, 0) == 0)) ++i;
    for (++i; i < lines.size() && lines[i].indent > 0; ++i) {
      const std::string& t = lines[i].text;
      if (t.rfind(name + " : Final[", 0) != 0) continue;
      const auto eq = top_level_equals(t);
      if (eq == std::string::npos) return std::nullopt;
      return constant_expression(t.substr(eq + 1), Where{zip_.source() + ":" + entry, lines[i].number}, 0);
    }
    return std::nullopt;
  }

  Slot from_pickle(const PickleValue& v, const std::string& dir, const std::string& name, const Where& w) {
    Slot s;
    switch (v.kind) {
      case PKind::kNone: return s;
      case PKind::kBool: s.k = Slot::K::kBool; s.b = v.boolean; return s;
      case PKind::kInt: return constant_int(v.integer);
      case PKind::kFloat: s.k = Slot::K::kFloat; s.f = v.number; return s;
      case PKind::kString: s.k = Slot::K::kString; s.s = v.text; return s;
      case PKind::kList:
      case PKind::kTuple:
        s.k = v.kind == PKind::kList ? Slot::K::kList : Slot::K::kTuple;
        for (const auto& item : v.items) s.items.push_back(from_pickle(*item, dir, name, w));
        return s;
      case PKind::kBuild:
        if (v.callable().substr(0, 10) == "__torch__.") {
          s.k = Slot::K::kModule;
          s.module = &v;
          return s;
        }
        break;
      case PKind::kReduce:
        // torch.jit's typed lists: build_intlist([1, 2]), build_doublelist, build_boollist, build_tensorlist.
        if (v.callable().rfind("torch.jit._pickle.build_", 0) == 0 && v.callable().size() > 28 &&
            v.callable().substr(v.callable().size() - 4) == "list" && v.items[1]->items.size() == 1) {
          return from_pickle(*v.items[1]->items[0], dir, name, w);
        }
        if (v.callable() == "torch._utils._rebuild_tensor_v2" || v.callable() == "torch._utils._rebuild_parameter") {
          s.k = Slot::K::kTensor;
          s.v = tensor(v, dir, name, w);
          return s;
        }
        break;
      default: break;
    }
    unsupported(w, "attribute '" + name + "' is a " + std::string(v.callable().empty() ? "value" : v.callable()) + " the reader does not read");
  }

  // torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks) as a graph constant, once.
  ValueId tensor(const PickleValue& rebuild, const std::string& dir, const std::string& name, const Where& w) {
    if (auto it = tensors_.find(&rebuild); it != tensors_.end()) return it->second;
    const PickleValue* call = &rebuild;
    if (rebuild.callable() == "torch._utils._rebuild_parameter") {  // (tensor, requires_grad, hooks)
      const PickleValue& args = *rebuild.items[1];
      if (args.items.empty() || args.items[0]->callable() != "torch._utils._rebuild_tensor_v2") unsupported(w, "a parameter that is not a plain tensor");
      call = args.items[0].get();
    }
    const PickleValue& args = *call->items[1];
    auto bad = [&](const std::string& what) -> void { fail(ErrorCode::kSchema, zip_.source() + ":" + root_ + dir + " tensor '" + name + "': " + what); };
    if (args.items.size() < 4 || args.items[0]->kind != PKind::kPersistentId) bad("not (storage, offset, size, stride, ...)");
    const PickleValue& id = *args.items[0]->items[0];
    if (id.kind != PKind::kTuple || id.items.size() < 5 || id.items[2]->kind != PKind::kString) bad("its storage is not ('storage', type, key, location, numel)");
    const std::optional<DType> dtype = storage_dtype(id.items[1]->callable());
    if (!dtype) fail(ErrorCode::kUnknownDType, zip_.source() + ": tensor '" + name + "' is a " + std::string(id.items[1]->callable()));
    auto ints = [&](const PickleValue& t) {
      std::vector<std::int64_t> out;
      if (t.kind != PKind::kTuple || t.items.size() > limits_.max_rank) bad("a size or stride that is not a tuple of at most max_rank ints");
      for (const auto& x : t.items) {
        if (x->kind != PKind::kInt) bad("a size or stride that is not an int");
        out.push_back(x->integer);
      }
      return out;
    };
    if (args.items[1]->kind != PKind::kInt) bad("a storage offset that is not an int");
    const Shape shape = ints(*args.items[2]);
    const std::vector<std::int64_t> strides = ints(*args.items[3]);
    for (auto d : shape) {
      if (d < 0) bad("a negative size");
    }
    if (checked_nbytes(*dtype, shape) > limits_.max_tensor_bytes) {
      fail(ErrorCode::kLimitExceeded, zip_.source() + ": tensor '" + name + "' is over the limit of " + std::to_string(limits_.max_tensor_bytes) + " bytes");
    }
    const std::string entry = root_ + dir + id.items[2]->text;
    Tensor t;
    if (checked_numel(shape) == 0) {
      t = Tensor::zeros(*dtype, shape);
    } else {
      if (!zip_.find(entry)) fail(ErrorCode::kNotFound, zip_.source() + ": tensor '" + name + "' names storage '" + entry + "', which is not in the archive");
      t = detail::tensor_from_storage(*dtype, shape, strides, args.items[1]->integer, zip_.read(entry), zip_.source() + ": tensor '" + name + "' (entry '" + entry + "')");
    }
    const ValueId v = graph().add_constant(graph().unique_value_name(name), std::move(t));
    tensors_.emplace(&rebuild, v);
    return v;
  }

  Slot constant(const std::string& cname, const Where& w) {
    std::int64_t index = -1;
    try {
      index = std::stoll(cname.substr(1));
    } catch (const std::exception&) {
      unsupported(w, "CONSTANTS." + cname);
    }
    if (!constants_ || constants_->kind != PKind::kTuple || index < 0 || static_cast<std::size_t>(index) >= constants_->items.size()) {
      unsupported(w, "CONSTANTS." + cname + " is not in constants.pkl");
    }
    return from_pickle(*constants_->items[static_cast<std::size_t>(index)], "constants/", "CONSTANTS." + cname, w);
  }

  // The returned structure as graph outputs and their tree spec.
  TreeSpec spec_of(const Slot& s, std::vector<ValueId>& outputs, const Where& w) {
    switch (s.k) {
      case Slot::K::kTensor: outputs.push_back(s.v); return TreeSpec::leaf();
      case Slot::K::kTuple:
      case Slot::K::kList: {
        std::vector<TreeSpec> children;
        for (const Slot& x : s.items) children.push_back(spec_of(x, outputs, w));
        return s.k == Slot::K::kTuple ? TreeSpec::tuple(std::move(children)) : TreeSpec::list(std::move(children));
      }
      case Slot::K::kDict: {
        std::vector<std::pair<std::string, TreeSpec>> items;
        for (std::size_t k = 0; k < s.items.size(); ++k) items.emplace_back(s.keys[k], spec_of(s.items[k], outputs, w));
        return TreeSpec::dict(std::move(items));
      }
      case Slot::K::kNone: return TreeSpec::none();
      default: unsupported(w, "forward returns a value that is not a tensor or a structure of tensors");
    }
  }

  const ZipArchive& zip_;
  const LoadLimits& limits_;
  std::string root_;
  PickleRef data_, constants_;
  std::map<std::string, std::vector<Line>> files_;
  std::map<std::string, Function> functions_;
  std::unordered_map<const PickleValue*, ValueId> tensors_;
  ExportedGraph out_;
  std::vector<Shape> input_shapes_;
  std::map<ValueId, Shape> shapes_;                 // tensors' shapes, followed from the input shapes
  std::map<ValueId, std::vector<double>> numbers_;  // ints, floats and int[]s the graph computes, known from them
  std::string lost_shape_;                          // the first node whose output shape no rule gave
  bool specialized_ = false;
  std::size_t trips_ = 0;
  static constexpr std::size_t kMaxTrips = 1u << 16, kMaxTotalTrips = 1u << 20;
};

}  // namespace

ExportedGraph read_torchscript_archive(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, std::string_view source,
                                       const LoadLimits& limits, const std::vector<Shape>& input_shapes) {
  const ZipArchive zip = ZipArchive::open(bytes, std::move(owner), std::string(source), limits);
  return Reader(zip, limits, input_shapes).read();
}

ExportedGraph load_torchscript_archive(const std::string& path, const LoadLimits& limits, const std::vector<Shape>& input_shapes) {
  auto bytes = read_file_bytes(path, limits.max_file_bytes);
  const std::span<const std::byte> view(bytes->data(), bytes->size());
  return read_torchscript_archive(view, std::move(bytes), path, limits, input_shapes);
}

bool is_torchscript_archive(std::span<const std::byte> bytes) {
  if (!looks_like_zip(bytes)) return false;
  try {
    const ZipArchive zip = ZipArchive::open(bytes, nullptr, "archive");
    bool data = false, code = false;
    for (const ZipEntry& e : zip.entries()) {
      const std::string_view rest = name_in_root(e.name);
      data = data || rest == "data.pkl";
      code = code || rest.substr(0, 5) == "code/";
    }
    return data && code;
  } catch (const Error&) {
  }
  return false;
}

}  // namespace tracegraph
