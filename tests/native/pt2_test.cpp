// The .pt2 reader (sdk/include/tracegraph/pt2.h) on archives torch.export.save
// wrote (tests/models/make_pt2_models.py, the make_pt2_models fixture): the
// small zoo and cases of our own, each in the IR torch.export gives and in
// core ATen. Each is read with no Python and no LibTorch, names its
// activation, and runs within 1e-4 of the program's own outputs on the
// LibTorch backend and, where it lowers every op, on the XNNPACK backend.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

#include "cli/cli_run.h"
#include "test_models.h"
#include "test_util.h"
#include "zoo_models.h"
#include "tracegraph/activation.h"
#include "tracegraph/error.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/op_table.h"
#include "tracegraph/pt2.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/zip_archive.h"
#ifdef TRACEGRAPH_HAS_XNNPACK
#include "tracegraph/xnnpack/backend.h"
#endif

namespace tracegraph {
namespace {

using testing::max_relative_error;
using testing::read_json;

std::string pt2_path(const std::string& file) { return std::string(TRACEGRAPH_PT2_DIR) + "/" + file; }

// make_pt2_models.py's own cases, and the small zoo less the scripted twins
// of traced models (the same Python module).
std::vector<std::string> models() {
  std::vector<std::string> out = {"dynamic_batch", "flatten_by_size", "mean_of_heads", "index_with_none", "list_outputs", "token_classifier",
                                  "detection_head", "spatial_multiple_of_8"};
  const std::set<std::string> zoo(testing::kZooSmall.begin(), testing::kZooSmall.end());
  for (const std::string& name : testing::kZooSmall) {
    const std::string suffix = "_scripted";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string twin = name.substr(0, name.size() - suffix.size());
      if (zoo.count(twin) || zoo.count(twin + "_traced")) continue;
    }
    out.push_back(name);
  }
  return out;
}

// Every model is exported, or refused by torch.export with its reason.
TEST(Pt2Zoo, EveryModelIsMadeOrRefusedByTorchExport) {
  const nlohmann::json index = read_json(pt2_path("index.json"));
  const auto made = index["models"].get<std::set<std::string>>();
  for (const std::string& name : models()) {
    EXPECT_TRUE(made.count(name) || index["refused"].contains(name)) << name;
  }
  for (auto it = index["refused"].begin(); it != index["refused"].end(); ++it) {
    std::printf("[pt2] torch.export refuses %s: %s\n", it.key().c_str(), it.value().get<std::string>().c_str());
  }
}

struct Form {
  std::string model;
  bool core;  // after run_decompositions()
};
void PrintTo(const Form& f, std::ostream* os) { *os << f.model << (f.core ? ".core.pt2" : ".pt2"); }
std::string form_name(const ::testing::TestParamInfo<Form>& info) { return info.param.model + (info.param.core ? "_core" : "_export"); }
std::vector<Form> forms() {
  std::vector<Form> out;
  for (const std::string& m : models()) {
    out.push_back({m, false});
    out.push_back({m, true});
  }
  return out;
}

class Pt2Model : public ::testing::TestWithParam<Form> {
 protected:
  // Skips, visibly, a model torch.export refuses (a fact about torch).
  bool load() {
    const nlohmann::json index = read_json(pt2_path("index.json"));
    const std::string& name = GetParam().model;
    if (index["refused"].contains(name)) return false;
    facts_ = read_json(pt2_path(name + ".expected.json"));
    io_ = testing::read_model_io(pt2_path(name + ".io.safetensors"));
    read_ = load_pt2(pt2_path(name + (GetParam().core ? ".core.pt2" : ".pt2")));
    return true;
  }
  void expect_parity(TracedGraph& g) {
    g.finalize();
    const std::vector<Tensor> out = g.run(io_.inputs);
    ASSERT_EQ(out.size(), io_.outputs.size());
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_LE(max_relative_error(out[i], io_.outputs[i]), 1e-4) << "output " << i;
  }
  nlohmann::json facts_;
  testing::ModelIo io_;
  ExportedGraph read_;
};

TEST_P(Pt2Model, ReadsNamesItsActivationAndRunsOnLibTorch) {
  if (!load()) GTEST_SKIP() << "torch.export refuses " << GetParam().model;
  EXPECT_EQ(read_.metadata.at("reader"), "pt2");
  ASSERT_EQ(read_.graph.inputs().size(), io_.inputs.size());
  ASSERT_EQ(read_.graph.outputs().size(), io_.outputs.size());
  // The call spec's tree specs: ((inputs...), {}) in, the module's structure out.
  ASSERT_TRUE(read_.in_spec && read_.out_spec);
  EXPECT_EQ(read_.in_spec->num_leaves(), io_.inputs.size());
  // Each op as torch writes it, by its overload; no Python-side op is left.
  for (NodeId id : read_.graph.nodes()) {
    const std::string& op = read_.graph.node(id).op;
    EXPECT_TRUE(op.rfind("aten.", 0) == 0 || op.rfind("aten::", 0) == 0 || op == "prim::ListConstruct") << op;
  }
  const auto activations = output_activation(read_.graph);
  const nlohmann::json want = facts_["activation"];
  testing::expect_activations(activations, want);
  for (std::size_t i = 0; i < activations.size() && i < want.size(); ++i) {
    // Core ATen writes adaptive_avg_pool2d to (1, 1) as a mean, a linear
    // resize as lerps over gathers (named "lerp").
    const auto after = want[i].value("after", std::vector<std::string>{});
    if (GetParam().core) EXPECT_EQ(activations[i].after.size(), after.size()) << activations[i].str();
    else EXPECT_EQ(activations[i].after, after) << activations[i].str();
  }
  for (bool optimized : {false, true}) {
    SCOPED_TRACE(optimized ? "optimized" : "as read");
    TracedGraph g = TracedGraph::from_exported(read_, native::make_libtorch_backend());
    if (optimized) g.optimize();
    expect_parity(g);
  }
}

#ifdef TRACEGRAPH_HAS_XNNPACK
// Where the XNNPACK backend lacks an op (issue 33's portable kernels), the
// skip names every op it cannot run.
TEST_P(Pt2Model, RunsOnXnnpack) {
  if (!load()) GTEST_SKIP() << "torch.export refuses " << GetParam().model;
  TracedGraph g = TracedGraph::from_exported(read_, xnnpack::make_backend());
  g.optimize();
  try {
    g.finalize();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kUnsupported && e.message().find("cannot run") != std::string::npos) GTEST_SKIP() << e.message();
    throw;
  }
  expect_parity(g);
}
#endif

INSTANTIATE_TEST_SUITE_P(Pt2, Pt2Model, ::testing::ValuesIn(forms()), form_name);

// A torch.export.Dim stays a symbol in the graph, and the same graph runs
// at any batch the range allows, on both backends.
TEST(Pt2Reader, ASymbolicBatchIsBoundAtEachRun) {
  const ExportedGraph read = load_pt2(pt2_path("dynamic_batch.pt2"));
  const Value& x = read.graph.value(read.graph.inputs()[0]);
  ASSERT_TRUE(x.shape);
  EXPECT_EQ(shape_str(*x.shape), "[s77, 3, 8, 8]");
  EXPECT_FALSE((*x.shape)[0].is_static());
  at::manual_seed(7);
  for (std::int64_t batch : {1, 5}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const Tensor input = native::from_aten(at::randn({batch, 3, 8, 8}));
    TracedGraph reference = TracedGraph::from_exported(read, native::make_libtorch_backend());
    reference.set_input_shapes({{batch, 3, 8, 8}});
    reference.finalize();
    const Tensor want = reference.run({input})[0];
    EXPECT_EQ(want.shape(), (Shape{batch, 2}));
#ifdef TRACEGRAPH_HAS_XNNPACK
    TracedGraph g = TracedGraph::from_exported(read, xnnpack::make_backend());
    g.set_input_shapes({{batch, 3, 8, 8}});
    g.finalize();
    EXPECT_LE(max_relative_error(g.run({input})[0], want), 1e-4);
#endif
  }
}

// Height and width exported as 8 times a Dim: the symbols are the shapes'
// sizes, and the example input's sizes and each symbol's range are kept for
// a front end to fill its inputs with (the page's Run panel); the graph runs
// at another multiple of 8.
TEST(Pt2Reader, ExampleSizesAndSymbolRangesAreKept) {
  const ExportedGraph read = load_pt2(pt2_path("spatial_multiple_of_8.pt2"));
  const Value& x = read.graph.value(read.graph.inputs()[0]);
  ASSERT_TRUE(x.shape);
  const std::string h = (*x.shape)[2].symbol, w = (*x.shape)[3].symbol;
  ASSERT_EQ(h.rfind("8*s", 0), 0u) << shape_str(*x.shape);
  ASSERT_EQ(w.rfind("8*s", 0), 0u) << shape_str(*x.shape);
  EXPECT_EQ(nlohmann::json::parse(read.metadata.at("example_input_shapes")), nlohmann::json::parse("[[1, 1, 16, 24]]"));
  // The inputs' symbolic sizes only (torch's range_constraints also bound the Dims under them).
  const auto ranges = nlohmann::json::parse(read.metadata.at("symbol_ranges"));
  EXPECT_EQ(ranges, nlohmann::json::parse("{\"" + h + "\": [8, 256], \"" + w + "\": [8, 256]}")) << ranges.dump();
  // A program without symbols has neither.
  EXPECT_FALSE(load_pt2(pt2_path("mean_of_heads.pt2")).metadata.count("example_input_shapes"));
  TracedGraph g = TracedGraph::from_exported(read, native::make_libtorch_backend());
  g.set_input_shapes({{1, 1, 40, 8}});
  g.finalize();
  EXPECT_EQ(g.run({native::from_aten(at::randn({1, 1, 40, 8}))})[0].shape(), (Shape{1, 1, 40, 8}));
}

// Sizes the graph computes (x.view(x.size(0), -1)) are values, and lists
// of them a prim::ListConstruct.
TEST(Pt2Reader, SizesComputedInTheGraphAreValues) {
  const ExportedGraph read = load_pt2(pt2_path("flatten_by_size.pt2"));
  std::multiset<std::string> ops;
  for (NodeId id : read.graph.nodes()) ops.insert(read.graph.node(id).op);
  EXPECT_GE(ops.count("aten.sym_size.int"), 1u);
  EXPECT_GE(ops.count("prim::ListConstruct"), 1u);
}

// torch.export keeps x * 2.0 as aten.mul.Tensor with a number for `other`
// (x[:, idx]'s None in aten.index.Tensor's indices: tests/sdk/formats/pt2_test.cpp).
TEST(Pt2Reader, NumbersAreArgumentsAsTheSchemaNamesThem) {
  const ExportedGraph read = load_pt2(pt2_path("dynamic_batch.pt2"));
  bool saw_mul = false;
  for (NodeId id : read.graph.nodes()) {
    const Node& n = read.graph.node(id);
    if (n.op != "aten.mul.Tensor") continue;
    saw_mul = true;
    EXPECT_EQ(n.inputs.size(), 1u);
    EXPECT_EQ(n.attributes.get_float("other"), 2.0);
  }
  EXPECT_TRUE(saw_mul);
}

// The mean of two linear heads applies no activation.
TEST(Pt2Reader, TheMeanOfTwoLinearHeadsIsNone) {
  for (const char* file : {"mean_of_heads.pt2", "mean_of_heads.core.pt2"}) {
    const auto a = output_activation(load_pt2(pt2_path(file)).graph);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].str(), "none") << file;
  }
}

// torch's own checks while tracing (aten._assert_tensor_metadata, ...)
// produce nothing: dropped and counted, never an error.
TEST(Pt2Reader, ChecksThatProduceNothingAreDroppedAndCounted) {
  const ExportedGraph read = load_pt2(pt2_path("dynamic_batch.core.pt2"));
  for (NodeId id : read.graph.nodes()) EXPECT_EQ(read.graph.node(id).op.find("_assert"), std::string::npos);
  EXPECT_NO_THROW(read.graph.verify());
}

// The same archive re-zipped deflated (Python's zipfile) reads the same graph.
TEST(Pt2Reader, ADeflatedArchiveReadsTheSameGraph) {
  const auto bytes = read_file_bytes(pt2_path("dynamic_batch.deflated.pt2"), 1u << 30);
  const ZipArchive zip = ZipArchive::open(*bytes, bytes, "deflated.pt2");
  std::size_t deflated = 0;
  for (const ZipEntry& e : zip.entries()) deflated += e.method == 8;
  EXPECT_GT(deflated, 5u);
  EXPECT_EQ(load_pt2(pt2_path("dynamic_batch.deflated.pt2")).graph.dump(), load_pt2(pt2_path("dynamic_batch.pt2")).graph.dump());
}

// Archives broken on purpose by make_pt2_models.py: each a typed error that
// names the archive and the entry.
TEST(Pt2Reader, BrokenArchivesAreTypedErrorsNamingTheEntry) {
  EXPECT_TG_ERROR(load_pt2(pt2_path("bad_major.pt2")), ErrorCode::kUnsupportedVersion, "models/model.json at /schema_version: graph schema 99.0");
  EXPECT_TG_ERROR(load_pt2(pt2_path("flat_layout.pt2")), ErrorCode::kUnsupportedVersion, "serialized_exported_program.json");
  EXPECT_TG_ERROR(load_pt2(pt2_path("missing_weight.pt2")), ErrorCode::kNotFound, "no entry 'bad/data/weights/nowhere'");
  EXPECT_TG_ERROR(load_pt2(pt2_path("weight_past_storage.pt2")), ErrorCode::kOutOfRange, "(entry 'bad/data/weights/weight_0') needs 5400 bytes of its storage, which holds 540");
  EXPECT_TG_ERROR(load_pt2(pt2_path("higher_order.pt2")), ErrorCode::kUnsupported, "torch.ops.higher_order.cond");
  EXPECT_TG_ERROR(load_pt2(pt2_path("truncated.pt2")), ErrorCode::kTruncated, "truncated.pt2: the zip archive ends early");
  EXPECT_TG_ERROR(load_pt2(testing::model_path("unet2d.ts")), ErrorCode::kUnsupported, "TorchScript or torch.save archive");
  EXPECT_FALSE(is_pt2_file(testing::model_path("unet2d.ts")));
  EXPECT_TRUE(is_pt2_file(pt2_path("dynamic_batch.pt2")));
}

// Every command of the CLI reads a .pt2 directly.
TEST(Pt2Cli, EveryCommandReadsAPt2) {
  using testing::run_cli;
  const std::string model = pt2_path("dynamic_batch.pt2");
  auto inspect = run_cli("inspect " + model);
  ASSERT_EQ(inspect.status, 0) << inspect.out;
  EXPECT_NE(inspect.out.find("%x: float32[s77, 3, 8, 8]"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("->  sigmoid"), std::string::npos) << inspect.out;
  auto check = run_cli("check " + model + " --input-shape 3,3,8,8");
  ASSERT_EQ(check.status, 0) << check.out;
  EXPECT_NE(check.out.find("against the LibTorch backend as read"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("every backend runs the model within the tolerance"), std::string::npos) << check.out;
  const std::string out = ::testing::TempDir() + "/pt2_cli";
  auto exported = run_cli("export " + pt2_path("mean_of_heads.core.pt2") + " -o " + out);
  ASSERT_EQ(exported.status, 0) << exported.out;
  auto reread = run_cli("inspect " + out + "/mean_of_heads.core.json");
  ASSERT_EQ(reread.status, 0) << reread.out;
  EXPECT_NE(reread.out.find("->  none"), std::string::npos) << reread.out;
  for (const char* backend : {"libtorch", "xnnpack"}) {
    auto ran = run_cli("run " + model + " --random 4,3,8,8 --backend " + backend);
    ASSERT_EQ(ran.status, 0) << backend << "\n" << ran.out;
    EXPECT_NE(ran.out.find("float32[4, 2]"), std::string::npos) << ran.out;
  }
  auto bench = run_cli("bench " + model + " --input-shape 2,3,8,8 --runs 2 --warmup 1");
  ASSERT_EQ(bench.status, 0) << bench.out;
  EXPECT_NE(bench.out.find("ratios, tracegraph optimized on libtorch / variant"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("vs tracegraph on libtorch"), std::string::npos) << bench.out;
}

// A model that takes token ids and a mask (int64): the CLI makes its random
// inputs of those dtypes (whole numbers 0 to 9), in check, run and bench.
TEST(Pt2Cli, RandomInputsTakeEachInputsDtype) {
  using testing::run_cli;
  const std::string model = pt2_path("token_classifier.pt2");
  auto check = run_cli("check " + model + " --input-shape 2,12 --input-shape 2,12");
  ASSERT_EQ(check.status, 0) << check.out;
  EXPECT_NE(check.out.find("every backend runs the model within the tolerance"), std::string::npos) << check.out;
  for (const char* backend : {"libtorch", "xnnpack"}) {
    auto ran = run_cli("run " + model + " --random 2,12 --random 2,12 --backend " + backend);
    ASSERT_EQ(ran.status, 0) << backend << "\n" << ran.out;
    EXPECT_NE(ran.out.find("%ids: int64[2, 12]"), std::string::npos) << ran.out;
    EXPECT_NE(ran.out.find("float32[2, 3]"), std::string::npos) << ran.out;
  }
  auto bench = run_cli("bench " + model + " --input-shape 2,12 --input-shape 2,12 --runs 2 --warmup 1");
  ASSERT_EQ(bench.status, 0) << bench.out;
}

}  // namespace
}  // namespace tracegraph
