// Running graphs on XNNPACK, natively and in WebAssembly.
//
// finalize() lowers the graph once: each node becomes XNNPACK operators (or a
// layout kernel of ours where XNNPACK has no operator: 3D convolution and
// pooling, nearest resize, concatenation, slicing), with the weights packed
// into XNNPACK's layout then and never again. Tensors of rank 4 and 5 live
// channels-last inside (XNNPACK is NHWC, torch NCHW); the layout changes once
// at the graph's edges and wherever an op needs the other one. Intermediate
// buffers are planned ahead and reused after each value's last use.
//
// Shapes: with the graph's input shapes known, everything is planned at
// finalize(); otherwise (or when a run brings other input shapes) on the
// first run with those shapes, reusing the packed weights.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/backend.h"

namespace tracegraph::xnnpack {

// How 3x3 (2D) and 3x3x3 (3D) stride-1 convolutions without groups run:
// Winograd (input and output transforms of ours around XNNPACK's batched
// GEMM, the weights transformed once) or XNNPACK's direct convolution.
// kFastest times the direct convolution and Winograd F(2,3) and, in 2D,
// F(4,3) on each new shape while planning and keeps the fastest, remembered
// for the process by shape and thread count. kWinograd forces F(2,3),
// kWinogradF4 F(4,3) in 2D (F(2,3) in 3D), where they apply. kFastest also
// times 3x3 depthwise convolutions (stride 1 or 2) on a kernel of ours
// against XNNPACK's; every other choice leaves those to XNNPACK.
enum class ConvAlgorithm { kFastest, kDirect, kWinograd, kWinogradF4 };
// "fastest", "direct", "winograd", "winograd4"
std::string_view conv_algorithm_name(ConvAlgorithm a);
// From its name; kInvalidArgument naming the choices otherwise.
ConvAlgorithm conv_algorithm_from(std::string_view name);

struct Options {
  // Threads of the pthreadpool that XNNPACK runs on; 0: the machine's cores.
  // Builds without threads (the single-threaded wasm) always run on one.
  int threads = 1;
  // Record each step's time on every run (see XnnpackBackend::profile()).
  bool profile = false;
  // Bytes a plan may use for intermediates (the arena, XNNPACK's workspace);
  // above it, finalize() (or the run that plans new shapes) fails with
  // kOutOfMemory and the bytes needed. 0: what the platform can address
  // (2 GiB in wasm; natively the machine's physical memory).
  std::size_t memory_budget = 0;
  ConvAlgorithm conv_algorithm = ConvAlgorithm::kFastest;
};

// What ran a node: XNNPACK operators (with any layout steps of ours around
// them), only kernels of ours (portable.h, the layout kernels), or nothing at
// run time (views, and shape arithmetic done while planning).
// kWinograd: a convolution run as Winograd (ConvAlgorithm).
enum class Engine { kNone, kXnnpack, kPortable, kWinograd };
std::string_view engine_name(Engine engine);  // "none", "xnnpack", "portable", "winograd"

// The time one node took on the last run; a node lowered to several steps
// (layout changes, a 3D convolution's unfolding) has their sum.
struct NodeTime {
  std::string node;
  std::string op;
  double milliseconds = 0;
  Engine engine = Engine::kNone;
  // Floating-point operations of the node at the planned shapes (node_flops:
  // convolutions, linears, matrix products); 0 where not counted.
  double flops = 0;
  // GFLOP/s of the last run, 0 where not counted.
  double gflops() const { return milliseconds > 0 ? flops / (milliseconds * 1e6) : 0; }
  // Layout changes (channels-last <-> torch's order) made for this node's
  // inputs, and their share of `milliseconds`: none inside a chain of
  // channels-last ops; a graph input's change (the graph's edge) is not counted.
  int layout_changes = 0;
  double layout_milliseconds = 0;
  // A convolution or linear whose weights outgrow the L2 cache, over many
  // rows, runs as this many XNNPACK operators over blocks of its output
  // channels (each block's weights stay in cache); 0: one operator.
  int column_blocks = 0;
  // A convolution with few output channels computes this many neighbouring
  // output pixels of a row as one, their channels side by side, to fill
  // XNNPACK's tiles of output channels; 1: none folded.
  int pixel_fold = 1;
  // How a Winograd convolution ran (engine kWinograd): its tile and whose
  // GEMM, e.g. "F(4,3), our GEMM, 8 lanes" or "F(2,3), XNNPACK's GEMM over
  // channel rows"; empty for every other node.
  std::string winograd;
};

class XnnpackBackend : public Backend {
 public:
  explicit XnnpackBackend(const Options& options = {});
  ~XnnpackBackend() override;

  std::string name() const override { return "xnnpack"; }
  void prepare(const Graph& graph, const Device& device, const Stream* stream) override;
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) override;
  void move(const Device& device, const Stream* stream) override;
  void check_device(const Device& device) const override;
  std::vector<UnsupportedNode> unsupported(const Graph& graph) const override;

  // Threads actually used.
  int threads() const;
  // XNNPACK's f32 GEMMs compute output channels in tiles of this many on this
  // machine (32 with AVX-512, 16 with AVX or FMA3, 8 in wasm and on Arm): a
  // convolution with fewer channels folds neighbouring pixels into a tile.
  static int gemm_tile_columns();
  // The instruction set XNNPACK's kernels and ours use in this process:
  // "avx512", "avx2" or "sse2" on x86-64 ("wasm-simd" in wasm, "neon" on
  // Arm). The CPU's own, detected at run time, or lower where the
  // environment variable TRACEGRAPH_MAX_CPU_ISA (sse2, avx2, avx512) caps
  // it: read once, before XNNPACK starts, so that a developer on an AVX-512
  // machine can run the AVX2 and SSE2 paths. kInvalidArgument for another value.
  static std::string instruction_set();
  // Per-node times of the last run, in graph order; empty unless Options::profile.
  std::vector<NodeTime> profile() const;
  // Bytes of intermediate buffers the current plan holds (weights not included).
  std::size_t arena_bytes() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

std::unique_ptr<Backend> make_backend(const Options& options = {});

// The base names of the aten and prim ops the backend lowers ("conv2d",
// "relu_"), sorted: what docs/ops.md lists.
std::vector<std::string> lowered_ops();
// The engines the backend may run an op on, by its base name ("conv2d"):
// kXnnpack, kWinograd (our convolution kernels), kPortable, and kNone where
// it may compute nothing at the run (a view, a size, a constant known while
// planning); nullopt for an op it does not lower. The op sweep checks every
// node it runs against this; docs/ops.md shows it.
std::optional<std::vector<Engine>> op_engines(std::string_view base_op);

// Whether this build can run more than one thread.
bool has_threads();

}  // namespace tracegraph::xnnpack
