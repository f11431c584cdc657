// The core TorchScript reader's module paths: while it inlines a
// submodule's method, the nodes it makes are that submodule's, named by its
// attribute path from the root and its class (the archive's type name
// without its Python module and ___torch_mangle_N). Each archive holds the
// code text torch 2.14 wrote for (pasted, weights left out):
//
//   class Attention(nn.Module):          # forward: relu(x)
//   class Block(nn.Module):              # attn = Attention(); forward: x + attn(x)
//   class Encoder(nn.Module):            # blocks = ModuleList([Block(), Block()])
//   class M(nn.Module):                  # encoder = Encoder(); forward: sigmoid(encoder(x))
//
// traced (`(encoder).forward(x, )`, getattr(blocks, "1")) and scripted
// (`(self.encoder).forward(x)`, a method of the module on itself).
#include <string>
#include <vector>

#include "archive_builder.h"
#include "test_util.h"
#include "tracegraph/module_tree.h"

namespace tracegraph {
namespace {

using test::module_object;
using test::read;
using test::scripted_archive;

// M { encoder: Encoder { blocks: ModuleList { 0: Block { attn }, 1: Block { attn } } } },
// the second block of a mangled class, as torch.jit.trace names a second instance.
std::string module_tree_pickle() {
  const std::string block0 = module_object("__torch__.models.Block", {{"attn", module_object("__torch__.models.Attention")}});
  const std::string block1 = module_object("__torch__.models.___torch_mangle_6.Block", {{"attn", module_object("__torch__.models.___torch_mangle_2.Attention")}});
  const std::string blocks = module_object("__torch__.torch.nn.modules.container.ModuleList", {{"0", block0}, {"1", block1}});
  return module_object("__torch__.models.M", {{"encoder", module_object("__torch__.models.Encoder", {{"blocks", blocks}})}});
}

const char* kHeader = "  __parameters__ = []\n  __buffers__ = []\n  training : bool\n  _is_full_backward_hook : Optional[bool]\n";

std::vector<std::byte> traced_archive() {
  const std::string h = kHeader;
  const std::string models =
      "class M(Module):\n" + h +
      "  encoder : __torch__.models.Encoder\n"
      "  def forward(self: __torch__.models.M,\n    x: Tensor) -> Tensor:\n"
      "    encoder = self.encoder\n    return torch.sigmoid((encoder).forward(x, ))\n"
      "class Encoder(Module):\n" + h +
      "  blocks : __torch__.torch.nn.modules.container.ModuleList\n"
      "  def forward(self: __torch__.models.Encoder,\n    x: Tensor) -> Tensor:\n"
      "    blocks = self.blocks\n    _1 = getattr(blocks, \"1\")\n    blocks0 = self.blocks\n    _0 = getattr(blocks0, \"0\")\n"
      "    return (_1).forward((_0).forward(x, ), )\n"
      "class Block(Module):\n" + h +
      "  attn : __torch__.models.Attention\n"
      "  def forward(self: __torch__.models.Block,\n    x: Tensor) -> Tensor:\n"
      "    attn = self.attn\n    return torch.add(x, (attn).forward(x, ))\n"
      "class Attention(Module):\n" + h +
      "  def forward(self: __torch__.models.Attention,\n    x: Tensor) -> Tensor:\n    return torch.relu(x)\n";
  const std::string block1 =
      "class Block(Module):\n" + h +
      "  attn : __torch__.models.___torch_mangle_2.Attention\n"
      "  def forward(self: __torch__.models.___torch_mangle_6.Block,\n    argument_1: Tensor) -> Tensor:\n"
      "    attn = self.attn\n    _0 = torch.add(argument_1, (attn).forward(argument_1, ))\n    return _0\n";
  const std::string attn1 =
      "class Attention(Module):\n" + h +
      "  def forward(self: __torch__.models.___torch_mangle_2.Attention,\n    argument_1: Tensor) -> Tensor:\n"
      "    input = torch.relu(argument_1)\n    return input\n";
  return scripted_archive(module_tree_pickle(), {{"__torch__/models.py", models},
                                                 {"__torch__/models/___torch_mangle_6.py", block1},
                                                 {"__torch__/models/___torch_mangle_2.py", attn1}});
}

// Scripted: attribute chains called directly, and Block's forward calling a
// method of its own (its nodes are still Block's).
std::vector<std::byte> scripted_module_archive() {
  const std::string h = kHeader;
  auto block = [&](const std::string& cls, const std::string& attn) {
    return "class Block(Module):\n" + h + "  attn : " + attn + "\n"
           "  def forward(s: " + cls + ",\n    x: Tensor) -> Tensor:\n"
           "    _0 = (s.attn).forward(x, )\n    return (s).residual(x, _0, )\n"
           "  def residual(s: " + cls + ",\n    x: Tensor,\n    y: Tensor) -> Tensor:\n    return torch.add(x, y)\n";
  };
  const std::string models =
      "class M(Module):\n" + h +
      "  encoder : __torch__.models.Encoder\n"
      "  def forward(s: __torch__.models.M,\n    x: Tensor) -> Tensor:\n"
      "    return torch.sigmoid((s.encoder).forward(x, ))\n"
      "class Encoder(Module):\n" + h +
      "  blocks : __torch__.torch.nn.modules.container.ModuleList\n"
      "  def forward(s: __torch__.models.Encoder,\n    x: Tensor) -> Tensor:\n"
      "    blocks = s.blocks\n    _0 = getattr(blocks, \"0\")\n    _1 = getattr(blocks, \"1\")\n"
      "    x0 = (_0).forward(x, )\n    return (_1).forward(x0, )\n" +
      block("__torch__.models.Block", "__torch__.models.Attention") +
      "class Attention(Module):\n" + h +
      "  def forward(s: __torch__.models.Attention,\n    x: Tensor) -> Tensor:\n    return torch.relu(x)\n";
  const std::string block1 = block("__torch__.models.___torch_mangle_6.Block", "__torch__.models.___torch_mangle_2.Attention");
  const std::string attn1 =
      "class Attention(Module):\n" + h +
      "  def forward(s: __torch__.models.___torch_mangle_2.Attention,\n    x: Tensor) -> Tensor:\n    return torch.relu(x)\n";
  return scripted_archive(module_tree_pickle(), {{"__torch__/models.py", models},
                                                 {"__torch__/models/___torch_mangle_6.py", block1},
                                                 {"__torch__/models/___torch_mangle_2.py", attn1}});
}

// "op @ path:type > path:type" for each node, in order.
std::vector<std::string> modules_of(const Graph& g) {
  std::vector<std::string> out;
  for (NodeId id : g.nodes()) {
    std::string s = g.node(id).op + " @";
    for (const ModuleFrame& f : g.module_path(id)) s += (s.back() == '@' ? " " : " > ") + f.path + ":" + f.type;
    out.push_back(s);
  }
  return out;
}

const std::vector<std::string> kExpected = {
    "aten::relu @ encoder:Encoder > encoder.blocks.0:Block > encoder.blocks.0.attn:Attention",
    "aten::add @ encoder:Encoder > encoder.blocks.0:Block",
    "aten::relu @ encoder:Encoder > encoder.blocks.1:Block > encoder.blocks.1.attn:Attention",
    "aten::add @ encoder:Encoder > encoder.blocks.1:Block",
    "aten::sigmoid @",
};

TEST(TorchScriptModulesTest, TracedCodeGivesEachNodeItsModulePath) {
  const ExportedGraph g = read(traced_archive(), {}, {{1, 4}}, "traced.ts");
  EXPECT_EQ(modules_of(g.graph), kExpected);
}

TEST(TorchScriptModulesTest, ScriptedCodeGivesEachNodeItsModulePath) {
  const ExportedGraph g = read(scripted_module_archive(), {}, {{1, 4}}, "scripted.ts");
  EXPECT_EQ(modules_of(g.graph), kExpected);
}

TEST(TorchScriptModulesTest, TheBlocksAreRepeatsInTheModuleTree) {
  const ExportedGraph g = read(traced_archive(), {}, {{1, 4}}, "traced.ts");
  const ModuleTree tree = module_tree(g.graph);
  ASSERT_EQ(tree.groups.size(), 6u);  // root, encoder, blocks.0, blocks.0.attn, blocks.1, blocks.1.attn
  EXPECT_EQ(tree.groups[1].children, (std::vector<std::size_t>{2, 4}));
  EXPECT_EQ(tree.groups[2].repeats, 2u);
  EXPECT_EQ(tree.groups[4].repeat_of, std::optional<std::size_t>(2));
  EXPECT_EQ(tree.groups[4].type, "Block");  // ___torch_mangle_6.Block
}

}  // namespace
}  // namespace tracegraph
