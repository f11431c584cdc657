// The tracegraph command-line tool, run as a user runs it.
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/cli_run.h"
#include "test_util.h"

namespace {

using tracegraph::testing::CliRun;
using tracegraph::testing::run_cli;

std::string model_path(const std::string& file) { return std::string(TRACEGRAPH_MODELS_DIR) + "/" + file; }

TEST(CliTest, InspectPrintsNodesValuesParametersAndActivation) {
  CliRun r = run_cli("inspect " + model_path("unet3d_sigmoid_traced.ts") + " --input-shape 1,1,44,44,44");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("parameters  4,725"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float32[1, 1, 28, 28, 28]  ->  sigmoid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("aten::_convolution"), std::string::npos);
  EXPECT_NE(r.out.find("nodes (in execution order)"), std::string::npos);
  // The traced valid 3D UNet crops its skip by sizes computed at run time:
  // a = n - 4, pooled to a // 2, b = a // 2 - 4, up to 2b, and 2b - 4 >= 1 out
  // (n >= 18); the output's first voxel at 2 (two 3x3x3 convolutions) + 1/2
  // (the pooling) + 4 (two at stride 2) - 1/2 (the transposed one) + 2 = 8.
  EXPECT_NE(r.out.find("%137 from %input.3, dim 2: sizes n >= 18, offset 8, stride 1"), std::string::npos) << r.out;
}

TEST(CliTest, InspectJsonIsTheModuleGraphView) {
  CliRun r = run_cli("inspect " + model_path("unet3d_hardtanh.ts") + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"].back()["op"], "aten::hardtanh");
  EXPECT_EQ(j["nodes"].back()["min"], -0.5);
  EXPECT_EQ(j["output"], j["nodes"].back()["outputs"][0]);
  EXPECT_EQ(j["activation"][0]["kind"], "clip");
  // Without input shapes nothing says which input is spatial: no geometry.
  EXPECT_TRUE(j["geometry"].empty()) << r.out;
  CliRun shaped = run_cli("inspect " + model_path("unet3d_hardtanh.ts") + " --input-shape 1,1,44,44,44 --json");
  ASSERT_EQ(shaped.status, 0) << shaped.out;
  auto g = nlohmann::json::parse(shaped.out)["geometry"];
  ASSERT_EQ(g.size(), 1u) << shaped.out;
  EXPECT_EQ(g[0]["axes"].size(), 3u);
}

TEST(CliTest, CheckRunsEveryBackendAgainstTheModulesForward) {
  CliRun r = run_cli("check " + model_path("unet2d.ts") + " --input-shape 1,3,64,64");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("aten::_convolution"), std::string::npos) << r.out;  // the op table, with counts
  for (const char* run : {"libtorch  as read", "libtorch  optimized", "xnnpack   as read", "xnnpack   optimized"}) {
    EXPECT_NE(r.out.find(run), std::string::npos) << run << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("every backend runs the model within the tolerance"), std::string::npos) << r.out;
  // A tolerance no float computation meets: every run fails, and so does the command.
  CliRun strict = run_cli("check " + model_path("unet2d.ts") + " --input-shape 1,3,64,64 --tolerance 0");
  EXPECT_EQ(strict.status, 1) << strict.out;
  EXPECT_NE(strict.out.find("FAIL"), std::string::npos) << strict.out;
  // Without input shapes it cannot run the model and says so.
  CliRun bare = run_cli("check " + model_path("unet2d.ts"));
  EXPECT_EQ(bare.status, 1) << bare.out;
  EXPECT_NE(bare.out.find("--input-shape"), std::string::npos) << bare.out;
}

// The XNNPACK backend's kernels run with the CPU's instructions or fewer
// (TRACEGRAPH_MAX_CPU_ISA), and `check` says which; a name of no level is a
// clear error, not a guess.
TEST(CliTest, CheckNamesTheKernelsInstructionSetUnderItsCap) {
  CliRun sse2 = run_cli("check " + model_path("unet2d.ts") + " --input-shape 1,3,64,64", "TRACEGRAPH_MAX_CPU_ISA=sse2");
  ASSERT_EQ(sse2.status, 0) << sse2.out;
  EXPECT_NE(sse2.out.find("kernels     sse2 (xnnpack)"), std::string::npos) << sse2.out;
  EXPECT_NE(sse2.out.find("every backend runs the model within the tolerance"), std::string::npos) << sse2.out;
  CliRun bad = run_cli("check " + model_path("unet2d.ts") + " --input-shape 1,3,64,64", "TRACEGRAPH_MAX_CPU_ISA=avx3");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("tracegraph: error: invalid_argument: TRACEGRAPH_MAX_CPU_ISA='avx3' names no instruction set"), std::string::npos)
      << bad.out;
}

TEST(CliTest, OpsListsEachOpWithItsBackends) {
  CliRun r = run_cli("ops");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("aten::upsample_bilinear2d"), std::string::npos) << r.out;
  CliRun md = run_cli("ops --markdown");
  ASSERT_EQ(md.status, 0) << md.out;
  EXPECT_NE(md.out.find("| `aten::_convolution` | `conv` | yes | xnnpack, ours, portable |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| `aten::cumsum` |  | yes | portable |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| `aten::view` | `view` | yes | view |"), std::string::npos) << md.out;
}

TEST(CliTest, ExportWritesAGraphThatInspectReads) {
  const auto dir = std::filesystem::temp_directory_path() / "tracegraph_cli_export";
  std::filesystem::remove_all(dir);
  CliRun r = run_cli("export " + model_path("unet3d_two_heads.ts") + " -o " + dir.string() + " --input-shape 1,1,44,44,44");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "unet3d_two_heads.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "unet3d_two_heads.safetensors"));
  CliRun again = run_cli("inspect " + (dir / "unet3d_two_heads.json").string());
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("per_channel([0, 1): sigmoid, [1, 3): none)"), std::string::npos) << again.out;
}

// `--backend` takes the backends this build registered, and says which they are.
TEST(CliTest, RunNamesTheBackendsThereAre) {
  CliRun help = run_cli("--help");
  ASSERT_EQ(help.status, 0) << help.out;
  EXPECT_NE(help.out.find("[--backend libtorch|xnnpack]"), std::string::npos) << help.out;
  CliRun bad = run_cli("run " + model_path("unet2d.ts") + " --random 1,3,32,32 --backend tpu");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("--backend 'tpu': expected libtorch or xnnpack"), std::string::npos) << bad.out;
  for (const char* backend : {"libtorch", "xnnpack"}) {
    CliRun r = run_cli("run " + model_path("unet2d.ts") + " --random 1,3,32,32 --backend " + backend);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(std::string("backend     ") + backend + " on cpu"), std::string::npos) << r.out;
  }
}

TEST(CliTest, ErrorsAreOneLineAndNonZero) {
  CliRun bad = run_cli("inspect " + model_path("bad_truncated.ts"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out.find('\n'), bad.out.size() - 1) << bad.out;
  EXPECT_NE(bad.out.find("tracegraph: error: truncated:"), std::string::npos) << bad.out;
  CliRun usage = run_cli("inspect");
  EXPECT_EQ(usage.status, 2);
  EXPECT_NE(usage.out.find("missing MODEL"), std::string::npos);
  CliRun shape = run_cli("inspect x.ts --input-shape 1,a");
  EXPECT_EQ(shape.status, 2);
  EXPECT_NE(shape.out.find("--input-shape '1,a'"), std::string::npos);
}

}  // namespace

namespace {

TEST(CliBenchTest, PrintsEveryVariantAndTheRatios) {
  CliRun r = run_cli("bench " + model_path("unet2d.ts") + " --input-shape 1,3,64,64 --runs 2 --warmup 0");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* row : {"torchscript ", "torchscript frozen", "torchscript optimize_for_inference", "tracegraph on libtorch",
                          "vs torchscript frozen"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("failed"), std::string::npos) << r.out;
  // The XNNPACK backend's rows, ratio and profile come from its registry entry.
  for (const char* row : {"tracegraph optimized on xnnpack", "  ... direct convolutions only", "xnnpack kernels: ",
                          "xnnpack, fastest / direct convolutions", "xnnpack profile (optimized"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  }
  CliRun no_shape = run_cli("bench " + model_path("unet2d.ts"));
  EXPECT_EQ(no_shape.status, 2);
}

}  // namespace

namespace {

TEST(CliOptimizeTest, PrintsTheReportAndExportsTheOptimizedGraph) {
  const auto dir = std::filesystem::temp_directory_path() / "tracegraph_cli_optimize";
  std::filesystem::remove_all(dir);
  CliRun r = run_cli("optimize " + model_path("unet3d_sigmoid_traced.ts") + " --input-shape 1,1,44,44,44 -o " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 sweeps, converged; nodes 49 -> 13"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("activation_fusion"), std::string::npos);
  CliRun again = run_cli("inspect " + (dir / "unet3d_sigmoid_traced.json").string());
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("nodes       13"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("->  sigmoid"), std::string::npos) << again.out;  // read through the fused head

  CliRun json = run_cli("optimize " + model_path("unet2d.ts") + " --input-shape 1,3,64,64 --json --disable activation_fusion");
  ASSERT_EQ(json.status, 0) << json.out;
  auto report = nlohmann::json::parse(json.out);
  EXPECT_TRUE(report["converged"].get<bool>());
  for (const auto& t : report["transforms"]) EXPECT_NE(t["name"], "activation_fusion");
  CliRun unknown = run_cli("optimize " + model_path("unet2d.ts") + " --disable frobnicate");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.out.find("no transform named 'frobnicate'"), std::string::npos) << unknown.out;
}

}  // namespace
