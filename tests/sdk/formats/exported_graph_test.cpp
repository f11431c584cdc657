#include "tracegraph/exported_graph.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

#include "test_util.h"
#include "tracegraph/file_io.h"

namespace tracegraph {
namespace {

std::string temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tracegraph_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A graph using every attribute kind, symbolic dims, several dtypes and tree specs.
ExportedGraph sample() {
  ExportedGraph eg;
  Graph& g = eg.graph;
  g.set_name("sample");
  ValueId x = g.add_input("x", DType::kFloat32, SymbolicShape{Dim::sym("N"), Dim::of(3), Dim::of(8), Dim::of(8)});
  ValueId m = g.add_input("mask", DType::kBool, SymbolicShape{Dim::of(8)});
  ValueId w = g.add_constant("conv.weight", Tensor::from_vector<float>(std::vector<float>(4 * 3 * 9, 0.5f), {4, 3, 3, 3}));
  ValueId idx = g.add_constant("idx", Tensor::from_vector<std::int64_t>({0, 2}, {2}));
  Attributes conv_attrs;
  conv_attrs.set("stride", std::vector<std::int64_t>{1, 1});
  conv_attrs.set("groups", std::int64_t{1});
  conv_attrs.set("eps", 1e-5);
  conv_attrs.set("neg_inf", -INFINITY);
  conv_attrs.set("transposed", false);
  conv_attrs.set("mode", std::string("zeros"));
  conv_attrs.set("scales", std::vector<double>{0.1, NAN});
  conv_attrs.set("flags", std::vector<bool>{true, false});
  conv_attrs.set("names", std::vector<std::string>{"a", "b"});
  conv_attrs.set("lut", Tensor::from_vector<std::uint8_t>({1, 2, 3}, {3}));
  NodeId conv = g.add_node("conv2d", {x, w}, {NewValue("y", DType::kFloat32, SymbolicShape{Dim::sym("N"), Dim::of(4), Dim::of(6), Dim::of(6)})},
                           conv_attrs, "conv");
  NodeId sel = g.add_node("index_select", {g.node(conv).outputs[0], idx}, {"picked"}, {}, "select");
  NodeId both = g.add_node("split", {g.node(sel).outputs[0], m}, {"left", "right"}, {}, "split");
  g.set_outputs({g.node(both).outputs[1], g.node(both).outputs[0], g.node(conv).outputs[0]});
  eg.in_spec = TreeSpec::tuple({TreeSpec::tuple({TreeSpec::leaf()}), TreeSpec::dict({{"mask", TreeSpec::leaf()}})});
  eg.out_spec = TreeSpec::dict({{"pair", TreeSpec::list({TreeSpec::leaf(), TreeSpec::leaf()})}, {"features", TreeSpec::leaf()}});
  eg.metadata = {{"source", "unit test"}};
  return eg;
}

TEST(ExportedGraphTest, SaveThenLoadGivesAnEqualGraph) {
  const std::string dir = temp_dir("roundtrip");
  ExportedGraph eg = sample();
  save_graph(eg, dir + "/model.json");
  EXPECT_TRUE(std::filesystem::exists(dir + "/model.safetensors"));
  ExportedGraph back = load_graph(dir + "/model.json");
  EXPECT_EQ(back.graph.dump(), eg.graph.dump());
  EXPECT_EQ(back.in_spec, eg.in_spec);
  EXPECT_EQ(back.out_spec, eg.out_spec);
  EXPECT_EQ(back.metadata, eg.metadata);
  const Node& conv = back.graph.node(*back.graph.find_node("conv"));
  const Node& orig = eg.graph.node(*eg.graph.find_node("conv"));
  EXPECT_TRUE(conv.attributes == orig.attributes);
  const Value& w = back.graph.value(*back.graph.find_value("conv.weight"));
  EXPECT_TRUE(w.data.equal(eg.graph.value(*eg.graph.find_value("conv.weight")).data));
}

TEST(ExportedGraphTest, ReExportIsByteIdentical) {
  const std::string dir = temp_dir("reexport");
  save_graph(sample(), dir + "/a.json");
  ExportedGraph once = load_graph(dir + "/a.json");
  save_graph(once, dir + "/b.json");
  EXPECT_EQ(read_text_file(dir + "/b.safetensors", 1 << 20), read_text_file(dir + "/a.safetensors", 1 << 20));
  std::string a = read_text_file(dir + "/a.json", 1 << 20);
  std::string b = read_text_file(dir + "/b.json", 1 << 20);
  // The documents differ only in the weights file they name.
  a.replace(a.find("\"a.safetensors\""), 15, "\"b.safetensors\"");
  EXPECT_EQ(a, b);
}

TEST(ExportedGraphTest, InMemoryDeserializeMatchesFiles) {
  SerializedGraph s = serialize_graph(sample(), "w.safetensors");
  ExportedGraph back = deserialize_graph(s.json, s.weights, nullptr, "mem.json", "w.safetensors");
  EXPECT_EQ(back.graph.dump(), sample().graph.dump());
  EXPECT_EQ(serialize_graph(back, "w.safetensors").json, s.json);
}

TEST(ExportedGraphTest, OutOfOrderNodesAreSortedAndKept) {
  // A file may list nodes in any order that has no cycle: move conv (first) to the end.
  SerializedGraph s = serialize_graph(sample(), "w.safetensors");
  auto doc = nlohmann::ordered_json::parse(s.json);
  auto& nodes = doc["graph"]["nodes"];
  auto conv = nodes[0];
  nodes.erase(nodes.begin());
  nodes.push_back(conv);
  ExportedGraph back = deserialize_graph(doc.dump(), s.weights, nullptr, "mem.json", "w.safetensors");
  EXPECT_EQ(back.graph.node(back.graph.nodes()[0]).name, "conv");
  EXPECT_EQ(back.graph.dump(), sample().graph.dump());
}

// sample() with conv in encoder.conv (Conv2d, called by encoder) and select
// in encoder (Encoder); split is the root's.
ExportedGraph sample_with_modules() {
  ExportedGraph eg = sample();
  Graph& g = eg.graph;
  const ModuleId conv = g.add_module_path({{"encoder", "Encoder"}, {"encoder.conv", "Conv2d"}});
  g.set_node_module(*g.find_node("conv"), conv);
  g.set_node_module(*g.find_node("select"), g.module(conv).parent);
  return eg;
}

TEST(ExportedGraphTest, ModulesRoundTrip) {
  const ExportedGraph eg = sample_with_modules();
  const SerializedGraph s = serialize_graph(eg, "w.safetensors");
  const auto doc = nlohmann::ordered_json::parse(s.json);
  // The table, parents first; each node names its innermost module.
  EXPECT_EQ(doc["graph"]["modules"].dump(),
            R"([{"path":"encoder","type":"Encoder","parent":null},{"path":"encoder.conv","type":"Conv2d","parent":0}])");
  EXPECT_EQ(doc["graph"]["nodes"][0]["module"], 1);
  EXPECT_EQ(doc["graph"]["nodes"][1]["module"], 0);
  EXPECT_FALSE(doc["graph"]["nodes"][2].contains("module"));
  ExportedGraph back = deserialize_graph(s.json, s.weights, nullptr, "mem.json", "w.safetensors");
  EXPECT_EQ(back.graph.module_path(*back.graph.find_node("conv")),
            (std::vector<ModuleFrame>{{"encoder", "Encoder"}, {"encoder.conv", "Conv2d"}}));
  EXPECT_EQ(back.graph.module_path(*back.graph.find_node("select")), (std::vector<ModuleFrame>{{"encoder", "Encoder"}}));
  EXPECT_TRUE(back.graph.module_path(*back.graph.find_node("split")).empty());
  EXPECT_EQ(back.graph.dump(), eg.graph.dump());
  EXPECT_NE(eg.graph.dump().find("# conv in encoder.conv (Conv2d)"), std::string::npos) << eg.graph.dump();
  EXPECT_EQ(serialize_graph(back, "w.safetensors").json, s.json);
}

TEST(ExportedGraphTest, DocumentsWithoutModulesStillRead) {
  // What a writer without modules wrote: no "modules", no node "module".
  const SerializedGraph plain = serialize_graph(sample(), "w.safetensors");
  EXPECT_EQ(plain.json.find("\"module"), std::string::npos);
  ExportedGraph back = deserialize_graph(plain.json, plain.weights, nullptr, "mem.json", "w.safetensors");
  EXPECT_EQ(back.graph.num_modules(), 0u);
  EXPECT_EQ(back.graph.dump(), sample().graph.dump());
}

TEST(ExportedGraphTest, ModuleIdsOutsideTheTableAreRefused) {
  const SerializedGraph s = serialize_graph(sample_with_modules(), "w.safetensors");
  auto doc = nlohmann::ordered_json::parse(s.json);
  doc["graph"]["nodes"][0]["module"] = 7;
  EXPECT_TG_ERROR(deserialize_graph(doc.dump(), s.weights, nullptr, "mem.json", "w.safetensors"), ErrorCode::kDanglingId,
                  "mem.json at /graph/nodes/0/module: module 7 is not defined in /graph/modules");
  doc = nlohmann::ordered_json::parse(s.json);
  doc["graph"]["modules"][0]["parent"] = 1;  // a parent after it: a cycle could follow
  EXPECT_TG_ERROR(deserialize_graph(doc.dump(), s.weights, nullptr, "mem.json", "w.safetensors"), ErrorCode::kDanglingId,
                  "/graph/modules/0/parent: parent 1 is not an earlier module");
}

TEST(ExportedGraphTest, ModulesNestedPastTheLimitAreRefused) {
  ExportedGraph eg = sample();
  std::vector<ModuleFrame> chain;
  for (int i = 0; i < 10; ++i) chain.push_back({"m" + std::to_string(i), "M"});
  eg.graph.set_node_module(*eg.graph.find_node("conv"), eg.graph.add_module_path(chain));
  const SerializedGraph s = serialize_graph(eg, "w.safetensors");
  LoadLimits tight;
  tight.max_json_depth = 8;
  EXPECT_TG_ERROR(deserialize_graph(s.json, s.weights, nullptr, "mem.json", "w.safetensors", tight), ErrorCode::kLimitExceeded,
                  "/graph/modules/8/parent: modules nest deeper than max_json_depth (8)");
  EXPECT_EQ(deserialize_graph(s.json, s.weights, nullptr, "mem.json", "w.safetensors").graph.module_path(NodeId(0)).size(), 10u);
}

TEST(ExportedGraphTest, WeightKeyCollisionsAreRefused) {
  ExportedGraph eg;
  ValueId c = eg.graph.add_constant("@n.t", Tensor::zeros(DType::kFloat32, {1}));
  Attributes a;
  a.set("t", Tensor::zeros(DType::kFloat32, {1}));
  NodeId n = eg.graph.add_node("op", {c}, {"o"}, a, "n");
  eg.graph.set_outputs({eg.graph.node(n).outputs[0]});
  EXPECT_TG_ERROR(serialize_graph(eg, "w.safetensors"), ErrorCode::kDuplicateName, "'@n.t'");
}

TEST(ExportedGraphTest, SavingAnInvalidGraphFailsAndWritesNothing) {
  const std::string dir = temp_dir("invalid");
  ExportedGraph eg;
  ValueId x = eg.graph.add_input("x");
  eg.graph.set_outputs({x});
  eg.in_spec = TreeSpec::tuple({});
  save_graph(eg, dir + "/ok.json");  // a spec mismatch is found on load
  EXPECT_TG_ERROR(load_graph(dir + "/ok.json"), ErrorCode::kTreeSpecMismatch, "in_spec has 0 leaves for 1 graph inputs");
  EXPECT_TG_ERROR(save_graph(eg, dir + "/missing_dir/x.json"), ErrorCode::kIo, "cannot open for writing");
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing_dir"));
}

}  // namespace
}  // namespace tracegraph
