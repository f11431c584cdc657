// 3x3 and 3x3x3 stride-1 convolutions as Winograd F(2,3) or F(4,3)
// (winograd.h): the transforms of ours around our GEMM (fused, per block of
// tiles) or XNNPACK's batched GEMM (per chunk of tiles) over the transformed
// weights; chosen per shape by measuring each form against the direct
// convolution, unless Options::conv_algorithm says which.
#include "lower/conv_winograd.h"
#include "lower/conv.h"
#include "lower/fused_activation.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/winograd.h"

namespace tracegraph::xnnpack {
namespace {

// V and M of one chunk of tiles stay about this small (L2-sized).
constexpr i64 kChunkBytes = i64{2} << 20;
// Our GEMM's fused run: a block of tiles goes through the input transform,
// the products and the output transform on one thread, its V and M about
// this small (L2, where the chunks' passes each stream through memory).
constexpr i64 kBlockBytes = i64{256} << 10;
// Past this, even the smallest chunk is not worth it: the direct convolution.
constexpr i64 kMaxChunkBytes = i64{64} << 20;
// A measurement crops the input so that the direct convolution does about
// this many multiply-adds (a few milliseconds) and its input and output
// outgrow the caches as the real ones do: scaled like the real shape.
constexpr i64 kMeasureMacs = i64{40} << 20;
constexpr i64 kMeasureBytes = i64{8} << 20;

// The output length of a 3x3 stride-1 convolution (every one Winograd runs)
// over `in` padded by `padding` on each side; 0 where the window passes the
// padded input.
i64 out_length(i64 in, i64 padding) { return shape_rules::window_output(in, 3, 1, padding, 1).value_or(0); }

// Up to this many tiles, the transposed GEMM (M^T = U^T V^T) is a candidate too.
constexpr i64 kMaxTransposedTiles = 256;
// A forced Winograd convolution takes XNNPACK's GEMM over our 4x8 blocks from
// this many channels in and out, where XNNPACK's blocking of K measured
// faster in wasm (resnet18's 256- and 512-channel layers); the measured
// choice weighs both everywhere.
constexpr i64 kMaxOursChannels = 256;

// How a convolution runs: directly (tile 0), or as Winograd F(tile,3) with
// M = V U (tiles as the GEMM's rows; by our kernel, or XNNPACK's) or
// M^T = U^T V^T (output channels as its rows; XNNPACK's). Our kernels come in
// vectors of `lanes` floats (conv::kernels()); XNNPACK's GEMM goes with
// the widest transforms.
struct Form {
  int tile = 0;
  bool channel_rows = false;
  bool ours = false;
  int lanes = 4;
  bool direct() const { return tile == 0; }
  int key() const { return ((tile * 2 + (channel_rows ? 1 : 0)) * 2 + (ours ? 1 : 0)) * 32 + lanes; }
  // The form whose key() this is.
  static Form of_key(i64 key) {
    Form f;
    f.lanes = static_cast<int>(key % 32), key /= 32;
    f.ours = key % 2 != 0, key /= 2;
    f.channel_rows = key % 2 != 0;
    f.tile = static_cast<int>(key / 2);
    return f;
  }
  const conv::Kernels& kernels() const { return ours ? *conv::kernels(lanes) : conv::widest_kernels(); }
};

struct Chunked {
  const winograd::Geometry* g;
  const conv::Kernels* k;
  const float* x;
  float* y;
  float* v;
  const float* m;
  bool channel_rows;
  const float* bias;
  float min, max;
  i64 start, chunk;
};

void input_tiles(void* context, std::size_t first, std::size_t count) {
  const auto* c = static_cast<const Chunked*>(context);
  c->k->transform_input(*c->g, c->x, c->v, c->start, c->chunk, c->start + static_cast<i64>(first), static_cast<i64>(count));
}
void output_tiles(void* context, std::size_t first, std::size_t count) {
  const auto* c = static_cast<const Chunked*>(context);
  c->k->transform_output(*c->g, c->m, c->channel_rows, c->y, c->bias, c->min, c->max, c->start, c->chunk,
                         c->start + static_cast<i64>(first), static_cast<i64>(count));
}

// The whole convolution, chunk by chunk: XNNPACK's GEMM was set up on v and m.
void run_chunks(const winograd::Geometry& g, i64 chunk, xnn_operator_t gemm, bool channel_rows, const float* x, float* y, float* v,
                float* m, const float* bias, float min, float max, pthreadpool_t pool) {
  const i64 tiles = g.tiles();
  for (i64 start = 0; start < tiles; start += chunk) {
    Chunked c{&g, &conv::widest_kernels(), x, y, v, m, channel_rows, bias, min, max, start, chunk};
    // The last chunk's tiles past the end are zeros for the GEMM, never written out.
    pthreadpool_parallelize_1d_tile_1d(pool, input_tiles, &c, static_cast<std::size_t>(chunk), 8, kNoDenormals);
    const xnn_status status = xnn_run_operator(gemm, pool);
    if (status != xnn_status_success) fail(ErrorCode::kInternal, "xnnpack: running a Winograd convolution's GEMM failed (status " + std::to_string(status) + ")");
    pthreadpool_parallelize_1d_tile_1d(pool, output_tiles, &c, static_cast<std::size_t>(std::min(chunk, tiles - start)), 8, kNoDenormals);
  }
}

// Our GEMM's run: one task per block of tiles, each on its thread's own V and M.
struct Blocked {
  const winograd::Geometry* g;
  const conv::Kernels* k;
  const float* x;
  float* y;
  float* v;  // [threads][P][block][C]
  float* m;  // [threads][P][block][O]
  const float* u;
  const float* bias;
  float min, max;
  i64 block;
};

void block_task(void* context, std::size_t thread, std::size_t index) {
  const auto* c = static_cast<const Blocked*>(context);
  const winograd::Geometry& g = *c->g;
  const i64 start = static_cast<i64>(index) * c->block, count = std::min(c->block, g.tiles() - start);
  float* v = c->v + static_cast<i64>(thread) * g.points() * c->block * g.in_channels;
  float* m = c->m + static_cast<i64>(thread) * g.points() * c->block * g.out_channels;
  c->k->transform_input(g, c->x, v, start, c->block, start, count);
  for (i64 p = 0; p < g.points(); ++p) c->k->gemm(g, v, c->u, m, c->block, p, 0, count);
  c->k->transform_output(g, m, false, c->y, c->bias, c->min, c->max, start, c->block, start, count);
}

void run_blocked(const winograd::Geometry& g, const conv::Kernels& k, i64 block, const float* u, const float* x, float* y, float* v, float* m, const float* bias,
                 float min, float max, pthreadpool_t pool) {
  Blocked c{&g, &k, x, y, v, m, u, bias, min, max, block};
  pthreadpool_parallelize_1d_with_thread(pool, block_task, &c, static_cast<std::size_t>((g.tiles() + block - 1) / block), kNoDenormals);
}

// Points a form's GEMM at V and M: channel rows (weights given: U^T, the left
// operand) multiply U^T by V, tile rows V by XNNPACK's packed U.
xnn_status setup_gemm(xnn_operator_t op, const float* weights, void* workspace, const float* v, float* m) {
  return weights ? xnn_setup_batch_matrix_multiply_nc_f32(op, workspace, weights, v, m)
                 : xnn_setup_batch_matrix_multiply_nc_f32(op, workspace, v, nullptr, m);
}

// Tiles per block for our GEMM: about kBlockBytes of V and M, a multiple of
// its rows per block.
i64 block_for(const winograd::Geometry& g, const conv::Kernels& k) {
  const i64 per_tile = g.points() * (g.in_channels + g.out_channels) * static_cast<i64>(sizeof(float)), rows = k.rows;
  return std::min(std::max<i64>(kBlockBytes / per_tile / rows * rows, rows), (g.tiles() + rows - 1) / rows * rows);
}

i64 chunk_for(const winograd::Geometry& g, bool channel_rows) {
  if (channel_rows) return g.tiles();
  const i64 per_tile = g.points() * (g.in_channels + g.out_channels) * static_cast<i64>(sizeof(float));
  return std::min(std::max<i64>(kChunkBytes / per_tile, 16), g.tiles());
}

// Measured choices, for the process: by shape, padding and threads; the
// fastest form's key().
MeasuredChoices choices;

// One node's Winograd convolution: its shape, and what every form's plan and
// measurement share (the geometry per tile size, the GEMMs and their reshape).
struct WinogradConv {
  Context& cx;
  const Node& n;
  int x;
  const Tensor& w;
  const std::vector<i64>& padding;
  const Fused& fused;
  Shape xs;
  int rank;
  i64 batch, in_channels, out_channels;
  const float* bias;

  WinogradConv(Context& cx_, const Node& n_, int x_, const Tensor& w_, const Tensor& b, const std::vector<i64>& padding_, const Fused& fused_)
      : cx(cx_), n(n_), x(x_), w(w_), padding(padding_), fused(fused_), xs(cx_.slot(x_).shape) {
    rank = static_cast<int>(xs.size()) - 2;
    batch = xs[0], in_channels = xs[1], out_channels = w.shape()[0];
    bias = b.defined() ? b.data_as<float>() : nullptr;
  }

  // A tile size's geometry, on the real shape or a cropped one.
  std::optional<winograd::Geometry> geometry(int tile, i64 images, const i64* in_sizes) const {
    winograd::Geometry g;
    if (!winograd::Geometry::make(rank, tile, images, in_channels, out_channels, in_sizes, padding.data(), g)) return std::nullopt;
    if (g.points() * 16 * (in_channels + out_channels) * static_cast<i64>(sizeof(float)) > kMaxChunkBytes) return std::nullopt;
    return g;
  }

  // Our GEMM's run gives each thread a block of tiles at a time: with fewer
  // blocks than threads (resnet18's 7x7 layers in F(4,3): 4 tiles, one
  // block) the others would wait. In wasm a measurement at a loud moment
  // chose that at 2 threads, 2.5x slower than XNNPACK's GEMM.
  bool enough_blocks(const winograd::Geometry& g, const conv::Kernels& k) const {
    return (g.tiles() + block_for(g, k) - 1) / block_for(g, k) >= cx.threads();
  }

  // A form's GEMM: our kernel keeps U with padded rows; XNNPACK's tile rows
  // pack U inside XNNPACK; channel rows keep U^T as the left operand and pack
  // V (as B, transposed) on each run. A trial for the measurement takes
  // zeros: the time does not depend on the weights.
  void make_gemm(Form form, const winograd::Geometry& g, NodeState::WinogradGemm& made, bool trial) const {
    const auto C = static_cast<std::size_t>(in_channels), O = static_cast<std::size_t>(out_channels);
    const std::vector<float> u = trial ? std::vector<float>(static_cast<std::size_t>(g.points()) * C * O)
                                       : winograd::transform_weights(g, w.data_as<float>(), form.channel_rows);
    if (form.ours) {
      made.weights = winograd::pad_columns(g, u, form.lanes);
      return;
    }
    if (!form.channel_rows) {
      cx.check(xnn_create_batch_matrix_multiply_nc_f32_const_weights(static_cast<std::size_t>(g.points()), C, O, u.data(), 0, &made.op.op), n,
               "creating a Winograd convolution's GEMM");
      return;
    }
    made.weights.assign(u.size() + kTailBytes / sizeof(float), 0.0f);  // XNNPACK may read past the end
    std::copy(u.begin(), u.end(), made.weights.begin());
    cx.check(xnn_create_batch_matrix_multiply_nc_f32(XNN_FLAG_TRANSPOSE_B, &made.op.op), n, "creating a Winograd convolution's GEMM");
  }

  // Reshapes a form's XNNPACK GEMM for `chunk` tiles; returns its workspace bytes.
  std::size_t reshape(xnn_operator_t op, Form form, const winograd::Geometry& g, i64 chunk) const {
    std::size_t ws_size = 0, ws_align = 0;
    if (form.ours) return ws_size;
    const auto C = static_cast<std::size_t>(in_channels), O = static_cast<std::size_t>(out_channels);
    const std::size_t batch_dims[1] = {static_cast<std::size_t>(g.points())};
    const std::size_t rows = form.channel_rows ? O : static_cast<std::size_t>(chunk), cols = form.channel_rows ? static_cast<std::size_t>(chunk) : O;
    cx.check(xnn_reshape_batch_matrix_multiply_nc_f32(op, 1, batch_dims, batch_dims, rows, C, cols, &ws_size, &ws_align, cx.pool()), n,
             "reshaping a Winograd convolution's GEMM");
    return ws_size;
  }

  // The rows of V and M a form keeps: a chunk of tiles, or a block per thread for ours.
  i64 rows_for(Form form, const winograd::Geometry& g) const {
    return form.ours ? block_for(g, form.kernels()) * static_cast<i64>(pthreadpool_get_threads_count(cx.pool())) : chunk_for(g, form.channel_rows);
  }
};

// The Winograd candidates for the real shape (index tile / 4 of `real`:
// F(2,3), F(4,3)); `few_tiles` where a form over channel rows is one.
std::vector<Form> candidate_forms(const WinogradConv& wc, const std::optional<winograd::Geometry> (&real)[2], bool& few_tiles) {
  std::vector<Form> forms;
  few_tiles = false;
  for (int tile : {2, 4}) {
    const auto& g = real[tile / 4];
    if (!g) continue;
    // Our GEMM at each width the CPU has, but 4 lanes only where there are
    // not 8: the same kernels at half the width measured slower on every
    // shape of the bench models, and each form costs a run at finalize().
    for (int lanes : {4, 8, 16})
      if (const conv::Kernels* k = conv::kernels(lanes); k && !(lanes == 4 && conv::kernels(8)) && wc.enough_blocks(*g, *k))
        forms.push_back({tile, false, true, lanes});
    forms.push_back({tile, false, false});
    if (g->tiles() <= kMaxTransposedTiles) forms.push_back({tile, true, false}), few_tiles = true;
  }
  return forms;
}

// Large shapes (many tiles) are measured on batch 1 with the outermost
// spatial axis cropped to about kMeasureMacs of direct work, or more rows
// where the input and output would still fit kMeasureBytes: every form
// scales alike with the rows there. Sets the measured input's `sizes` and `images`.
void measurement_shape(const WinogradConv& wc, bool few_tiles, i64 (&sizes)[3], i64& images) {
  images = wc.batch;
  for (int axis = 0; axis < wc.rank; ++axis) sizes[axis] = wc.xs[static_cast<std::size_t>(axis) + 2];
  if (few_tiles) return;
  i64 plane = wc.out_channels * wc.in_channels * (wc.rank == 3 ? 27 : 9), row_bytes = (wc.in_channels + wc.out_channels) * static_cast<i64>(sizeof(float));
  for (int axis = 1; axis < wc.rank; ++axis) {
    plane *= out_length(sizes[axis], wc.padding[static_cast<std::size_t>(axis)]);
    row_bytes *= sizes[axis];
  }
  i64 rows = std::max<i64>({4, kMeasureMacs / std::max<i64>(plane, 1), kMeasureBytes / std::max<i64>(row_bytes, 1)});
  rows = (rows + 3) / 4 * 4;  // whole tiles of either size
  sizes[0] = std::max<i64>(1, std::min(sizes[0], rows + 2 - 2 * wc.padding[0]));
  images = 1;
}

// The measurement's buffers, in floats: input, output, V and M.
struct MeasureBuffers {
  i64 in, out, v, m;
};

// Times the direct convolution and each form on the measured shape: each
// warmed up (warm_up(), by its kernels), a first run each untimed (it makes
// the direct convolution's operator and touches the buffers), a timed one,
// then three rounds, taking turns, of those within 1.25x of the best; each
// keeps its fastest. The fastest form, or direct (a tie keeps it).
Form time_forms(const WinogradConv& wc, const std::vector<std::pair<Form, winograd::Geometry>>& measured, const MeasureBuffers& sizes_of, i64 images,
                const i64* sizes, const DirectRun& direct) {
  const auto [in_numel, out_numel, v_numel, m_numel] = sizes_of;
  Context& cx = wc.cx;
  std::size_t ws = 0;
  std::map<int, NodeState::WinogradGemm> trials;
  for (const auto& [f, g] : measured) {
    wc.make_gemm(f, g, trials[f.key()], true);
    ws = std::max(ws, wc.reshape(trials[f.key()].op.op, f, g, chunk_for(g, f.channel_rows)));
  }
  AlignedFloats xm = aligned_floats(sizeof(float) * static_cast<std::size_t>(in_numel));
  AlignedFloats ym = aligned_floats(sizeof(float) * static_cast<std::size_t>(out_numel));
  AlignedFloats vm = aligned_floats(sizeof(float) * static_cast<std::size_t>(v_numel));
  AlignedFloats mm = aligned_floats(sizeof(float) * static_cast<std::size_t>(m_numel));
  AlignedFloats wsm = aligned_floats(ws);
  for (i64 i = 0; i < in_numel; ++i) xm[static_cast<std::size_t>(i)] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
  std::vector<std::function<void()>> runs{[&] { direct(xm.get(), ym.get(), images, sizes); }};
  for (const auto& [f, g] : measured) {
    runs.push_back([&, f = f, g = g] {
      const NodeState::WinogradGemm& trial = trials[f.key()];
      if (f.ours) {
        run_blocked(g, f.kernels(), block_for(g, f.kernels()), trial.weights.data(), xm.get(), ym.get(), vm.get(), mm.get(), wc.bias, wc.fused.min,
                    wc.fused.max, cx.pool());
        return;
      }
      const i64 chunk = chunk_for(g, f.channel_rows);
      wc.reshape(trial.op.op, f, g, chunk);
      cx.check(setup_gemm(trial.op.op, f.channel_rows ? trial.weights.data() : nullptr, wsm.get(), vm.get(), mm.get()), wc.n,
               "setting up a Winograd convolution's GEMM");
      run_chunks(g, chunk, trial.op.op, f.channel_rows, xm.get(), ym.get(), vm.get(), mm.get(), wc.bias, wc.fused.min, wc.fused.max, cx.pool());
    });
  }
  const std::string dims = std::to_string(wc.rank) + "D";
  warm_up("XNNPACK's direct " + dims + " convolution", runs[0]);
  for (std::size_t k = 0; k < measured.size(); ++k) {
    const Form f = measured[k].first;
    warm_up("Winograd F(" + std::to_string(f.tile) + ",3) " + dims + (f.ours ? ", our GEMM at " + std::to_string(f.lanes) : f.channel_rows ? ", channel rows" : ""),
            runs[k + 1]);
  }
  std::vector<double> best(runs.size());
  for (auto& run : runs) run();
  for (std::size_t k = 0; k < runs.size(); ++k) best[k] = seconds_of(runs[k]);
  const double cut = 1.25 * *std::min_element(best.begin(), best.end());
  std::vector<std::size_t> close;
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (best[k] <= cut) close.push_back(k);
  for (int round = 0; round < 3 && close.size() > 1; ++round)
    for (std::size_t k : close) best[k] = std::min(best[k], seconds_of(runs[k]));
  Form fastest;  // direct unless a form measures faster
  double fastest_seconds = 0.95 * best[0];  // a tie keeps the direct convolution
  for (std::size_t k = 0; k < measured.size(); ++k)
    if (best[k + 1] < fastest_seconds) fastest = measured[k].first, fastest_seconds = best[k + 1];
  return fastest;
}

// ConvAlgorithm::kFastest: the form measured fastest for this shape (once per
// process and key), or direct; the measurement is skipped (direct) where
// what it allocates would pass a quarter of the memory budget.
Form measured_form(const WinogradConv& wc, const std::vector<Form>& forms, bool few_tiles, const DirectRun& direct) {
  std::vector<i64> key{wc.rank, wc.batch, wc.in_channels, wc.out_channels, wc.cx.threads()};
  for (std::size_t axis = 0; axis < static_cast<std::size_t>(wc.rank); ++axis) key.insert(key.end(), {wc.xs[axis + 2], wc.padding[axis]});
  if (std::optional<i64> known = choices.find(key)) return Form::of_key(*known);
  i64 sizes[3] = {0, 0, 0}, images = 0;
  measurement_shape(wc, few_tiles, sizes, images);
  std::vector<std::pair<Form, winograd::Geometry>> measured;
  for (Form f : forms)
    if (const auto g = wc.geometry(f.tile, images, sizes); g) measured.push_back({f, *g});
  // What the measurement allocates (with XNNPACK's indirection buffer; a 3D
  // direct convolution unfolds its input threefold), in double.
  i64 in_numel = images * wc.in_channels, out_numel = images * wc.out_channels, v_numel = 0, m_numel = 0;
  for (int axis = 0; axis < wc.rank; ++axis) in_numel *= sizes[axis], out_numel *= out_length(sizes[axis], wc.padding[static_cast<std::size_t>(axis)]);
  for (const auto& [f, g] : measured) {
    const i64 rows = wc.rows_for(f, g);
    v_numel = std::max(v_numel, g.points() * rows * wc.in_channels);
    m_numel = std::max(m_numel, g.points() * rows * wc.out_channels);
  }
  double bytes = 4.0 * (static_cast<double>(in_numel) + static_cast<double>(out_numel) + static_cast<double>(v_numel) + static_cast<double>(m_numel));
  const double out_pixels = static_cast<double>(out_numel) / static_cast<double>(wc.out_channels);
  bytes += 9.0 * sizeof(void*) * out_pixels;  // XNNPACK's indirection buffer
  if (wc.rank == 3) bytes += 4.0 * 3 * out_pixels * static_cast<double>(wc.in_channels);
  Form fastest;
  if (bytes <= static_cast<double>(wc.cx.memory_budget()) / 4) {
    fastest = time_forms(wc, measured, MeasureBuffers{in_numel, out_numel, v_numel, m_numel}, images, sizes, direct);
  }
  choices.put(key, fastest.key());
  return fastest;
}

// The chosen form's plan: its GEMM (made once per form), V and M, and the
// step that runs the transforms and the GEMM over the tiles.
void plan_winograd(const WinogradConv& wc, NodeState& st, Form form, const winograd::Geometry& g) {
  Context& cx = wc.cx;
  const Node& n = wc.n;
  // The direct convolution's packed weights (folded or not) are not needed while Winograd runs.
  st.columns.clear();
  NodeState::WinogradGemm& made = st.winograd[form.key()];
  if (!made.op.op && made.weights.empty()) wc.make_gemm(form, g, made, false);
  const i64 chunk = chunk_for(g, form.channel_rows), block = block_for(g, form.kernels());
  cx.reserve_workspace(wc.reshape(made.op.op, form, g, chunk));
  Shape out_shape{wc.batch, wc.out_channels};
  for (int axis = 3 - wc.rank; axis < 3; ++axis) out_shape.push_back(g.out[axis]);
  const int out = cx.new_tensor(std::move(out_shape), true);
  const i64 rows = wc.rows_for(form, g);
  const int v = cx.new_tensor(Shape{g.points(), rows, wc.in_channels}, false);
  const int m = cx.new_tensor(Shape{g.points(), rows, wc.out_channels}, false);
  const int x = wc.x;
  Step& step = cx.add_step({x}, {out, v, m});
  xnn_operator_t op = made.op.op;
  const float* weights = form.channel_rows ? made.weights.data() : nullptr;
  if (!form.ours)
    step.setup = [&cx, op, weights, v, m, &n] {
      cx.check(setup_gemm(op, weights, cx.workspace(), cx.ptr(v), cx.ptr(m)), n, "setting up a Winograd convolution's GEMM");
    };
  step.xnnpack = true;
  step.winograd = true;
  step.winograd_form = "F(" + std::to_string(form.tile) + ",3), " +
                       (form.ours ? "our GEMM, " + std::to_string(form.lanes) + " lanes" : form.channel_rows ? "XNNPACK's GEMM over channel rows" : "XNNPACK's GEMM");
  const float min = wc.fused.min, max = wc.fused.max;
  const float* bias = wc.bias;
  const bool channel_rows = form.channel_rows;
  if (form.ours) {
    const float* u = made.weights.data();
    const conv::Kernels* k = &form.kernels();
    step.run = [&cx, g, k, block, u, x, out, v, m, bias, min, max] { run_blocked(g, *k, block, u, cx.ptr(x), cx.ptr(out), cx.ptr(v), cx.ptr(m), bias, min, max, cx.pool()); };
  } else {
    step.run = [&cx, g, chunk, op, channel_rows, x, out, v, m, bias, min, max] {
      run_chunks(g, chunk, op, channel_rows, cx.ptr(x), cx.ptr(out), cx.ptr(v), cx.ptr(m), bias, min, max, cx.pool());
    };
  }
  post_activation(cx, n, st, 1, wc.fused, out);
  cx.define(n.outputs[0], out);
}

}  // namespace

bool lower_winograd(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b,
                    const std::vector<i64>& padding, const Fused& fused, const DirectRun& direct) {
  const ConvAlgorithm algorithm = cx.options().conv_algorithm;
  if (algorithm == ConvAlgorithm::kDirect) return false;
  const WinogradConv wc(cx, n, x, w, b, padding, fused);
  // The real shape's geometry per tile size (index tile / 4: F(2,3), F(4,3)).
  const std::optional<winograd::Geometry> real[2] = {wc.geometry(2, wc.batch, wc.xs.data() + 2), wc.geometry(4, wc.batch, wc.xs.data() + 2)};
  bool few_tiles = false;
  const std::vector<Form> forms = candidate_forms(wc, real, few_tiles);
  if (forms.empty()) return false;
  {  // the output against the budget before anything is sized for it (as the direct convolution does)
    Shape out_shape{wc.batch, wc.out_channels};
    for (std::size_t axis = 0; axis < static_cast<std::size_t>(wc.rank); ++axis) out_shape.push_back(out_length(wc.xs[axis + 2], padding[axis]));
    cx.within_budget(out_shape);
  }
  // Forced: the tile asked for where it applies (else F(2,3)), with channel
  // rows where few tiles meet many output channels, else our GEMM up to
  // kMaxOursChannels (where it has a block for each thread) and XNNPACK's past it.
  const int forced_tile = algorithm == ConvAlgorithm::kWinogradF4 && real[1] ? 4 : 2;
  Form form = forms.front();
  if (const auto& g = real[forced_tile / 4]; g) {
    const bool channel_rows = g->tiles() <= kMaxTransposedTiles && 2 * g->tiles() < wc.out_channels;
    form = {forced_tile, channel_rows,
            !channel_rows && std::min(wc.in_channels, wc.out_channels) < kMaxOursChannels && wc.enough_blocks(*g, conv::widest_kernels()),
            conv::widest_kernels().lanes};
  }
  if (algorithm == ConvAlgorithm::kFastest) {
    form = measured_form(wc, forms, few_tiles, direct);
    if (form.direct()) return false;
  }
  plan_winograd(wc, st, form, *real[form.tile / 4]);
  return true;
}

}  // namespace tracegraph::xnnpack
