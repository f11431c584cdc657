// The core TorchScript reader's lists known while reading (issue 49): each
// archive holds the code text torch 1.13's torch.jit.script wrote (saved
// with torch.jit.save and pasted here; the module is in the comment), so the
// test needs no Python. Each list operation (append, pop, insert, extend,
// item assignment, del, copy, clear, reverse, slicing, len, enumerate/zip's
// min, a comprehension's loop) is read as what it does to the reader's list:
// the graph holds only the tensor ops, and an `if` on a list's length runs
// one branch.
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "archive_builder.h"
#include "test_util.h"
#include "tracegraph/exported_graph.h"

namespace tracegraph {
namespace {

using test::module_object;
using test::read;
using test::scripted_archive;

// The graph's node ops in order.
std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> out;
  for (NodeId id : g.nodes()) out.push_back(g.node(id).op);
  return out;
}

// The nodes of `op`, in order.
std::vector<const Node*> nodes_of(const Graph& g, const std::string& op) {
  std::vector<const Node*> out;
  for (NodeId id : g.nodes()) {
    if (g.node(id).op == op) out.push_back(&g.node(id));
  }
  return out;
}

// No list op reached the graph: what LibTorch's graph would have and no backend runs.
void expect_no_list_ops(const Graph& g) {
  for (const std::string& op : ops(g)) {
    EXPECT_TRUE(op.rfind("prim::", 0) != 0) << op;
    for (const char* list_op : {"append", "pop", "insert", "extend", "len", "__getitem__", "_set_item", "Delete", "clear", "reverse", "copy", "list"}) {
      EXPECT_NE(op, std::string("aten::") + list_op);
    }
  }
}

std::vector<std::int64_t> output_shape(const ExportedGraph& g) {
  const Value& out = g.graph.value(g.graph.outputs().at(0));
  std::vector<std::int64_t> dims;
  if (!out.shape) return dims;
  for (const Dim& d : *out.shape) dims.push_back(d.size);
  return dims;
}

// A 2D UNet's shape without weights (torch 1.13):
//
//   class UNet(nn.Module):  # encoders: ModuleList of 3 Enc (relu), decoders: of 2 Dec (cat)
//       def forward(self, x):
//           skips: List[torch.Tensor] = []
//           for enc in self.encoders:
//               x = enc(x)
//               skips.append(x)
//               x = self.down(x)          # max_pool2d(x, 2)
//           for i, dec in enumerate(self.decoders):
//               x = self.up(x)            # upsample_nearest2d(x, None, [2., 2.])
//               x = dec(x, skips[-i - 1])
//           first = skips.pop(0)
//           if len(skips) > 0:
//               x = x + skips[0].sum()
//           if len(self.encoders) > 5:
//               x = x * 2
//           return x + first.mean()
const char* kUNet = R"(class UNet(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  encoders : __torch__.torch.nn.modules.container.ModuleList
  down : __torch__.Down
  up : __torch__.Up
  decoders : __torch__.torch.nn.modules.container.___torch_mangle_0.ModuleList
  def forward(self: __torch__.UNet,
    x: Tensor) -> Tensor:
    skips = annotate(List[Tensor], [])
    encoders = self.encoders
    _0 = getattr(encoders, "0")
    _1 = getattr(encoders, "1")
    _2 = getattr(encoders, "2")
    x0 = (_0).forward(x, )
    _3 = torch.append(skips, x0)
    down = self.down
    x1 = (down).forward(x0, )
    x2 = (_1).forward(x1, )
    _4 = torch.append(skips, x2)
    down0 = self.down
    x3 = (down0).forward(x2, )
    x4 = (_2).forward(x3, )
    _5 = torch.append(skips, x4)
    down1 = self.down
    x5 = (down1).forward(x4, )
    decoders = self.decoders
    _06 = getattr(decoders, "0")
    _15 = getattr(decoders, "1")
    up = self.up
    x6 = (up).forward(x5, )
    x7 = (_06).forward(x6, skips[-1], )
    up0 = self.up
    x8 = (up0).forward(x7, )
    x9 = (_15).forward(x8, skips[-2], )
    first = torch.pop(skips, 0)
    if torch.gt(torch.len(skips), 0):
      x11 = torch.add(x9, torch.sum(skips[0]))
      x10 = x11
    else:
      x10 = x9
    encoders0 = self.encoders
    if torch.gt((encoders0).__len__(), 5):
      x12 = torch.mul(x10, 2)
    else:
      x12 = x10
    return torch.add(x12, torch.mean(first))
class Enc(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.Enc,
    x: Tensor) -> Tensor:
    return torch.relu(x)
class Down(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.Down,
    x: Tensor) -> Tensor:
    return torch.max_pool2d(x, [2, 2])
class Up(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.Up,
    x: Tensor) -> Tensor:
    _3 = torch.upsample_nearest2d(x, None, [2., 2.])
    return _3
class Dec(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.Dec,
    x: Tensor,
    skip: Tensor) -> Tensor:
    return torch.cat([x, skip], 1)
)";
const char* kModuleList = R"(class ModuleList(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : NoneType
  __annotations__["0"] = __torch__.Enc
  __annotations__["1"] = __torch__.Enc
  __annotations__["2"] = __torch__.Enc
  def __len__(self: __torch__.torch.nn.modules.container.ModuleList) -> int:
    return 3
)";
const char* kModuleListOfTwo = R"(class ModuleList(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : NoneType
  __annotations__["0"] = __torch__.Dec
  __annotations__["1"] = __torch__.Dec
  def __len__(self: __torch__.torch.nn.modules.container.___torch_mangle_0.ModuleList) -> int:
    return 2
)";

std::vector<std::byte> unet_archive() {
  const std::string enc = module_object("__torch__.Enc", {{"training", "\x88"}}), dec = module_object("__torch__.Dec", {{"training", "\x88"}});
  const std::string root = module_object(
      "__torch__.UNet",
      {{"training", "\x88"},
       {"encoders", module_object("__torch__.torch.nn.modules.container.ModuleList", {{"0", enc}, {"1", enc}, {"2", enc}})},
       {"down", module_object("__torch__.Down")},
       {"up", module_object("__torch__.Up")},
       {"decoders", module_object("__torch__.torch.nn.modules.container.___torch_mangle_0.ModuleList", {{"0", dec}, {"1", dec}})}});
  return scripted_archive(root, {{"__torch__.py", kUNet},
                                 {"__torch__/torch/nn/modules/container.py", kModuleList},
                                 {"__torch__/torch/nn/modules/container/___torch_mangle_0.py", kModuleListOfTwo}});
}

TEST(TorchScriptListsTest, AUNetsSkipsAppendedInItsEncoderLoopAreReadBackByItsDecoders) {
  const ExportedGraph g = read(unet_archive(), {}, {{1, 1, 16, 16}}, "unet.ts");
  // Every list op is gone; `len(skips) > 0` ran its branch, `len(self.encoders) > 5` (3) did not.
  EXPECT_EQ(ops(g.graph), (std::vector<std::string>{"aten::relu", "aten::max_pool2d", "aten::relu", "aten::max_pool2d", "aten::relu",
                                                    "aten::max_pool2d", "aten::upsample_nearest2d", "aten::cat", "aten::upsample_nearest2d",
                                                    "aten::cat", "aten::sum", "aten::add", "aten::mean", "aten::add"}));
  expect_no_list_ops(g.graph);
  // skips[-1] is the third encoder's output, skips[-2] the second's; after
  // pop(0), skips[0] is the second's and `first` the first's.
  const auto relus = nodes_of(g.graph, "aten::relu");
  const auto cats = nodes_of(g.graph, "aten::cat");
  ASSERT_EQ(relus.size(), 3u);
  ASSERT_EQ(cats.size(), 2u);
  EXPECT_EQ(cats[0]->inputs.at(1), relus[2]->outputs[0]);
  EXPECT_EQ(cats[1]->inputs.at(1), relus[1]->outputs[0]);
  EXPECT_EQ(nodes_of(g.graph, "aten::sum").at(0)->inputs.at(0), relus[1]->outputs[0]);
  EXPECT_EQ(nodes_of(g.graph, "aten::mean").at(0)->inputs.at(0), relus[0]->outputs[0]);
  EXPECT_EQ(output_shape(g), (std::vector<std::int64_t>{1, 3, 8, 8}));  // torch's, for a 1x1x16x16 input
  // Without shapes it reads the same: nothing here depends on them.
  EXPECT_EQ(ops(read(unet_archive()).graph), ops(g.graph));
  // The same bytes give the same graph, names included.
  EXPECT_EQ(graph_json(read(unet_archive(), {}, {{1, 1, 16, 16}}, "unet.ts")), graph_json(g));
}

// torch 1.13's script of:
//
//   skips: List[torch.Tensor] = []
//   for i in range(3):
//       x = torch.relu(x)
//       skips.append(x)
//   if len(skips) == 0:
//       x = torch.sigmoid(x)
//   if len(skips) > 2:
//       x = torch.tanh(x)
//   return x + skips[-1]
const char* kLenIf = R"(class LenIf(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.LenIf,
    x: Tensor) -> Tensor:
    skips = annotate(List[Tensor], [])
    x0 = x
    for i in range(3):
      x1 = torch.relu(x0)
      _0 = torch.append(skips, x1)
      x0 = x1
    if torch.eq(torch.len(skips), 0):
      x2 = torch.sigmoid(x0)
    else:
      x2 = x0
    if torch.gt(torch.len(skips), 2):
      x3 = torch.tanh(x2)
    else:
      x3 = x2
    return torch.add(x3, skips[-1])
)";

TEST(TorchScriptListsTest, AnIfOnTheLengthOfAListBuiltByAppendRunsOneBranch) {
  const ExportedGraph g = read(scripted_archive(module_object("__torch__.LenIf"), {{"__torch__.py", kLenIf}}), {}, {{2, 3}}, "lenif.ts");
  EXPECT_EQ(ops(g.graph), (std::vector<std::string>{"aten::relu", "aten::relu", "aten::relu", "aten::tanh", "aten::add"}));
  const auto relus = nodes_of(g.graph, "aten::relu");
  EXPECT_EQ(nodes_of(g.graph, "aten::add").at(0)->inputs.at(1), relus.at(2)->outputs[0]);
  EXPECT_EQ(output_shape(g), (std::vector<std::int64_t>{2, 3}));
}

// torch 1.13's script of:
//
//   a: List[torch.Tensor] = [x, x * 2]
//   a[0] = x + 1
//   del a[1]
//   b = a.copy()
//   b.clear()
//   b.append(x * 3)
//   c = a + b                      # [x + 1, x * 3]
//   c.reverse()                    # [x * 3, x + 1]
//   for i, t in enumerate(c):
//       x = x + t * i
//   for t, u in zip(a, c):
//       x = x - t * u
//   y = c.pop(0)                   # x * 3
//   c.insert(0, torch.relu(y))
//   c.extend([y, y])               # [relu(y), x + 1, y, y]
//   z = [torch.sigmoid(t) for t in c]
//   r = z[1:][::-1]                # [sigmoid(y), sigmoid(y), sigmoid(x + 1)]
//   return x + r[0] + c[len(c) - 1]
const char* kMethods = R"(class Methods(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.Methods,
    x: Tensor) -> Tensor:
    a = [x, torch.mul(x, 2)]
    _0 = torch._set_item(a, 0, torch.add(x, 1))
    torch.Delete(a, 1)
    b = torch.copy(a)
    torch.clear(b)
    _1 = torch.append(b, torch.mul(x, 3))
    c = torch.add(a, b)
    torch.reverse(c)
    _2 = ops.prim.min([9223372036854775807, torch.len(c)])
    x0 = x
    for i in range(_2):
      t = c[i]
      x0 = torch.add(x0, torch.mul(t, i))
    _3 = ops.prim.min([torch.len(a), torch.len(c)])
    x1 = x0
    for _4 in range(_3):
      t0 = a[_4]
      u = c[_4]
      x1 = torch.sub(x1, torch.mul(t0, u))
    y = torch.pop(c, 0)
    torch.insert(c, 0, torch.relu(y))
    torch.extend(c, [y, y])
    z = annotate(List[Tensor], [])
    for _5 in range(torch.len(c)):
      t1 = c[_5]
      _6 = torch.append(z, torch.sigmoid(t1))
    r = torch.slice(torch.slice(z, 1), None, None, -1)
    _7 = torch.add(torch.add(x1, r[0]), c[torch.sub(torch.len(c), 1)])
    return _7
)";

TEST(TorchScriptListsTest, EachListMethodIsReadAsWhatItDoesToTheList) {
  const ExportedGraph g = read(scripted_archive(module_object("__torch__.Methods"), {{"__torch__.py", kMethods}}), {}, {{2, 3}}, "methods.ts");
  // x * 2 (deleted), relu(y) and the sigmoids nobody reads are dead code.
  EXPECT_EQ(ops(g.graph), (std::vector<std::string>{"aten::add", "aten::mul", "aten::mul", "aten::add", "aten::mul", "aten::add", "aten::mul",
                                                    "aten::sub", "aten::sigmoid", "aten::add", "aten::add"}));
  expect_no_list_ops(g.graph);
  const ValueId y = nodes_of(g.graph, "aten::mul").at(0)->outputs[0];  // x * 3
  EXPECT_EQ(nodes_of(g.graph, "aten::sigmoid").at(0)->inputs.at(0), y);  // r[0]
  EXPECT_EQ(nodes_of(g.graph, "aten::add").back()->inputs.at(1), y);      // c[len(c) - 1]
  // enumerate's first trip multiplies c[0] (x * 3) by 0, its second c[1] (x + 1) by 1.
  const auto muls = nodes_of(g.graph, "aten::mul");
  EXPECT_EQ(muls.at(1)->inputs.at(0), y);
  EXPECT_EQ(muls.at(1)->attributes.get_int("other").value_or(-1), 0);
  EXPECT_EQ(output_shape(g), (std::vector<std::int64_t>{2, 3}));
}

// torch 1.13's script of `xs.append(torch.relu(x)); self.fill(xs, x); return
// xs[0] + xs[-1]`, fill appending sigmoid(x): the callee's parameter is the
// caller's list.
const char* kShared = R"(class M(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.M,
    x: Tensor) -> Tensor:
    xs = annotate(List[Tensor], [])
    _0 = torch.append(xs, torch.relu(x))
    _1 = (self).fill(xs, x, )
    return torch.add(xs[0], xs[-1])
  def fill(self: __torch__.M,
    xs: List[Tensor],
    x: Tensor) -> NoneType:
    _2 = torch.append(xs, torch.sigmoid(x))
    return None
)";

TEST(TorchScriptListsTest, AListPassedToAMethodIsTheSameList) {
  const ExportedGraph g = read(scripted_archive(module_object("__torch__.M"), {{"__torch__.py", kShared}}));
  EXPECT_EQ(ops(g.graph), (std::vector<std::string>{"aten::relu", "aten::sigmoid", "aten::add"}));
  const Node& add = *nodes_of(g.graph, "aten::add").at(0);
  EXPECT_EQ(add.inputs.at(0), nodes_of(g.graph, "aten::relu").at(0)->outputs[0]);
  EXPECT_EQ(add.inputs.at(1), nodes_of(g.graph, "aten::sigmoid").at(0)->outputs[0]);
}

// torch 1.13's script of `x[[0, 2, 1]] + x[:, [1, 0, 0, 2]].sum()` (its
// `self` named `s`): each index list a torch.tensor of constants.
const char* kIndex = R"(class S(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(s: __torch__.S,
    x: Tensor) -> Tensor:
    _0 = annotate(List[Optional[Tensor]], [torch.tensor([0, 2, 1], dtype=4)])
    _1 = torch.index(x, _0)
    _2 = torch.tensor([1, 0, 0, 2], dtype=4)
    _3 = torch.slice(x)
    _4 = annotate(List[Optional[Tensor]], [None, _2])
    _5 = torch.add(_1, torch.sum(torch.index(_3, _4)))
    return _5
)";

TEST(TorchScriptListsTest, AConstantIndexListIsAnInt64Constant) {
  const ExportedGraph g = read(scripted_archive(module_object("__torch__.S"), {{"__torch__.py", kIndex}}), {}, {{3, 4}}, "index.ts");
  EXPECT_EQ(ops(g.graph), (std::vector<std::string>{"aten::index", "aten::slice", "aten::index", "aten::sum", "aten::add"}));
  const auto index = nodes_of(g.graph, "aten::index");
  ASSERT_EQ(index.size(), 2u);
  const Value& rows = g.graph.value(index[0]->inputs.at(1));
  ASSERT_TRUE(rows.is_constant());
  EXPECT_EQ(rows.data.dtype(), DType::kInt64);
  EXPECT_EQ(std::vector<std::int64_t>(rows.data.data_as<std::int64_t>(), rows.data.data_as<std::int64_t>() + rows.data.numel()),
            (std::vector<std::int64_t>{0, 2, 1}));
  // x[:, [1, 0, 0, 2]]: the first index is None, as the .pt2 reader marks it.
  const Value& columns = g.graph.value(index[1]->inputs.at(1));
  ASSERT_TRUE(columns.is_constant());
  EXPECT_EQ(columns.data.shape(), (Shape{4}));
  const AttributeValue* present = index[1]->attributes.find("indices");
  ASSERT_NE(present, nullptr);
  EXPECT_EQ(std::get<std::vector<bool>>(*present), (std::vector<bool>{false, true}));
}

// M's forward of x whose body is `body` (lines at 4 spaces): its first line is line 7.
std::vector<std::byte> forward_of(const std::string& body) {
  return test::archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n" + body);
}

TEST(TorchScriptListsTest, WhatCannotBeKnownWhileReadingIsRefusedNamingItsLineAndConstruct) {
  // A list the graph computes (a tensor's size) is not one the reader changes.
  EXPECT_TG_ERROR(read(forward_of("    _0 = torch.size(x)\n    _1 = torch.append(_0, 3)\n    return x\n")), ErrorCode::kUnsupported,
                  "line 8: list.append (torch.append) changes an int[] the graph computes");
  EXPECT_TG_ERROR(read(forward_of("    xs = annotate(List[Tensor], [])\n    _0 = torch.pop(xs)\n    return x\n")), ErrorCode::kUnsupported,
                  "line 8: list.pop at index -1 of a list of 0 items");
  // An index the input's shape decides: its shapes are needed, and with them it is known.
  const auto by_rank = forward_of("    xs = [x]\n    return xs[torch.sub(torch.len(torch.size(x)), 4)]\n");
  EXPECT_TG_ERROR(read(by_rank), ErrorCode::kNeedsInputShapes, "line 8: this index depends on the input's shape");
  EXPECT_TG_ERROR(read(by_rank, {}, {{2, 3}}), ErrorCode::kUnsupported, "line 8: index -2 of a list of 1 items");
  EXPECT_EQ(read(by_rank, {}, {{2, 3, 4, 5}}).graph.num_nodes(), 0u);  // xs[0]: the sizes read for it are dead code
  // A list that would hold itself, or nest past the limit, or deepen inside another.
  EXPECT_TG_ERROR(read(forward_of("    xs = annotate(List[List[Tensor]], [])\n    _0 = torch.append(xs, xs)\n    return x\n")),
                  ErrorCode::kUnsupported, "line 8: list.append puts a list into itself");
  EXPECT_TG_ERROR(read(forward_of("    x0 = [x]\n    for _0 in range(300):\n      x0 = [x0]\n    return x\n")), ErrorCode::kLimitExceeded,
                  "line 9: lists and tuples nested deeper than max_expression_depth (200)");
  EXPECT_TG_ERROR(read(forward_of("    inner = annotate(List[Tensor], [])\n    outer = [inner]\n    _0 = torch.append(inner, [x])\n    return x\n")),
                  ErrorCode::kUnsupported, "line 9: list.append puts a list or tuple into a list that another list or tuple holds");
}

}  // namespace
}  // namespace tracegraph
