// einsum: two operands as one batch matrix multiply where the form allows,
// any other form on the portable kernel, complex operands as a real einsum
// over their (real, imaginary) pairs.
#include "lower/einsum.h"
#include "lower/matmul.h"
#include "lower/permute.h"

namespace tracegraph::xnnpack {

namespace {

// einsum in any form torch takes (any number of operands, an ellipsis
// broadcast, a letter repeated in one operand for a diagonal, sums over one
// operand) on the portable kernel: a plain loop over every letter.
// The letters of each of the `count` operands an einsum equation names.
std::vector<std::string> einsum_operands(const Context& cx, const Node& n, const std::string& eq, std::size_t count) {
  std::vector<std::string> subs;
  const std::string lhs = eq.substr(0, eq.find("->"));
  for (std::size_t at = 0;;) {
    const std::size_t comma = lhs.find(',', at);
    subs.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (subs.size() != count)
    fail(ErrorCode::kSchema, cx.where(n) + ": einsum '" + eq + "' names " + std::to_string(subs.size()) + " operands for " + std::to_string(count));
  return subs;
}

// The output slot, of operand slots `slots`.
int einsum_slots(Context& cx, const Node& n, const std::string& eq, std::vector<int> slots) {
  const std::size_t arrow = eq.find("->");
  const std::vector<std::string> subs = einsum_operands(cx, n, eq, slots.size());
  for (int& s : slots) s = cx.as_layout(s, false);
  // The ellipsis as letters of its own ('0' onwards, right-aligned across operands).
  std::size_t ellipsis = 0;
  auto letters_of = [&](const std::string& sub, std::size_t dots) {
    const std::size_t at = sub.find("...");
    if (at == std::string::npos) return sub;
    std::string filler;
    for (std::size_t i = 0; i < dots; ++i) filler += static_cast<char>('0' + (ellipsis - dots + i));
    return sub.substr(0, at) + filler + sub.substr(at + 3);
  };
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const std::size_t at = subs[i].find("...");
    if (at == std::string::npos) continue;
    const std::size_t named = subs[i].size() - 3, rank = cx.slot(slots[i]).shape.size();
    if (rank < named) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + subs[i] + "' for an operand of rank " + std::to_string(rank));
    ellipsis = std::max(ellipsis, rank - named);
  }
  if (ellipsis > 10) fail(ErrorCode::kLimitExceeded, cx.where(n) + ": an ellipsis over " + std::to_string(ellipsis) + " dims");
  std::map<char, i64> size;
  std::vector<std::string> expanded;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const Shape& shape = cx.slot(slots[i]).shape;
    const std::size_t dots = subs[i].find("...") == std::string::npos ? 0 : shape.size() - (subs[i].size() - 3);
    const std::string letters = letters_of(subs[i], dots);
    if (letters.size() != shape.size())
      fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + subs[i] + "' for an operand of shape " + shape_str(shape));
    for (std::size_t d = 0; d < letters.size(); ++d) {
      const char c = letters[d];
      if (!std::isalnum(static_cast<unsigned char>(c))) fail(ErrorCode::kSchema, cx.where(n) + ": '" + eq + "' has '" + std::string(1, c) + "'");
      auto [it, fresh] = size.emplace(c, shape[d]);
      if (fresh || it->second == shape[d]) continue;
      // A size 1 broadcasts under an ellipsis; otherwise the sizes must agree.
      if (std::isdigit(static_cast<unsigned char>(c)) && (it->second == 1 || shape[d] == 1)) it->second = std::max(it->second, shape[d]);
      else fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + std::string(1, c) + "' is " + std::to_string(it->second) + " and " + std::to_string(shape[d]) + " in '" + eq + "'");
    }
    expanded.push_back(letters);
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = letters_of(eq.substr(arrow + 2), eq.find("...", arrow) == std::string::npos ? 0 : ellipsis);
  } else {  // implicit: the ellipsis, then the letters used once, in alphabetical order
    std::string all;
    for (const std::string& e : expanded) all += e;
    for (std::size_t i = 0; i < ellipsis; ++i) out += static_cast<char>('0' + i);
    std::string once;
    for (char c : all)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(all.begin(), all.end(), c) == 1) once += c;
    std::sort(once.begin(), once.end());
    out += once;
  }
  portable::Einsum e;
  std::string order;  // the output's letters, then the summed ones
  for (char c : out) {
    if (!size.count(c)) fail(ErrorCode::kSchema, cx.where(n) + ": output letter '" + std::string(1, c) + "' is in no operand");
    if (std::count(out.begin(), out.end(), c) > 1) fail(ErrorCode::kSchema, cx.where(n) + ": output letter '" + std::string(1, c) + "' twice");
    order += c;
  }
  e.out_letters = order.size();
  for (const auto& [c, s] : size)
    if (order.find(c) == std::string::npos) order += c;
  Shape out_shape;
  for (char c : order) e.sizes.push_back(size[c]);
  out_shape.assign(e.sizes.begin(), e.sizes.begin() + static_cast<std::ptrdiff_t>(e.out_letters));
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    const Shape& shape = cx.slot(slots[i]).shape;
    std::vector<i64> stride(order.size(), 0);
    i64 step = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (shape[d] != 1) stride[order.find(expanded[i][d])] += step;  // a broadcast 1 stays 0; a repeat adds up: the diagonal
      step *= shape[d];
    }
    e.strides.push_back(std::move(stride));
  }
  cx.within_budget(out_shape);
  const int y = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step(slots, {y});
  step.run = [&cx, e, slots, y] {
    std::vector<const float*> x;
    for (int s : slots) x.push_back(cx.ptr(s));
    portable::einsum(e, x, cx.ptr(y));
  };
  return y;
}

void einsum_portable(Context& cx, const Node& n, const std::string& eq, const std::vector<ValueId>& operands) {
  std::vector<int> slots;
  for (ValueId v : operands) slots.push_back(cx.held_tensor_slot(n, v));
  cx.define(n.outputs[0], einsum_slots(cx, n, eq, slots));
}

// Complex slot `b` (pairs) as real [..., 2, 2] blocks [[re, im], [-im, re]]:
// a complex (x + yi) times it is the real row (x, y) times the block. Made
// once for a constant (spectral weights), else a step.
int complex_real_form(Context& cx, int b) {
  b = cx.as_layout(b, false);
  Shape shape = cx.slot(b).shape;
  shape.push_back(2);  // [..., 2 (p), 2 (r)]
  const i64 count = numel(shape) / 4;
  const auto fill = [count](const float* z, float* y) {
    for (i64 e = 0; e < count; ++e) {
      const float re = z[2 * e], im = z[2 * e + 1];
      y[4 * e] = re, y[4 * e + 1] = im, y[4 * e + 2] = -im, y[4 * e + 3] = re;
    }
  };
  if (const float* c = cx.slot(b).constant) {
    std::vector<float> values(static_cast<std::size_t>(4 * count));
    fill(c, values.data());
    return cx.planned_constant(shape, std::move(values));
  }
  const int out = cx.new_tensor(shape, false);
  cx.portable_map(b, out, fill);
  return out;
}

// einsum of two operands `a` and `b` without an ellipsis or a diagonal, where
// every letter summed is in both: one batch matrix multiply (its output
// slot); nullopt for any other form (the portable kernel's).
std::optional<int> einsum_matmul(Context& cx, const Node& n, NodeState& st, const std::string& eq, int a, int b) {
  const std::size_t arrow = eq.find("->");
  const std::size_t comma = eq.find(',');
  if (comma == std::string::npos || eq.find(',', comma + 1) != std::string::npos || eq.find('.') != std::string::npos) return std::nullopt;
  const std::string sa = eq.substr(0, comma), sb = eq.substr(comma + 1, arrow == std::string::npos ? std::string::npos : arrow - comma - 1);
  for (const std::string* letters : {&sa, &sb})
    for (char c : *letters)
      if (std::count(letters->begin(), letters->end(), c) > 1) return std::nullopt;
  std::string so;
  if (arrow != std::string::npos) {
    so = eq.substr(arrow + 2);
  } else {  // implicit output: the letters used once, in alphabetical order
    for (char c : sa + sb)
      if (std::count(sa.begin(), sa.end(), c) + std::count(sb.begin(), sb.end(), c) == 1) so += c;
    std::sort(so.begin(), so.end());
  }
  const Shape as = cx.slot(a).shape, bs = cx.slot(b).shape;
  if (sa.size() != as.size() || sb.size() != bs.size())
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + eq + "' for operands " + shape_str(as) + " and " + shape_str(bs));
  std::map<char, i64> size;
  auto take = [&](const std::string& letters, const Shape& shape) {
    for (std::size_t i = 0; i < letters.size(); ++i) {
      const char c = letters[i];
      if (!std::isalpha(static_cast<unsigned char>(c))) fail(ErrorCode::kSchema, cx.where(n) + ": '" + eq + "' has '" + std::string(1, c) + "'");
      auto [it, fresh] = size.emplace(c, shape[i]);
      if (!fresh && it->second != shape[i])
        fail(ErrorCode::kShapeMismatch, cx.where(n) + ": '" + std::string(1, c) + "' is " + std::to_string(it->second) + " and " + std::to_string(shape[i]) + " in '" + eq + "'");
    }
  };
  take(sa, as);
  take(sb, bs);
  std::string batch, rows, cols, summed;
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  for (char c : so) {
    if (!in(sa, c) && !in(sb, c)) fail(ErrorCode::kSchema, cx.where(n) + ": output letter '" + std::string(1, c) + "' is in no operand");
    if (std::count(so.begin(), so.end(), c) > 1) fail(ErrorCode::kSchema, cx.where(n) + ": output letter '" + std::string(1, c) + "' twice");
    (in(sa, c) && in(sb, c) ? batch : in(sa, c) ? rows : cols) += c;
  }
  for (char c : sa) {
    if (in(so, c)) continue;
    if (!in(sb, c)) return std::nullopt;  // summed over one operand only
    summed += c;
  }
  for (char c : sb)
    if (!in(so, c) && !in(sa, c)) return std::nullopt;
  auto order = [](const std::string& letters, const std::string& want) {
    std::vector<std::size_t> perm;
    for (char c : want) perm.push_back(letters.find(c));
    return perm;
  };
  auto product_of = [&](const std::string& letters) {
    i64 p = 1;
    for (char c : letters) p *= size[c];
    return p;
  };
  const i64 m = product_of(rows), k = product_of(summed), nn = product_of(cols);
  const int pa = permuted(cx, a, order(sa, batch + rows + summed));
  const int pb = permuted(cx, b, order(sb, batch + summed + cols));
  Shape batch_shape;
  for (char c : batch) batch_shape.push_back(size[c]);
  Shape mid = batch_shape;  // the product's own order: batch, rows, columns
  for (char c : rows + cols) mid.push_back(size[c]);
  const int product = batch_matmul(cx, n, st, pa, pb, batch_shape, batch_shape, m, k, nn, mid);
  return permuted(cx, product, order(batch + rows + cols, so));
}

}  // namespace

// einsum of complex operands (neuraloperator's spectral convolutions), as a
// real einsum over their (real, imaginary) pairs, each operand's pair dim a
// letter of its own. One operand (a transpose, a diagonal): its pair letter
// goes to the output. Two: the second as its real 2 x 2 blocks
// (complex_real_form), the first's pair letter summed with the others, so
// that the form goes to a batch matrix multiply like a real einsum's.
void einsum_complex(Context& cx, const Node& n, NodeState& st, std::string eq, const std::vector<ValueId>& operands) {
  std::vector<int> slots;
  for (ValueId v : operands) {
    slots.push_back(cx.held_tensor_slot(n, v));
    if (!cx.slot(slots.back()).complex)
      fail(ErrorCode::kUnsupported, cx.where(n) + ": einsum of complex and real operands (torch refuses it too)");
  }
  if (slots.size() > 2) fail(ErrorCode::kUnsupported, cx.where(n) + ": einsum of " + std::to_string(slots.size()) + " complex operands (two at most here)");
  // Letters the equation does not use, for the pair dims.
  std::string free;
  for (char c : std::string("zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"))
    if (eq.find(c) == std::string::npos && free.size() < 2) free += c;
  if (free.size() < 2) fail(ErrorCode::kUnsupported, cx.where(n) + ": einsum '" + eq + "' leaves no letter for the complex pairs");
  const std::size_t arrow = eq.find("->");
  const std::vector<std::string> subs = einsum_operands(cx, n, eq, slots.size());
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {  // implicit: the ellipsis, then the letters used once, in alphabetical order
    std::string all;
    for (const std::string& sub : subs) all += sub;
    if (all.find("...") != std::string::npos) out = "...";
    std::string once;
    for (char c : all)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(all.begin(), all.end(), c) == 1) once += c;
    std::sort(once.begin(), once.end());
    out += once;
  }
  const char pair = free[0], result = free[1];
  int y = -1;
  if (slots.size() == 1) {
    y = einsum_slots(cx, n, subs[0] + result + "->" + out + result, slots);
  } else {
    const int real_form = complex_real_form(cx, slots[1]);
    const std::string real_eq = subs[0] + pair + "," + subs[1] + pair + result + "->" + out + result;
    if (auto product = einsum_matmul(cx, n, st, real_eq, slots[0], real_form)) y = *product;
    else y = einsum_slots(cx, n, real_eq, {slots[0], real_form});
  }
  cx.slot(y).complex = true;
  cx.define(n.outputs[0], y);
}

void lower_einsum(Context& cx, const Node& n, NodeState& st) {
  std::string eq;
  for (char c : n.attributes.get_string("equation").value_or("")) {
    if (c != ' ') eq += c;
  }
  std::vector<ValueId> operands = n.attributes.contains(kArgNamesAttribute) ? inputs_for_arg(n, "tensors") : n.inputs;
  if (std::any_of(operands.begin(), operands.end(), [&](ValueId v) { return cx.slot_of(v).complex; })) return einsum_complex(cx, n, st, eq, operands);
  // Two operands: one batch matrix multiply where the form allows; any other on the portable kernel.
  if (operands.size() == 2) {
    if (auto y = einsum_matmul(cx, n, st, eq, cx.tensor_slot(n, operands[0]), cx.tensor_slot(n, operands[1]))) return cx.define(n.outputs[0], *y);
  }
  einsum_portable(cx, n, eq, operands);
}

}  // namespace tracegraph::xnnpack
