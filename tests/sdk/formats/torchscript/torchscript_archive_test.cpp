// The core's TorchScript archive reader on two real archives committed as
// seeds (tests/data/valid: made by torch 2.14's torch.jit.trace and
// torch.jit.script, tests/models/make_zoo_models.py and make_test_models.py).
// Runs natively and in wasm; tests/native/core_reader.h holds it against
// LibTorch's reader on every test and zoo model.
#include "tracegraph/torchscript_archive.h"

#include "test_util.h"
#include "tracegraph/activation.h"
#include "tracegraph/file_io.h"

namespace tracegraph {
namespace {

TEST(TorchScriptArchiveTest, ReadsATracedModuleWithItsWeightsAndActivation) {
  const ExportedGraph g = load_torchscript_archive(test_data("valid/sigmoid_then_pool.ts"));
  EXPECT_EQ(g.metadata.at("reader"), "torchscript archive");
  ASSERT_EQ(g.graph.inputs().size(), 1u);
  ASSERT_EQ(g.graph.outputs().size(), 1u);
  ASSERT_TRUE(g.in_spec && g.out_spec);
  EXPECT_EQ(g.in_spec->str(), "((*,), {})");
  bool conv = false;
  for (NodeId id : g.graph.nodes()) {
    const Node& n = g.graph.node(id);
    if (n.op != "aten::_convolution") continue;
    conv = true;
    EXPECT_EQ(n.attributes.get_ints("stride"), (std::vector<std::int64_t>{1, 1}));  // named by LibTorch's schema
    const Value& w = g.graph.value(n.inputs.at(1));
    EXPECT_TRUE(w.is_constant());
    EXPECT_EQ(w.data.dim(), 4);
  }
  EXPECT_TRUE(conv);
  const auto a = output_activation(g.graph);
  EXPECT_EQ(a.at(0).kind, ActivationKind::kSigmoid) << a.at(0).str();
}

TEST(TorchScriptArchiveTest, ControlFlowIsRefusedNamingTheEntryAndLine) {
  EXPECT_TG_ERROR(load_torchscript_archive(test_data("valid/loop_on_values.ts")), ErrorCode::kUnsupported, "/code/__torch__.py line ");
}

TEST(TorchScriptArchiveTest, EveryPrefixAndFlippedDirectoryByteIsATypedError) {
  const auto bytes = read_file_bytes(test_data("valid/sigmoid_then_pool.ts"), 1 << 24);
  for (std::size_t cut = 0; cut < bytes->size(); cut += 61) {
    EXPECT_THROW(read_torchscript_archive(std::span<const std::byte>(bytes->data(), cut), nullptr, "cut.ts"), Error) << cut;
  }
  for (std::size_t at = bytes->size() - 1200; at < bytes->size(); ++at) {
    std::vector<std::byte> copy(*bytes);
    copy[at] ^= std::byte{0x5a};
    try {
      read_torchscript_archive(copy, nullptr, "flipped.ts").graph.verify();
    } catch (const Error&) {
    }
  }
}

TEST(TorchScriptArchiveTest, APt2IsNotATorchScriptArchive) {
  const auto pt2 = read_file_bytes(test_data("valid/index_with_none.pt2"), 1 << 24);
  const auto ts = read_file_bytes(test_data("valid/sigmoid_then_pool.ts"), 1 << 24);
  EXPECT_FALSE(is_torchscript_archive(*pt2));
  EXPECT_TRUE(is_torchscript_archive(*ts));
  EXPECT_TG_ERROR(load_torchscript_archive(test_data("valid/index_with_none.pt2")), ErrorCode::kUnsupported, "no data.pkl");
}

}  // namespace
}  // namespace tracegraph
