// The .pt2 reader on three real archives committed as seeds (tests/data/valid:
// torch.export.save by torch 2.14, one re-zipped deflated by Python's zipfile;
// tests/models/make_pt2_models.py makes them). Runs natively and in wasm;
// tests/native/pt2_test.cpp runs the zoo's archives on both backends.
#include "tracegraph/pt2.h"

#include "test_util.h"
#include "tracegraph/activation.h"
#include "tracegraph/file_io.h"
#include "tracegraph/module_tree.h"

namespace tracegraph {
namespace {

TEST(Pt2SeedTest, ReadsADeflatedArchiveWithASymbolicBatch) {
  const ExportedGraph g = load_pt2(test_data("valid/dynamic_batch.deflated.pt2"));
  ASSERT_EQ(g.graph.inputs().size(), 1u);
  EXPECT_EQ(shape_str(*g.graph.value(g.graph.inputs()[0]).shape), "[s77, 3, 8, 8]");
  EXPECT_EQ(g.metadata.at("reader"), "pt2");
  EXPECT_EQ(g.metadata.at("schema_version").substr(0, 2), "8.");
  ASSERT_TRUE(g.in_spec && g.out_spec);
  EXPECT_EQ(g.in_spec->str(), "((*,), {})");
  const auto a = output_activation(g.graph);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].str(), "sigmoid");
  // The conv weight, read from its raw storage.
  const auto w = g.graph.find_value("p_conv_weight");
  ASSERT_TRUE(w);
  EXPECT_EQ(g.graph.value(*w).data.shape(), (Shape{5, 3, 3, 3}));
}

TEST(Pt2SeedTest, KeepsNoneInAListOfOptionalTensors) {
  const ExportedGraph g = load_pt2(test_data("valid/index_with_none.pt2"));
  bool found = false;
  for (NodeId id : g.graph.nodes()) {
    const Node& n = g.graph.node(id);
    if (n.op != "aten.index.Tensor") continue;
    found = true;
    EXPECT_EQ(std::get<std::vector<bool>>(*n.attributes.find("indices")), (std::vector<bool>{false, true}));
  }
  EXPECT_TRUE(found);
}

// nested_blocks.pt2 (make_pt2_models.py's NestedBlocks): an encoder of three
// identical blocks, each attn (qkv) and mlp (0: Linear, 1: GELU), and a head.
// Each node's nn_module_stack is its module path, the root left out.
TEST(Pt2SeedTest, ReadsEachNodesModulePath) {
  const ExportedGraph g = load_pt2(test_data("valid/nested_blocks.pt2"));
  auto path_of = [&](const std::string& node) {
    std::string s;
    for (const ModuleFrame& f : g.graph.module_path(*g.graph.find_node(node))) s += (s.empty() ? "" : " > ") + f.path + ":" + f.type;
    return s;
  };
  EXPECT_EQ(path_of("linear"), "encoder:Encoder > encoder.blocks.0:Block > encoder.blocks.0.attn:Attention > encoder.blocks.0.attn.qkv:Linear");
  EXPECT_EQ(path_of("relu_1"), "encoder:Encoder > encoder.blocks.1:Block > encoder.blocks.1.attn:Attention");
  EXPECT_EQ(path_of("gelu_2"), "encoder:Encoder > encoder.blocks.2:Block > encoder.blocks.2.mlp:Sequential > encoder.blocks.2.mlp.1:GELU");
  EXPECT_EQ(path_of("add_2"), "encoder:Encoder > encoder.blocks.2:Block");
  EXPECT_EQ(path_of("linear_6"), "head:Linear");
  EXPECT_EQ(path_of("sigmoid"), "");  // the root's own forward
  // The tree torch's named_modules() gives, the blocks repeats of the first.
  const ModuleTree tree = module_tree(g.graph);
  const ModuleGroup& encoder = tree.groups[*tree.groups[0].children.begin()];
  EXPECT_EQ(encoder.path, "encoder");
  ASSERT_EQ(encoder.children.size(), 3u);
  EXPECT_EQ(tree.groups[encoder.children[0]].repeats, 3u);
  EXPECT_EQ(tree.groups[encoder.children[2]].repeat_of, encoder.children[0]);
  EXPECT_EQ(tree.groups[encoder.children[0]].parameters, 2 * (4 * 4 + 4));
  EXPECT_EQ(tree.groups[encoder.children[0]].flops, 2 * (2.0 * 2 * 4 * 4));  // two linears on a [2, 4] input
  EXPECT_EQ(tree.groups[0].node_count, g.graph.num_nodes());
}

// Every prefix of a real archive, and every byte of its central directory
// flipped, is a typed error or a graph: never a crash, never a wrong read.
TEST(Pt2SeedTest, EveryCutAndFlippedDirectoryByteIsATypedError) {
  const auto bytes = read_file_bytes(test_data("valid/index_with_none.pt2"), 1 << 24);
  for (std::size_t cut = 0; cut < bytes->size(); cut += 97) {
    EXPECT_THROW(read_pt2(std::span<const std::byte>(bytes->data(), cut), nullptr, "cut.pt2"), Error) << cut;
  }
  std::size_t errors = 0;
  for (std::size_t at = bytes->size() - 1500; at < bytes->size(); ++at) {
    std::vector<std::byte> copy(*bytes);
    copy[at] ^= std::byte{0x5a};
    try {
      read_pt2(copy, nullptr, "flipped.pt2").graph.verify();
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0u);
}

TEST(Pt2SeedTest, NotAnArchiveIsATypedError) {
  const std::string text = "{\"format\": \"tracegraph\"}";
  EXPECT_TG_ERROR(read_pt2(std::as_bytes(std::span(text.data(), text.size())), nullptr, "model.json"), ErrorCode::kParse,
                  "model.json: not a zip archive");
  EXPECT_FALSE(is_pt2_archive(std::as_bytes(std::span(text.data(), text.size()))));
}

}  // namespace
}  // namespace tracegraph
