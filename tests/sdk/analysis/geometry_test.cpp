// The geometry of networks built here: valid and same-padded UNets, strided
// encoders, upsampling heads, and the odd cases (dilation, ceil_mode, size-1
// and anisotropic axes, an op the analysis does not read). Each answer is
// checked against a hand computation in the comments, and the output size it
// predicts against the reader's own shape rules (formats/torchscript's
// infer_shape) run over the whole graph at other input sizes.
#include "tracegraph/geometry.h"

#include "formats/torchscript/torchscript_shapes.h"
#include "test_util.h"
#include "tracegraph/op_table.h"

#include <functional>
#include <limits>
#include <map>

#include "tracegraph/shape_rules.h"

namespace tracegraph {
namespace {

using i64 = std::int64_t;
using Ints = std::vector<i64>;

// A network built node by node with ATen's names and schema arguments, each
// value's shape from the reader's shape rules at the example input size.
class Net {
 public:
  explicit Net(const Shape& input) {
    x = g.add_input("x", DType::kFloat32, symbolic(input));
    shapes[x] = input;
  }

  ValueId conv(ValueId in, i64 cout, Ints kernel, Attributes attrs = {}, const std::string& op = "") {
    const Shape s = shape(in);
    Shape w{cout, s[1]};
    w.insert(w.end(), kernel.begin(), kernel.end());
    const ValueId weight = g.add_constant(g.unique_value_name("w"), Tensor::zeros(DType::kFloat32, w));
    return add(op.empty() ? "aten::conv" + std::to_string(kernel.size()) + "d" : op, {in, weight}, {"input", "weight"},
               std::move(attrs));
  }
  // A valid 3x3(x3) convolution, as the UNets below use.
  ValueId conv_valid(ValueId in, i64 cout) { return conv(in, cout, Ints(rank(in) - 2, 3)); }
  ValueId conv_same(ValueId in, i64 cout) { return conv(in, cout, Ints(rank(in) - 2, 3), attrs({{"padding", Ints{1}}})); }
  ValueId up(ValueId in, i64 cout, Ints kernel) {
    const Shape s = shape(in);
    Shape w{s[1], cout};
    w.insert(w.end(), kernel.begin(), kernel.end());
    const ValueId weight = g.add_constant(g.unique_value_name("w"), Tensor::zeros(DType::kFloat32, w));
    return add("aten::conv_transpose" + std::to_string(kernel.size()) + "d", {in, weight}, {"input", "weight"},
               attrs({{"stride", kernel}}));
  }
  ValueId pool(ValueId in, Ints kernel, Attributes extra = {}) {
    Attributes a = attrs({{"kernel_size", kernel}});
    for (const auto& [k, v] : extra) a.set(k, v);
    return add("aten::max_pool" + std::to_string(kernel.size()) + "d", {in}, {"self"}, std::move(a));
  }
  // skip[:, :, c:-c, ...], c per axis chosen (at the example size) to match `like`: the UNet's centre crop.
  ValueId crop(ValueId skip, ValueId like) {
    const Shape s = shape(skip), t = shape(like);
    for (std::size_t d = 2; d < s.size(); ++d) {
      const i64 c = (s[d] - t[d]) / 2;
      if (c == 0) continue;
      skip = add("aten::slice", {skip}, {"self"},
                 attrs({{"dim", static_cast<i64>(d)}, {"start", c}, {"end", -c}, {"step", i64{1}}}));
    }
    return skip;
  }
  ValueId cat(std::vector<ValueId> parts) {
    return add("aten::cat", parts, std::vector<std::string>(parts.size(), "tensors"), attrs({{"dim", i64{1}}}));
  }
  ValueId op(const std::string& name, std::vector<ValueId> in, std::vector<std::string> names, Attributes a = {}) {
    return add(name, std::move(in), std::move(names), std::move(a));
  }

  // A number node (a size, its arithmetic, a conversion): a 0-dim value, its
  // number at the example size kept for the slices that read it.
  ValueId number(const std::string& op, std::vector<ValueId> in, std::vector<std::string> names, Attributes a = {}) {
    a.set(std::string(kArgNamesAttribute), names);
    const NodeId id = g.add_node(op, in, {NewValue("")}, a, std::string(op_base(op)) + "_" + std::to_string(nodes_++));
    const ValueId out = g.node(id).outputs[0];
    const auto v = number_at(g.node(id), [&](ValueId v) { return shapes.count(v) ? std::optional<Shape>(shapes.at(v)) : std::nullopt; },
                             [&](ValueId v) { return numbers.count(v) ? std::optional<i64>(numbers.at(v)) : std::nullopt; });
    if (!v) ADD_FAILURE() << "no number for " << op;
    else numbers[out] = *v;
    g.set_value_type(out, DType::kInt64, symbolic(Shape{}));
    return out;
  }
  ValueId int_constant(i64 v) {
    const ValueId c = g.add_constant(g.unique_value_name("c"), Tensor::from_vector<std::int64_t>({v}, Shape{}));
    numbers[c] = v;
    return c;
  }
  // The number a number node gives, as the readers compute it (known_values.cpp).
  static std::optional<i64> number_at(const Node& n, const std::function<std::optional<Shape>(ValueId)>& shape_of,
                                      const std::function<std::optional<i64>(ValueId)>& number_of) {
    auto arg = [&](std::string_view name) -> std::optional<i64> {
      if (const auto in = inputs_for_arg(n, name); !in.empty()) return number_of(in[0]);
      return n.attributes.find(name) ? arg_int(n, name) : std::nullopt;
    };
    std::string op(op_base(n.op));
    if (n.op.rfind("_operator.", 0) == 0) op = n.op.substr(10);
    if (op == "size" || op == "sym_size") {
      const auto s = shape_of(inputs_for_arg(n, "self")[0]);
      const auto d = arg("dim");
      if (!s || !d) return std::nullopt;
      return (*s)[static_cast<std::size_t>(*d < 0 ? *d + static_cast<i64>(s->size()) : *d)];
    }
    if (op == "NumToTensor" || op == "Int") return arg("a");
    const auto a = arg("self") ? arg("self") : arg("a");
    const auto b = arg("other") ? arg("other") : arg("b");
    if (!a || !b) return std::nullopt;
    const i64 alpha = arg("alpha").value_or(1);
    if (op == "add") return *a + alpha * *b;
    if (op == "sub") return *a - alpha * *b;
    if (op == "floor_divide" || op == "floordiv") return shape_rules::floor_divide(*a, *b);
    if (op == "mod" || op == "remainder") return shape_rules::remainder(*a, *b);
    return std::nullopt;
  }
  static Attributes attrs(std::initializer_list<std::pair<const char*, AttributeValue>> list) {
    Attributes a;
    for (const auto& [k, v] : list) a.set(k, v);
    return a;
  }
  Shape shape(ValueId v) const { return shapes.at(v); }
  std::size_t rank(ValueId v) const { return shape(v).size(); }

  std::vector<OutputGeometry> geometry(ValueId out) {
    g.set_outputs({out});
    g.verify();
    return network_geometry(g);
  }
  // The output's shape at input shape `input` by the reader's rules over every node; nullopt where one refuses.
  std::optional<Shape> shape_at(const Shape& input) const {
    std::map<ValueId, detail::Known> known;
    known[x].shape = input;
    for (ValueId c : g.constants()) {
      known[c].shape = g.value(c).data.shape();
      if (numbers.count(c)) known[c].ints = Ints{numbers.at(c)};
    }
    for (NodeId id : g.nodes()) {
      const Node& n = g.node(id);
      if (numbers.count(n.outputs[0])) {
        const auto v = number_at(n, [&](ValueId v) { return known.count(v) ? known.at(v).shape : std::nullopt; },
                                 [&](ValueId v) -> std::optional<i64> {
                                   if (!known.count(v) || !known.at(v).ints) return std::nullopt;
                                   return known.at(v).ints->front();
                                 });
        if (!v) return std::nullopt;
        known[n.outputs[0]].ints = Ints{*v};
        continue;
      }
      const auto s = detail::infer_shape(n, 0, [&](ValueId v) { return known.count(v) ? known.at(v) : detail::Known{}; });
      if (!s) return std::nullopt;
      for (std::size_t i = 1; i < n.inputs.size() && n.op == "aten::cat"; ++i) {
        // The reader's cat rule adds the dim; the other dims must match.
        const Shape& a = *known.at(n.inputs[0]).shape;
        const Shape& b = *known.at(n.inputs[i]).shape;
        for (std::size_t d = 2; d < a.size(); ++d) {
          if (a[d] != b[d]) return std::nullopt;
        }
      }
      if (std::any_of(s->begin(), s->end(), [](i64 d) { return d < 1; })) return std::nullopt;
      known[n.outputs[0]].shape = s;
    }
    return known.at(g.outputs()[0]).shape;
  }

  Graph g;
  ValueId x;
  std::map<ValueId, Shape> shapes;
  std::map<ValueId, i64> numbers;  // number values at the example size
  bool strict = true;  // every node has a shape at the example size

 private:
  ValueId add(const std::string& op, std::vector<ValueId> in, std::vector<std::string> names, Attributes a) {
    a.set(std::string(kArgNamesAttribute), names);
    const NodeId id = g.add_node(op, in, {NewValue("")}, a, op.substr(6) + "_" + std::to_string(nodes_++));
    const auto s = detail::infer_shape(g.node(id), 0, [&](ValueId v) {
      detail::Known k;
      if (numbers.count(v)) k.ints = Ints{numbers.at(v)};
      if (shapes.count(v)) k.shape = shapes.at(v);
      else if (g.value(v).is_constant()) k.shape = g.value(v).data.shape();
      return k;
    });
    if (!s && strict) ADD_FAILURE() << "no shape for " << op;
    const ValueId out = g.node(id).outputs[0];
    if (s) {
      shapes[out] = *s;
      g.set_value_type(out, DType::kFloat32, symbolic(*s));
    }
    return out;
  }
  int nodes_ = 0;

};

// Checks the predicted output size against the shape rules at input sizes
// `sizes` along axis `dim` (others as in `base`), accepted or not.
void check_against_shape_rules(const Net& net, const AxisGeometry& axis, const Shape& base, std::initializer_list<i64> sizes) {
  for (i64 n : sizes) {
    Shape in = base;
    in[static_cast<std::size_t>(axis.dim)] = n;
    const auto out = net.shape_at(in);
    if (axis.accepts(n)) {
      ASSERT_TRUE(out.has_value()) << "size " << n << " accepted, but the shape rules refuse it";
      EXPECT_EQ((*out)[static_cast<std::size_t>(axis.dim)], *axis.output_size(n)) << "size " << n;
    } else if (out) {
      // The shape rules ran: then an exact match somewhere failed (a join), which
      // infer_shape's broadcast would have refused; floor pooling is the only other way.
      ADD_FAILURE() << "size " << n << " refused, but the shape rules give " << shape_str(symbolic(*out));
    }
  }
}

// A valid-padded UNet: two valid 3x3(x3) convs per level, max pooling by
// `factor`, a transposed conv by `factor` up, the skip centre-cropped and
// concatenated. `levels` poolings.
ValueId unet_valid(Net& net, int levels, Ints factor, Ints kernel_top = {}) {
  std::vector<ValueId> skips;
  ValueId h = net.x;
  auto convs = [&](ValueId v, bool top) {
    for (int i = 0; i < 2; ++i) {
      v = top && !kernel_top.empty() ? net.conv(v, 2, kernel_top) : net.conv_valid(v, 2);
    }
    return v;
  };
  for (int l = 0; l < levels; ++l) {
    h = convs(h, true);
    skips.push_back(h);
    h = net.pool(h, factor);
  }
  h = convs(h, false);
  for (int l = levels - 1; l >= 0; --l) {
    h = net.up(h, 2, factor);
    h = net.cat({net.crop(skips[static_cast<std::size_t>(l)], h), h});
    h = convs(h, true);
  }
  return h;
}

TEST(GeometryTest, ValidUnet3dOneLevel) {
  // n -> two convs: n-4 (a) -> pool 2: a/2 -> two convs: a/2-4 (b) -> up: 2b = a-8
  // -> crop the skip by 4 each side (fixed at the example size) to a-8: joins
  // only when a is even -> two convs: a-12 = n-16. b >= 1 needs n >= 14, the
  // output n >= 17: n even and >= 18, "18 + 2k". Voxels: 1+1 (convs), +0.5
  // (pool, stride 2), +2*2 (convs) = 6.5, -0.5 (up) = 6 = 2 + 4 (the crop), +2:
  // offset 8, context 8 on each side.
  Net net(Shape{1, 1, 28, 28, 28});
  const auto geo = net.geometry(unet_valid(net, 1, {2, 2, 2}));
  ASSERT_EQ(geo.size(), 1u);
  EXPECT_EQ(geo[0].output, net.g.value(net.g.outputs()[0]).name);
  EXPECT_EQ(geo[0].input, "x");
  ASSERT_EQ(geo[0].axes.size(), 3u);
  for (const AxisGeometry& a : geo[0].axes) {
    ASSERT_TRUE(a.known()) << a.str();
    ASSERT_TRUE(a.lattice.has_value());
    EXPECT_EQ(a.lattice->first, 18);
    EXPECT_EQ(a.lattice->step, 2);
    EXPECT_EQ(a.valid_sizes_str(), "18 + 2k");
    EXPECT_EQ(a.output_size(28), 12);
    EXPECT_EQ(a.output_size(1000), 984);
    EXPECT_FALSE(a.accepts(29));
    EXPECT_FALSE(a.accepts(16));
    EXPECT_EQ(a.offset, Rational::of(8));
    EXPECT_EQ(a.stride, Rational::of(1));
    EXPECT_EQ(a.context_before(), Rational::of(8));
    EXPECT_EQ(a.context_after(100), Rational::of(8));
    // Its receptive field: 1 + 1 (convs), +1/2 (pool), +2*2 (convs at stride
    // 2), +1/4*2 (the up conv reads the voxel within 1/4 of its own), +1 + 1:
    // 9. No op pads: a block needs no halo beyond the context.
    EXPECT_EQ(a.reach, Rational::of(9));
    EXPECT_FALSE(a.edge_effects);
    EXPECT_EQ(a.halo(), 0);
  }
  check_against_shape_rules(net, geo[0].axes[0], {1, 1, 28, 28, 28}, {16, 17, 18, 19, 20, 28, 29, 30, 64});
}

TEST(GeometryTest, ValidUnet3dTwoLevels) {
  // a0 = n-4 -> pool: a0/2 -> a1 = a0/2-4 -> pool: a1/2 -> b = a1/2-4 -> up 2b
  // = a1-8 (crop 4) -> d1 = 2b-4 -> up 2d1 = n-36 (crop a0 by 16) -> n-40.
  // Exact poolings: a0 and a1 even, so n = 0 mod 4; b >= 1 and n-40 >= 1:
  // "44 + 4k". Voxels: 2, 2.5 (pool), 6.5, 7.5 (pool, stride 4), 15.5, 14.5
  // (up) = 6.5 + 2*4, 18.5, 18 (up) = 2 + 16, 20: context 20 each side.
  Net net(Shape{1, 1, 44, 48, 52});
  const auto geo = net.geometry(unet_valid(net, 2, {2, 2, 2}));
  ASSERT_EQ(geo.size(), 1u);
  for (const AxisGeometry& a : geo[0].axes) {
    ASSERT_TRUE(a.known()) << a.str();
    EXPECT_EQ(a.valid_sizes_str(), "44 + 4k");
    EXPECT_EQ(a.smallest(), 44);
    EXPECT_EQ(a.output_size(44), 4);
    EXPECT_EQ(a.output_size(572), 532);
    EXPECT_FALSE(a.accepts(46));
    EXPECT_FALSE(a.accepts(40));
    EXPECT_EQ(a.offset, Rational::of(20));
    EXPECT_EQ(a.context_before(), Rational::of(20));
    EXPECT_EQ(a.context_after(44), Rational::of(20));
    EXPECT_EQ(a.context_after(4000), Rational::of(20));
  }
  for (const AxisGeometry& a : geo[0].axes) {
    check_against_shape_rules(net, a, {1, 1, 44, 48, 52}, {40, 42, 44, 45, 46, 48, 60, 61, 62, 64, 100});
  }
  EXPECT_NE(geometry_json(geo).find("\"valid\":\"44 + 4k\""), std::string::npos) << geometry_json(geo);
  EXPECT_NE(geometry_json(geo).find("\"context\":[\"20\",\"20\"]"), std::string::npos) << geometry_json(geo);
}

TEST(GeometryTest, RonnebergersUnet) {
  // The 2015 UNet (2D, four poolings): the bottom is b = (n - 124) / 16
  // when every pooling is exact (n = 12 mod 16), the output 16b - 60 = n - 184
  // needs b >= 4: "188 + 16k", 572 -> 388, 92 voxels of context each side.
  Net net(Shape{1, 1, 572, 572});
  const auto geo = net.geometry(unet_valid(net, 4, {2, 2}));
  for (const AxisGeometry& a : geo[0].axes) {
    EXPECT_EQ(a.valid_sizes_str(), "188 + 16k");
    EXPECT_EQ(a.output_size(572), 388);
    EXPECT_EQ(a.context_before(), Rational::of(92));
    EXPECT_EQ(a.context_after(572), Rational::of(92));
    check_against_shape_rules(net, a, {1, 1, 572, 572}, {172, 188, 190, 204, 572, 574, 588});
  }
}

TEST(GeometryTest, SamePaddedUnet2dFourLevels) {
  // Convs keep the size, every pooling halves it and the transposed conv
  // doubles it back; the skip joins only when each halving was exact: n =
  // 16k, k >= 1. Voxels: pooling +0.5 at stride s, the up conv -0.5 at the
  // coarse stride: back to 0, stride 1, no context.
  Net net(Shape{1, 3, 64, 80});
  std::vector<ValueId> skips;
  ValueId h = net.x;
  for (int l = 0; l < 4; ++l) {
    h = net.conv_same(net.conv_same(h, 4), 4);
    skips.push_back(h);
    h = net.pool(h, {2, 2});
  }
  h = net.conv_same(h, 4);
  for (int l = 3; l >= 0; --l) {
    h = net.up(h, 4, {2, 2});
    h = net.conv_same(net.cat({skips[static_cast<std::size_t>(l)], h}), 4);
  }
  const auto geo = net.geometry(h);
  ASSERT_EQ(geo[0].axes.size(), 2u);
  for (const AxisGeometry& a : geo[0].axes) {
    ASSERT_TRUE(a.known()) << a.str();
    EXPECT_EQ(a.valid_sizes_str(), "16k, k >= 1");
    EXPECT_EQ(a.output_size(16), 16);
    EXPECT_EQ(a.output_size(512), 512);
    EXPECT_FALSE(a.accepts(24));
    EXPECT_EQ(a.offset, Rational::of(0));
    EXPECT_EQ(a.stride, Rational::of(1));
    EXPECT_EQ(a.context_before(), Rational::of(0));
    EXPECT_EQ(a.context_after(512), Rational::of(0));
    // The padding's effects reach as far as the receptive field: level l (at
    // stride 2^l) adds 2 * 2^l (two convs) and 2^l / 2 (its pooling), the
    // bottom conv 16, each up conv a quarter of its input stride and the conv
    // after it its output stride: 2.5 + 5 + 10 + 20 + 16 + (4 + 8) + (2 + 4) +
    // (1 + 2) + (1/2 + 1) = 76, all of it a halo (no context is cut).
    EXPECT_EQ(a.reach, Rational::of(76));
    EXPECT_TRUE(a.edge_effects);
    EXPECT_EQ(a.halo(), 76);
    EXPECT_NE(a.str().find("halo 76"), std::string::npos) << a.str();
    check_against_shape_rules(net, a, {1, 3, 64, 80}, {8, 16, 24, 32, 40, 48});
  }
}

TEST(GeometryTest, StridedEncoderHasStrideFour) {
  // Two 2x2 convs of stride 2 (patches): floor(floor(n/2)/2) = floor(n/4),
  // every n >= 4. Voxel 0: 0.5, then 0.5 + 2 * 0.5 = 1.5 at stride 4: the
  // output's first voxel covers input voxels 0..3, no context before; a size
  // that is not a multiple of 4 leaves its remainder after.
  Net net(Shape{1, 1, 32, 32});
  ValueId h = net.conv(net.x, 2, {2, 2}, Net::attrs({{"stride", Ints{2}}}));
  h = net.conv(h, 2, {2, 2}, Net::attrs({{"stride", Ints{2}}}));
  const auto geo = net.geometry(h);
  for (const AxisGeometry& a : geo[0].axes) {
    ASSERT_TRUE(a.known()) << a.str();
    EXPECT_EQ(a.valid_sizes_str(), "n >= 4");
    EXPECT_EQ(a.output_size(10), 2);
    EXPECT_EQ(a.output_size(1001), 250);
    EXPECT_EQ(a.stride, Rational::of(4));
    EXPECT_EQ(a.offset, Rational::of(3, 2));
    EXPECT_EQ(a.context_before(), Rational::of(0));
    EXPECT_EQ(a.context_after(12), Rational::of(0));
    EXPECT_EQ(a.context_after(10), Rational::of(2));
    check_against_shape_rules(net, a, {1, 1, 32, 32}, {3, 4, 7, 8, 10, 33});
  }
  // A padded 3x3 conv of stride 2, a pooling by 2: ceil(n/2), then its half;
  // voxel 0 at 0 + 2 * 0.5 = 1, stride 4: the first output voxel reaches one
  // voxel before the input (context -1/2: padding).
  Net padded(Shape{1, 1, 32, 32});
  h = padded.conv(padded.x, 2, {3, 3}, Net::attrs({{"stride", Ints{2}}, {"padding", Ints{1}}}));
  h = padded.pool(h, {2, 2});
  const auto g2 = padded.geometry(h);
  for (const AxisGeometry& a : g2[0].axes) {
    EXPECT_EQ(a.valid_sizes_str(), "n >= 3");
    EXPECT_EQ(a.stride, Rational::of(4));
    EXPECT_EQ(a.offset, Rational::of(1));
    EXPECT_EQ(a.context_before(), Rational::of(-1, 2));
    check_against_shape_rules(padded, a, {1, 1, 32, 32}, {2, 3, 4, 5, 6, 7, 8, 9, 31});
  }
}

TEST(GeometryTest, UpsamplingHeadHasStrideOneHalf) {
  // conv (same) -> nearest resize by 2 -> conv (same): 2n voxels of half the
  // size; voxel 0's centre at (1/2 - 1)/2 = -1/4, so the output covers the
  // input exactly: context 0 each side. The transposed-conv head (kernel 2,
  // stride 2) lies the same way.
  for (bool transposed : {false, true}) {
    Net net(Shape{1, 1, 16, 16});
    ValueId h = net.conv_same(net.x, 2);
    h = transposed ? net.up(h, 2, {2, 2})
                   : net.op("aten::upsample_nearest2d", {h}, {"input"}, Net::attrs({{"scale_factors", std::vector<double>{2.0, 2.0}}}));
    h = net.conv_same(h, 1);
    const auto geo = net.geometry(h);
    for (const AxisGeometry& a : geo[0].axes) {
      ASSERT_TRUE(a.known()) << a.str();
      EXPECT_EQ(a.valid_sizes_str(), "n >= 1");
      EXPECT_EQ(a.output_size(7), 14);
      EXPECT_EQ(a.stride, Rational::of(1, 2));
      EXPECT_EQ(a.offset, Rational::of(-1, 4));
      EXPECT_EQ(a.context_before(), Rational::of(0));
      EXPECT_EQ(a.context_after(7), Rational::of(0));
      check_against_shape_rules(net, a, {1, 1, 16, 16}, {1, 2, 7, 16});
    }
  }
}

TEST(GeometryTest, AnOpItDoesNotReadIsUnknownByName) {
  // conv -> view (to the same shape, as a read graph records it) -> conv: the
  // view's sizes are constants of the example size, so nothing is claimed.
  Net net(Shape{1, 1, 16, 16});
  ValueId h = net.conv_same(net.x, 2);
  h = net.op("aten::view", {h}, {"self"}, Net::attrs({{"size", Ints{1, 2, 16, 16}}}));
  h = net.conv_same(h, 1);
  const auto geo = net.geometry(h);
  ASSERT_EQ(geo[0].axes.size(), 2u);
  for (const AxisGeometry& a : geo[0].axes) {
    EXPECT_FALSE(a.known());
    EXPECT_EQ(a.unknown_node, "view_1");
    EXPECT_EQ(a.unknown_op, "aten::view");
    EXPECT_FALSE(a.output_size(16).has_value());
    EXPECT_NE(a.str().find("unknown at 'view_1' (aten::view)"), std::string::npos) << a.str();
  }
  EXPECT_NE(geometry_json(geo).find("\"node\":\"view_1\""), std::string::npos);

  // A resize to a fixed size does not grow with the input; a global pooling
  // leaves no axis; an op off the spatial path (on a weight) is not read.
  Net fixed(Shape{1, 1, 16, 16});
  h = fixed.op("aten::upsample_bilinear2d", {fixed.x}, {"input"},
               Net::attrs({{"output_size", Ints{32, 32}}, {"align_corners", false}}));
  auto g2 = fixed.geometry(h);
  EXPECT_EQ(g2[0].axes[0].unknown_node, "upsample_bilinear2d_0");
  EXPECT_NE(g2[0].axes[0].unknown_reason.find("fixed size"), std::string::npos);

  Net global(Shape{1, 1, 16, 16});
  h = global.op("aten::adaptive_avg_pool2d", {global.conv_same(global.x, 2)}, {"self"}, Net::attrs({{"output_size", Ints{1, 1}}}));
  auto g3 = global.geometry(h);
  EXPECT_FALSE(g3[0].axes[1].known());
  EXPECT_NE(g3[0].axes[1].unknown_reason.find("does not grow"), std::string::npos) << g3[0].axes[1].str();
}

TEST(GeometryTest, NonlocalOpsKeepTheSizesAndAreNamed) {
  // An instance norm and a squeeze-excitation gate (global mean, times x):
  // the sizes are a plain conv's, but the values depend on the whole axis.
  Net net(Shape{1, 2, 16, 16});
  ValueId h = net.conv_valid(net.x, 2);
  h = net.op("aten::instance_norm", {h}, {"input"});
  const ValueId gate = net.op("aten::mean", {h}, {"self"}, Net::attrs({{"dim", Ints{2, 3}}, {"keepdim", true}}));
  h = net.op("aten::mul", {h, net.op("aten::sigmoid", {gate}, {"self"})}, {"self", "other"});
  const auto geo = net.geometry(h);
  for (const AxisGeometry& a : geo[0].axes) {
    ASSERT_TRUE(a.known()) << a.str();
    EXPECT_EQ(a.valid_sizes_str(), "n >= 3");
    EXPECT_EQ(a.offset, Rational::of(1));
    EXPECT_EQ(a.nonlocal, (std::vector<std::string>{"instance_norm_1", "mean_2"}));
  }
}

TEST(GeometryTest, DilationAndCeilMode) {
  // Two valid 3x3 convs of dilation 2: each reaches 4, n - 8, from 9; offset 4.
  Net net(Shape{1, 1, 20, 20});
  ValueId h = net.conv(net.x, 2, {3, 3}, Net::attrs({{"dilation", Ints{2}}}));
  h = net.conv(h, 2, {3, 3}, Net::attrs({{"dilation", Ints{2, 2}}}));
  const auto geo = net.geometry(h);
  for (const AxisGeometry& a : geo[0].axes) {
    EXPECT_EQ(a.valid_sizes_str(), "n >= 9");
    EXPECT_EQ(a.output_size(20), 12);
    EXPECT_EQ(a.offset, Rational::of(4));
    check_against_shape_rules(net, a, {1, 1, 20, 20}, {8, 9, 10, 21});
  }
  // Pooling 3 by stride 2 with ceil_mode: ceil((n-3)/2) + 1 from 3 (3->1,
  // 4->2, 5->2, 6->3, 7->3); a last window starting past the input is dropped.
  Net ceil(Shape{1, 1, 20, 20});
  h = ceil.pool(ceil.x, {3, 3}, Net::attrs({{"stride", Ints{2}}, {"ceil_mode", true}}));
  const auto g2 = ceil.geometry(h);
  for (const AxisGeometry& a : g2[0].axes) {
    EXPECT_EQ(a.valid_sizes_str(), "n >= 3");
    EXPECT_EQ(a.output_size(3), 1);
    EXPECT_EQ(a.output_size(4), 2);
    EXPECT_EQ(a.output_size(5), 2);
    EXPECT_EQ(a.output_size(6), 3);
    EXPECT_EQ(a.output_size(1007), 503);
    EXPECT_EQ(a.offset, Rational::of(1));
    EXPECT_EQ(a.context_after(6), Rational::of(-1, 2));  // the last voxel reaches past the input
    check_against_shape_rules(ceil, a, {1, 1, 20, 20}, {2, 3, 4, 5, 6, 7, 8, 99, 100});
  }
  // A ceil_mode pooling by 2 in a same-padded UNet: the skip of an odd size
  // never matches the doubled half, so odd sizes stay refused: n even.
  Net unet(Shape{1, 1, 16, 16});
  const ValueId skip = unet.conv_same(unet.x, 2);
  h = unet.conv_same(unet.pool(skip, {2, 2}, Net::attrs({{"ceil_mode", true}})), 2);
  h = unet.cat({skip, unet.up(h, 2, {2, 2})});
  const auto g3 = unet.geometry(h);
  EXPECT_EQ(g3[0].axes[0].valid_sizes_str(), "2k, k >= 1");
}

TEST(GeometryTest, AnisotropicAndSizeOneAxes) {
  // A valid UNet over (z, y, x) with convs (1,3,3) on the top level, (3,3,3)
  // at the bottom, pooling and upsampling by (1,2,2), as connectomics nets
  // do. z: n -> n (top convs, pooling by 1) -> n-4 (bottom) -> n-4 (up by 1)
  // = n cropped by 2 each side -> n-4: every n >= 5, offset 2. y and x: the
  // one-level UNet's 18 + 2k, offset 8.
  Net net(Shape{1, 1, 9, 28, 28});
  const auto geo = net.geometry(unet_valid(net, 1, {1, 2, 2}, {1, 3, 3}));
  const auto& z = geo[0].axes[0];
  ASSERT_TRUE(z.known()) << z.str();
  EXPECT_EQ(z.valid_sizes_str(), "n >= 5");
  EXPECT_EQ(z.output_size(9), 5);
  EXPECT_EQ(z.offset, Rational::of(2));
  EXPECT_EQ(z.context_after(9), Rational::of(2));
  check_against_shape_rules(net, z, {1, 1, 9, 28, 28}, {4, 5, 6, 9, 10});
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(geo[0].axes[i].valid_sizes_str(), "18 + 2k");
    EXPECT_EQ(geo[0].axes[i].offset, Rational::of(8));
    check_against_shape_rules(net, geo[0].axes[i], {1, 1, 9, 28, 28}, {16, 18, 19, 20, 30});
  }
  // A 2.5D net on one section (z = 1): kernels and pools of 1 along z keep
  // every z size, 1 included.
  Net flat(Shape{1, 1, 1, 16, 16});
  ValueId h = flat.conv(flat.x, 2, {1, 3, 3}, Net::attrs({{"padding", Ints{0, 1, 1}}}));
  h = flat.pool(h, {1, 2, 2});
  const auto g2 = flat.geometry(h);
  EXPECT_EQ(g2[0].axes[0].valid_sizes_str(), "n >= 1");
  EXPECT_EQ(g2[0].axes[0].output_size(1), 1);
  EXPECT_EQ(g2[0].axes[0].stride, Rational::of(1));
  EXPECT_EQ(g2[0].axes[1].stride, Rational::of(2));
  EXPECT_EQ(g2[0].axes[1].valid_sizes_str(), "n >= 2");
}

TEST(GeometryTest, MisalignedJoinsAndFixedCropsSayWhy) {
  // A skip joined without its crop after a valid conv: sizes n-2 and n never
  // match, and the voxels would be a voxel apart: unknown, naming the add.
  Net net(Shape{1, 1, 16, 16});
  net.strict = false;  // the add's operands do not match at 16 either
  const ValueId c = net.conv(net.x, 1, {3, 3}, Net::attrs({{"padding", Ints{1, 0}}}));  // keeps H, not W
  const ValueId sum = net.op("aten::add", {c, net.conv(net.x, 1, {3, 3}, Net::attrs({{"padding", Ints{0, 1}}}))},
                             {"self", "other"});
  const auto geo = net.geometry(sum);
  EXPECT_FALSE(geo[0].axes[0].known());
  EXPECT_EQ(geo[0].axes[0].unknown_node, "add_2");
  EXPECT_NE(geo[0].axes[0].unknown_reason.find("do not line up"), std::string::npos);

  // A crop to a fixed end (x[:, :, 1:15], as a graph traced at size 16 holds
  // it) joined with a path that grows: only n = 16 fits.
  Net crop(Shape{1, 1, 16, 16});
  const ValueId v = crop.conv_valid(crop.x, 1);  // n-2, offset 1
  const ValueId fixed = crop.op("aten::slice", {crop.x}, {"self"},
                                Net::attrs({{"dim", i64{2}}, {"start", i64{1}}, {"end", i64{15}}, {"step", i64{1}}}));
  const ValueId w = crop.op("aten::slice", {fixed}, {"self"},
                            Net::attrs({{"dim", i64{3}}, {"start", i64{1}}, {"end", i64{-1}}, {"step", i64{1}}}));
  const auto g2 = crop.geometry(crop.op("aten::add", {v, w}, {"self", "other"}));
  ASSERT_TRUE(g2[0].axes[0].known()) << g2[0].axes[0].str();
  EXPECT_TRUE(g2[0].axes[0].finite);
  EXPECT_EQ(g2[0].axes[0].valid_sizes_str(), "16");
  EXPECT_EQ(g2[0].axes[0].output_size(16), 14);
  EXPECT_FALSE(g2[0].axes[0].accepts(18));
  EXPECT_FALSE(g2[0].axes[0].accepts(100000));
  EXPECT_EQ(g2[0].axes[1].valid_sizes_str(), "n >= 3");  // x[..., 1:-1] grows with n
}

TEST(GeometryTest, ReadsEverySpellingOfTheOps) {
  // The same valid UNet with its ops renamed as torch.export writes them
  // (aten.conv2d.default, ...) and as torch.jit.trace does (aten::_convolution
  // with `transposed`, max_pool2d_with_indices): the same answer.
  auto build = [](Net& net) { return unet_valid(net, 1, {2, 2}); };
  Net ts(Shape{1, 1, 28, 30});
  const auto expected = ts.geometry(build(ts));
  for (bool exported : {true, false}) {
    Net net(Shape{1, 1, 28, 30});
    const ValueId out = build(net);
    for (NodeId id : std::vector<NodeId>(net.g.nodes())) {
      const Node& n = net.g.node(id);
      const std::string base(op_base(n.op));
      if (exported) {
        net.g.set_op(id, "aten." + (base == "max_pool2d" ? "max_pool2d_with_indices" : base) +
                             (base == "slice" ? ".Tensor" : base == "conv_transpose2d" ? ".input" : ".default"));
      } else if (base == "conv2d" || base == "conv_transpose2d") {
        net.g.set_attribute(id, "transposed", base == "conv_transpose2d");
        net.g.set_attribute(id, "output_padding", Ints{0, 0});
        net.g.set_op(id, "aten::_convolution");
      } else if (base == "max_pool2d") {
        net.g.set_op(id, "aten::max_pool2d_with_indices");
      }
    }
    const auto geo = net.geometry(out);
    ASSERT_EQ(geo[0].axes.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(geo[0].axes[i].str(), expected[0].axes[i].str()) << (exported ? "exported" : "traced");
      EXPECT_EQ(geo[0].axes[i].valid_sizes_str(), "18 + 2k");
    }
  }
}

// How the numbers of a computed centre crop are spelled: torch.jit.trace's
// (0-dim tensors: aten::size, prim::NumToTensor, tensor arithmetic,
// aten::Int), the pt2 reader's for torch.export with dynamic shapes
// (aten.sym_size.int, Python's int ops as aten::sub etc. on "a" and "b"), and
// Python's operator module as other tools keep it ("_operator.floordiv").
enum class Spelling { kTraced, kExported, kOperator };

// skip[:, :, d0:d0+U, ...] with d0 = (size(skip) - U) // 2, U = size(like),
// per spatial dim, computed in the graph as the spelling writes it.
ValueId computed_crop(Net& net, ValueId skip, ValueId like, Spelling spelling) {
  const bool traced = spelling == Spelling::kTraced;
  auto size = [&](ValueId v, i64 d) {
    const ValueId s = net.number(traced ? "aten::size" : "aten.sym_size.int", {v}, {"self"}, Net::attrs({{"dim", d}}));
    return traced ? net.number("prim::NumToTensor", {s}, {"a"}) : s;
  };
  auto binary = [&](const char* name, ValueId a, ValueId b) {
    if (traced) {
      const std::string op = std::string("aten::") + (std::string(name) == "floordiv" ? "floor_divide" : name);
      Attributes at = std::string(name) == "floordiv" ? Attributes{} : Net::attrs({{"alpha", i64{1}}});
      return net.number(op, {a, b}, {"self", "other"}, std::move(at));
    }
    const std::string op = spelling == Spelling::kExported ? std::string("aten::") + name : std::string("_operator.") + name;
    return net.number(op, {a, b}, {"a", "b"});
  };
  if (traced) {
    skip = net.op("aten::slice", {skip}, {"self"},
                  Net::attrs({{"dim", i64{0}}, {"start", i64{0}}, {"end", std::numeric_limits<i64>::max()}, {"step", i64{1}}}));
    skip = net.op("aten::slice", {skip}, {"self"},
                  Net::attrs({{"dim", i64{1}}, {"start", i64{0}}, {"end", std::numeric_limits<i64>::max()}, {"step", i64{1}}}));
  }
  const ValueId two = net.int_constant(2);
  for (i64 d = 2; d < static_cast<i64>(net.rank(skip)); ++d) {
    const ValueId u = size(like, d);
    const ValueId start = binary("floordiv", binary("sub", size(skip, d), u), two);
    const ValueId end = binary("add", start, u);
    auto as_int = [&](ValueId v) { return traced ? net.number("aten::Int", {v}, {"a"}) : v; };
    skip = net.op("aten::slice", {skip, as_int(start), as_int(end)}, {"self", "start", "end"},
                  Net::attrs({{"dim", d}, {"step", i64{1}}}));
  }
  return skip;
}

// The project's sample: a valid-padded one-level 3D UNet traced by
// torch.jit.trace, its centre crop computed from sizes at run time.
ValueId traced_unet(Net& net, Spelling spelling) {
  ValueId h = net.conv_valid(net.conv_valid(net.x, 2), 2);  // %41, the skip
  const ValueId skip = h;
  h = net.pool(h, {2, 2, 2});
  h = net.conv_valid(net.conv_valid(h, 2), 2);
  const ValueId u = net.up(h, 2, {2, 2, 2});
  h = net.cat({computed_crop(net, skip, u, spelling), u});
  h = net.conv_valid(net.conv_valid(h, 2), 2);
  return net.conv(h, 1, {1, 1, 1});  // the 1x1x1 head
}

TEST(GeometryTest, CentreCropComputedFromSizes) {
  // For input n: a = n-4 (two valid convs) -> pool 2: floor(a/2) -> b =
  // floor(a/2)-4 -> up: 2b. The crop starts at (a - 2b) // 2 = (8 + a mod 2)
  // // 2 = 4 for every n and takes 2b (2b + 8 <= a): the skip always meets
  // the upsampled path, odd a too (the pooling drops the skip's last voxel,
  // the crop leaves it after). Then two convs and the 1x1 head: 2b-4 =
  // 2 floor((n-4)/2) - 12. b >= 1 and 2b-4 >= 1 need floor(a/2) >= 7: n >= 18.
  // 44 -> 28, 45 -> 28, 1000 -> 984. Voxels: 2 (convs), 2.5 (pool, stride
  // 2), 6.5 (convs), 6 (up: -1/4 at stride 2) = 2 + 4 (the crop), 8 (convs):
  // context 8 before, 44 - 8 - 28 = 8 after at 44 (9 at 45).
  for (Spelling spelling : {Spelling::kTraced, Spelling::kExported, Spelling::kOperator}) {
    SCOPED_TRACE(static_cast<int>(spelling));
    Net net(Shape{1, 1, 44, 44, 44});
    const auto geo = net.geometry(traced_unet(net, spelling));
    ASSERT_EQ(geo.size(), 1u);
    ASSERT_EQ(geo[0].axes.size(), 3u);
    for (const AxisGeometry& a : geo[0].axes) {
      ASSERT_TRUE(a.known()) << a.str();
      EXPECT_EQ(a.valid_sizes_str(), "n >= 18");
      EXPECT_FALSE(a.accepts(17));
      EXPECT_EQ(a.output_size(18), 2);
      EXPECT_EQ(a.output_size(44), 28);
      EXPECT_EQ(a.output_size(45), 28);
      EXPECT_EQ(a.output_size(1000), 984);
      EXPECT_EQ(a.offset, Rational::of(8));
      EXPECT_EQ(a.stride, Rational::of(1));
      EXPECT_EQ(a.context_before(), Rational::of(8));
      EXPECT_EQ(a.context_after(44), Rational::of(8));
      EXPECT_EQ(a.context_after(45), Rational::of(9));
    }
    for (const AxisGeometry& a : geo[0].axes) {
      check_against_shape_rules(net, a, {1, 1, 44, 44, 44}, {16, 17, 18, 19, 20, 21, 44, 45, 46, 63, 100});
    }
  }
}

TEST(GeometryTest, ACropWhoseStartMovesIsUnknownByName) {
  // x[:, :, s:s+U] with U the size of a valid 3x3 conv of x (n-2, its voxels
  // from 1), and s = size(x) // 3 along H, size(x) % 2 along W: at the
  // example size 5, s = 1 and the voxels line up. Along H, s grows by 1 every
  // 3 sizes while every n >= 3 is accepted: unknown, naming the slice. Along
  // W, s is 0 at n = 4 (accepted: 0 + 2 <= 4): the output would lie a voxel
  // off, so unknown, naming the slice, at that size.
  Net net(Shape{1, 1, 5, 5});
  const ValueId c = net.conv_valid(net.x, 1);
  ValueId crop = net.x;
  for (i64 d = 2; d < 4; ++d) {
    const ValueId size = net.number("aten.sym_size.int", {net.x}, {"self"}, Net::attrs({{"dim", d}}));
    const ValueId s = d == 2 ? net.number("_operator.floordiv", {size, net.int_constant(3)}, {"a", "b"})
                             : net.number("_operator.mod", {size, net.int_constant(2)}, {"a", "b"});
    const ValueId u = net.number("aten.sym_size.int", {c}, {"self"}, Net::attrs({{"dim", d}}));
    crop = net.op("aten::slice", {crop, s, net.number("aten::add", {s, u}, {"a", "b"})}, {"self", "start", "end"},
                  Net::attrs({{"dim", d}, {"step", i64{1}}}));
  }
  const auto geo = net.geometry(net.op("aten::add", {crop, c}, {"self", "other"}));
  for (const AxisGeometry& a : geo[0].axes) {
    EXPECT_FALSE(a.known());
    EXPECT_EQ(a.unknown_op, "aten::slice");
  }
  EXPECT_EQ(geo[0].axes[0].unknown_node, "slice_5");
  EXPECT_NE(geo[0].axes[0].unknown_reason.find("start grows with the input"), std::string::npos) << geo[0].axes[0].str();
  EXPECT_EQ(geo[0].axes[1].unknown_node, "slice_10");
  EXPECT_NE(geo[0].axes[1].unknown_reason.find("starts at 0 for input size 4 but at 1"), std::string::npos) << geo[0].axes[1].str();
  for (i64 n : {4, 5, 6}) {
    // The shape rules run at every one of these sizes: only the place is in doubt.
    EXPECT_TRUE(net.shape_at({1, 1, n, n}).has_value()) << n;
  }

  // A number from sizes used as a tensor (scaling by the size) is not read:
  // unknown, naming the op; the batch size is a number on no spatial path.
  Net scaled(Shape{1, 1, 8, 8});
  scaled.strict = false;  // the reader's rules do not multiply by a 0-dim int
  const ValueId n2 = scaled.number("prim::NumToTensor", {scaled.number("aten::size", {scaled.x}, {"self"}, Net::attrs({{"dim", i64{2}}}))}, {"a"});
  const ValueId batch = scaled.number("aten::size", {scaled.x}, {"self"}, Net::attrs({{"dim", i64{0}}}));
  const ValueId h = scaled.op("aten::mul", {scaled.conv_same(scaled.x, 1), n2}, {"self", "other"});
  const auto g2 = scaled.geometry(scaled.op("aten::mul", {h, scaled.number("prim::NumToTensor", {batch}, {"a"})}, {"self", "other"}));
  EXPECT_EQ(g2[0].axes[0].unknown_node, "mul_4");
  EXPECT_NE(g2[0].axes[0].unknown_reason.find("number computed from sizes"), std::string::npos) << g2[0].axes[0].str();
  // Along W, H's size is a static number: the product keeps W's geometry.
  ASSERT_TRUE(g2[0].axes[1].known()) << g2[0].axes[1].str();
  EXPECT_EQ(g2[0].axes[1].valid_sizes_str(), "n >= 1");
}

TEST(GeometryTest, BigGraphsAreCheap) {
  // 3,000 same-padded convs in a row: one pass per axis, a period of 1.
  Net net(Shape{1, 1, 8, 8, 8});
  ValueId h = net.x;
  for (int i = 0; i < 3000; ++i) h = net.op("aten::relu", {net.conv_same(h, 1)}, {"self"});
  const auto geo = net.geometry(h);
  EXPECT_EQ(geo[0].axes[2].valid_sizes_str(), "n >= 1");
}

}  // namespace
}  // namespace tracegraph
