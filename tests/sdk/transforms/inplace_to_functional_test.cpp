#include "tracegraph/transforms/inplace_to_functional.h"

#include "test_util.h"
#include "tracegraph/op_table.h"

namespace tracegraph {
namespace {

// Before:                          After:
//   %r = aten::relu_(%x)             %r = aten::relu(%x)
//   %s = aten::sigmoid(%x)  ->       %s = aten::sigmoid(%r)
//   return (%x, %s)                  return (%r, %s)
TEST(InplaceToFunctionalTest, LaterReadsReadTheResult) {
  Graph g;
  ValueId x = g.add_input("x");
  NodeId before = g.add_node("aten::neg", {x}, {"n"});
  NodeId relu = g.add_node("aten::relu_", {x}, {"r"});
  NodeId sig = g.add_node("aten::sigmoid", {x}, {"s"});
  g.set_outputs({x, g.node(sig).outputs[0]});
  EXPECT_EQ(inplace_to_functional(g), 1u);
  g.verify();
  const ValueId r = g.node(relu).outputs[0];
  EXPECT_EQ(g.node(relu).op, "aten::relu");
  EXPECT_EQ(g.node(sig).inputs[0], r);
  EXPECT_EQ(g.node(before).inputs[0], x);  // a read before the write keeps the old value
  EXPECT_EQ(g.outputs()[0], r);
}

TEST(InplaceToFunctionalTest, ChainsOfWritesFollowEachOther) {
  // x.relu_(); x.sigmoid_(); return x
  Graph g;
  ValueId x = g.add_input("x");
  NodeId a = g.add_node("aten::relu_", {x}, {"a"});
  NodeId b = g.add_node("aten::sigmoid_", {x}, {"b"});
  g.set_outputs({x});
  EXPECT_EQ(inplace_to_functional(g), 2u);
  g.verify();
  EXPECT_EQ(g.node(b).inputs[0], g.node(a).outputs[0]);
  EXPECT_EQ(g.outputs()[0], g.node(b).outputs[0]);
}

TEST(InplaceToFunctionalTest, DoesNotFireWithoutInplaceOps) {
  Graph g;
  ValueId x = g.add_input("x");
  NodeId n = g.add_node("aten::relu", {x}, {"r"});
  NodeId d = g.add_node("aten::__and__", {x, x}, {"d"});  // a dunder op is not in-place
  g.set_outputs({g.node(n).outputs[0], g.node(d).outputs[0]});
  const std::string before = g.dump();
  EXPECT_EQ(inplace_to_functional(g), 0u);
  EXPECT_EQ(g.dump(), before);
}

TEST(InplaceToFunctionalTest, AWriteThroughAReshapeThatShowsIsRefused) {
  // v = h.view(...); v.sigmoid_(); return h  -- the write would show through %h.
  Graph g;
  ValueId h = g.add_input("h");
  NodeId view = g.add_node("aten::view", {h}, {"v"});
  g.add_node("aten::sigmoid_", {g.node(view).outputs[0]}, {"w"});
  g.set_outputs({h});
  const std::string before = g.dump();
  EXPECT_TG_ERROR(inplace_to_functional(g), ErrorCode::kUnsupported, "writes %v, which shares memory with %h");
  EXPECT_EQ(g.dump(), before);  // unchanged
}

TEST(InplaceToFunctionalTest, AWriteThroughSlicesIsScatteredBack) {
  // m = zeros; m[0:2, 1:3].fill_(5); return m  -- the write shows through %m:
  // it is scattered back, view by view, and the output reads the result.
  Graph g;
  ValueId m = g.add_input("m");
  Attributes rows, cols;
  rows.set("dim", std::int64_t{0});
  rows.set("start", std::int64_t{0});
  rows.set("end", std::int64_t{2});
  rows.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
  cols.set("dim", std::int64_t{1});
  cols.set("start", std::int64_t{1});
  cols.set("end", std::int64_t{3});
  cols.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
  NodeId r = g.add_node("aten::slice", {m}, {"r"}, rows);
  NodeId c = g.add_node("aten::slice", {g.node(r).outputs[0]}, {"c"}, cols);
  Attributes value;
  value.set("value", 5.0);
  NodeId fill = g.add_node("aten::fill_", {g.node(c).outputs[0]}, {"f"}, value);
  NodeId later = g.add_node("aten::relu", {m}, {"y"});
  g.set_outputs({m});
  EXPECT_EQ(inplace_to_functional(g), 1u);
  g.verify();
  EXPECT_EQ(g.node(fill).op, "aten::fill");
  // The inner scatter puts the filled view into the rows; the outer puts those into %m.
  const Node& outer = g.node(*g.value(g.outputs()[0]).producer);
  EXPECT_EQ(outer.op, "aten::slice_scatter");
  EXPECT_EQ(outer.inputs[0], m);
  EXPECT_EQ(outer.attributes.get_int("dim"), 0);
  const Node& inner = g.node(*g.value(outer.inputs[1]).producer);
  EXPECT_EQ(inner.op, "aten::slice_scatter");
  EXPECT_EQ(inner.inputs[0], g.node(r).outputs[0]);
  EXPECT_EQ(inner.inputs[1], g.node(fill).outputs[0]);
  EXPECT_EQ(inner.attributes.get_int("start"), 1);
  // A later read of %m reads the scattered value; the views read the old one.
  EXPECT_EQ(g.node(later).inputs[0], g.outputs()[0]);
  EXPECT_EQ(g.node(r).inputs[0], m);
}

TEST(InplaceToFunctionalTest, AWriteThroughAViewNobodyReadsAgainIsFine) {
  // v = h[:, :1]; v.sigmoid_(); return v
  Graph g;
  ValueId h = g.add_input("h");
  NodeId view = g.add_node("aten::slice", {h}, {"v"});
  NodeId s = g.add_node("aten::sigmoid_", {g.node(view).outputs[0]}, {"w"});
  g.set_outputs({g.node(view).outputs[0]});
  EXPECT_EQ(inplace_to_functional(g), 1u);
  EXPECT_EQ(g.outputs()[0], g.node(s).outputs[0]);
}

TEST(InplaceToFunctionalTest, AViewTakenAfterTheWriteReadsTheResult) {
  // x.relu_(); y = x[..]; return y  -- the slice is taken after the write.
  Graph g;
  ValueId x = g.add_input("x");
  NodeId relu = g.add_node("aten::relu_", {x}, {"r"});
  NodeId view = g.add_node("aten::slice", {x}, {"y"});
  g.set_outputs({g.node(view).outputs[0]});
  EXPECT_EQ(inplace_to_functional(g), 1u);
  EXPECT_EQ(g.node(view).inputs[0], g.node(relu).outputs[0]);
}

}  // namespace
}  // namespace tracegraph
