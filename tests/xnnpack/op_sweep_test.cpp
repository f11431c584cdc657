// The op sweep: one-op programs from PyTorch's own sample inputs (OpInfo's
// sample_inputs, tests/models/make_op_sweep.py, the make_op_sweep fixture),
// read by the core's .pt2 reader and run on the LibTorch backend and on the
// XNNPACK backend, each against torch's own outputs (rtol 1e-4, NaNs where
// torch has them). A sample XNNPACK runs must match; one it refuses at
// finalize() is listed by op with the reason. The table, per op (how many
// samples run, on which engine), is docs/op_sweep.md: this test writes it
// afresh (build/native/op_sweep.md) and fails when the committed one differs
// (scripts/make_ops_doc.sh copies it). It also writes which samples ran
// (op_sweep/results.json): tests/js/op_sweep.test.mjs runs the same in wasm.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "native/test_models.h"
#include "native/zoo_models.h"
#include "tracegraph/error.h"
#include "tracegraph/op_table.h"
#include "tracegraph/native/aten_interop.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/pt2.h"
#include "tracegraph/traced_graph.h"
#include "tracegraph/xnnpack/backend.h"

namespace tracegraph {
namespace {

std::string sweep_path(const std::string& file) { return std::string(TRACEGRAPH_OP_SWEEP_DIR) + "/" + file; }

// Torch's outputs against ours: the same shape, NaN where torch has NaN, the
// same infinities, the rest within rtol 1e-4 (atol 1e-5); an integer or bool
// output of torch's exactly.
std::string mismatch(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size()) return std::to_string(got.size()) + " outputs for " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    // A complex output as its (real, imaginary) pairs.
    auto pairs = [](const at::Tensor& t) { return (t.is_complex() ? at::view_as_real(t) : t).to(at::kDouble); };
    const at::Tensor g = pairs(native::to_aten(got[i])), w = pairs(native::to_aten(want[i]));
    if (is_complex(got[i].dtype()) != is_complex(want[i].dtype()))
      return "output " + std::to_string(i) + ": " + std::string(dtype_name(got[i].dtype())) + " for " + std::string(dtype_name(want[i].dtype()));
    if (g.sizes() != w.sizes()) return "output " + std::to_string(i) + ": shape " + shape_str(got[i].shape()) + " for " + shape_str(want[i].shape());
    const bool exact = !is_floating(want[i].dtype()) && !is_complex(want[i].dtype());
    if (exact ? !g.equal(w) : !at::allclose(g, w, 1e-4, 1e-5, /*equal_nan=*/true)) {
      const at::Tensor d = (g - w).abs().nan_to_num(0, 0, 0);
      return "output " + std::to_string(i) + ": off by up to " + std::to_string(d.numel() ? d.max().item<double>() : 0.0);
    }
  }
  return "";
}

struct Outcome {
  std::string status;  // "ok", "refused: CODE: message", "wrong: ..."
  std::set<std::string> engines;
  std::vector<std::pair<std::string, xnnpack::Engine>> ran;  // each node's op (its base name) and engine
};

Outcome run_on(const ExportedGraph& read, std::unique_ptr<Backend> backend, const testing::ModelIo& io, bool xnnpack) {
  Outcome o;
  try {
    TracedGraph g = TracedGraph::from_exported(read, std::move(backend));
    g.finalize();
    const std::string wrong = mismatch(g.run(io.inputs), io.outputs);
    if (!wrong.empty()) return {"wrong: " + wrong, {}, {}};
    if (xnnpack) {
      for (const xnnpack::NodeTime& t : dynamic_cast<const xnnpack::XnnpackBackend*>(g.backend())->profile()) {
        if (t.engine != xnnpack::Engine::kNone) o.engines.insert(std::string(xnnpack::engine_name(t.engine)));
        o.ran.emplace_back(std::string(op_base(t.op)), t.engine);
      }
    }
    o.status = "ok";
  } catch (const Error& e) {
    const std::string message = e.message();
    o.status = "refused: " + std::string(error_code_name(e.code())) + ": " + message.substr(0, 160);
  }
  return o;
}

TEST(OpSweep, PyTorchsSamplesMatchOrAreRefusedByName) {
  const nlohmann::json index = testing::read_json(sweep_path("index.json"));
  struct Row {
    int samples = 0, libtorch = 0, xnnpack = 0;              // float32 samples
    int int_samples = 0, int_libtorch = 0, int_xnnpack = 0;  // int64 samples
    std::set<std::string> engines, refusals;
  };
  std::map<std::string, Row> rows;
  nlohmann::json results = nlohmann::json::object();  // per sample: ran on XNNPACK (the wasm sweep expects the same)
  for (const auto& s : index["samples"]) {
    const std::string file = s["file"], op = s["op"];
    const bool integer = s.value("dtype", "float32") != "float32";
    SCOPED_TRACE(file);
    Row& row = rows[op];
    ++(integer ? row.int_samples : row.samples);
    const ExportedGraph read = load_pt2(sweep_path(file + ".pt2"));
    const testing::ModelIo io = testing::read_model_io(sweep_path(file + ".io.safetensors"));
    const Outcome lt = run_on(read, native::make_libtorch_backend(), io, false);
    if (lt.status == "ok") ++(integer ? row.int_libtorch : row.libtorch);
    xnnpack::Options options;
    options.profile = true;
    // Under kFastest a convolution's engine (ours or XNNPACK's) is chosen by
    // timing, which differs between CPUs (AVX-512 or AVX2) and under ASan; the
    // table is checked fresh, so the sweep takes the direct convolutions (our
    // kernels have suites of their own: winograd, depthwise, pointwise, unfolded).
    options.conv_algorithm = xnnpack::ConvAlgorithm::kDirect;
    const Outcome xn = run_on(read, xnnpack::make_backend(options), io, true);
    // A wrong answer is never allowed; a refusal (a typed error at finalize
    // or at the run, naming the node) is listed with its reason.
    EXPECT_NE(xn.status.rfind("wrong", 0), 0u) << file << " on XNNPACK: " << xn.status;
    results[file] = xn.status == "ok";
    // Each node ran on an engine its lowering declares (docs/ops.md shows them).
    for (const auto& [base, engine] : xn.ran) {
      const auto declared = xnnpack::op_engines(base);
      ASSERT_TRUE(declared) << file << ": " << base << " ran without a lowering";
      if (engine == xnnpack::Engine::kNone) continue;  // a node all of whose work was a layout change
      EXPECT_NE(std::find(declared->begin(), declared->end(), engine), declared->end())
          << file << ": " << base << " ran on " << xnnpack::engine_name(engine) << ", which its lowering does not declare (lower/table.cpp)";
    }
    if (xn.status == "ok") {
      ++(integer ? row.int_xnnpack : row.xnnpack);
      row.engines.insert(xn.engines.begin(), xn.engines.end());
    } else {
      row.refusals.insert(xn.status);
    }
  }
  std::ostringstream md;
  md << "# The op sweep\n\n"
     << "Generated by `tests/xnnpack/op_sweep_test.cpp` (the `OpSweep` test), checked fresh by ctest: PyTorch's own sample\n"
     << "inputs (OpInfo, torch " << index["torch"].get<std::string>() << ", up to 3 float32 samples per op, and up to 2 int64 ones\n"
     << "where the op takes int64), each a one-op program\n"
     << "made by `torch.export` (`tests/models/make_op_sweep.py`), read by the core's `.pt2` reader and run on both\n"
     << "backends against torch's own outputs (rtol 1e-4; an integer or bool output exactly). `engines`: what ran it on XNNPACK (`xnnpack`: XNNPACK's\n"
     << "operators; `portable`: a kernel of ours in plain C++; `winograd`: our convolution kernels). A sample the\n"
     << "XNNPACK backend runs must match; one it refuses is listed with the reason. Samples torch.export refuses\n"
     << "are left out (" << index["refused"].size() << ").\n\n"
     << "| op | float32 samples | LibTorch | XNNPACK | int64 samples | LibTorch | XNNPACK | engines | refused because |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  int all = 0, on_xnnpack = 0, all_int = 0, int_on_xnnpack = 0;
  for (const auto& [op, row] : rows) {
    all += row.samples;
    on_xnnpack += row.xnnpack;
    all_int += row.int_samples;
    int_on_xnnpack += row.int_xnnpack;
    std::string engines, refusals;
    for (const auto& e : row.engines) engines += (engines.empty() ? "" : ", ") + e;
    for (const auto& r : row.refusals) {
      std::string why = r.substr(r.find(": ") + 2);
      if (why.find("no XNNPACK lowering for this op") != std::string::npos) why = "no lowering";
      if (why.rfind("xnnpack: ", 0) == 0) why = why.substr(9);
      if (const auto at = why.find(": xnnpack: "); at != std::string::npos) why = why.substr(0, at + 2) + why.substr(at + 11);
      for (char& c : why)
        if (c == '|' || c == '\n') c = ' ';
      refusals += (refusals.empty() ? "" : "; ") + why;
    }
    auto count = [](int n, int of) { return of ? std::to_string(n) : std::string(); };
    md << "| `" << op << "` | " << row.samples << " | " << row.libtorch << " | " << row.xnnpack << " | " << count(row.int_samples, row.int_samples) << " | "
       << count(row.int_libtorch, row.int_samples) << " | " << count(row.int_xnnpack, row.int_samples) << " | " << engines << " | " << refusals << " |\n";
  }
  md << "\n" << on_xnnpack << " of " << all << " float32 samples and " << int_on_xnnpack << " of " << all_int << " int64 samples run on XNNPACK, over "
     << rows.size() << " ops.\n";
  // The core opset (the ops torch tags `core`), which drives the sweep: each
  // of its OpInfos is swept, and every core op is lowered but those named here.
  if (index.contains("core")) {
    std::vector<std::string> core = index["core"], not_lowered;
    for (const std::string& op : core)
      if (!xnnpack::op_engines(op)) not_lowered.push_back(op);
    md << "\n## The core ATen opset\n\n"
       << "torch " << index["torch"].get<std::string>() << " tags " << core.size() << " ops `core`; the sweep takes every OpInfo of one, but those\n"
       << "whose outputs are not a function of their inputs:";
    for (const auto& [name, why] : index["left_out"].items()) md << " `" << name << "` (" << why.get<std::string>() << ")";
    if (not_lowered.empty()) {
      md << ". All " << core.size() << " are lowered.\n";
    } else {
      md << ". " << core.size() - not_lowered.size() << " of the " << core.size() << " are lowered; not:";
      for (const std::string& op : not_lowered) md << " `" << op << "`";
      md << ".\n";
    }
    std::printf("[op sweep] %zu of %zu core ATen ops lowered\n", core.size() - not_lowered.size(), core.size());
  }
  std::printf("[op sweep] %d of %d float32 samples and %d of %d int64 samples run on XNNPACK, over %zu ops\n", on_xnnpack, all, int_on_xnnpack, all_int,
              rows.size());
  std::ofstream(sweep_path("results.json")) << results.dump(1);
  const std::string fresh = md.str();
  std::ofstream(std::string(TRACEGRAPH_BINARY_DIR) + "/op_sweep.md") << fresh;
  std::ifstream committed(std::string(TRACEGRAPH_SOURCE_DIR) + "/docs/op_sweep.md");
  std::stringstream have;
  have << committed.rdbuf();
#ifdef TRACEGRAPH_SANITIZED
  // Under ASan the timings that pick an engine (conv3d: ours or XNNPACK's)
  // differ from a release build's: the table is the native preset's to check.
  // Every sample's answer is still checked above.
  std::printf("[op sweep] docs/op_sweep.md is checked by the native preset (engines chosen by timing differ under ASan)\n");
#else
  EXPECT_EQ(have.str(), fresh) << "docs/op_sweep.md is stale: scripts/make_ops_doc.sh writes it from " << TRACEGRAPH_BINARY_DIR << "/op_sweep.md";
#endif
}

}  // namespace
}  // namespace tracegraph
