// 3x3 and 3x3x3 stride-1 convolutions as Winograd F(2,3) (winograd.h): the
// transforms of ours, parallel over tiles, around XNNPACK's batched GEMM over
// the transformed weights; chosen per shape by measuring it against the direct
// convolution, unless Options::conv_algorithm says which.
#include "backend_impl.h"
#include "winograd.h"

namespace tracegraph::xnnpack {
namespace {

// V and M of one chunk of tiles stay about this small (L2-sized).
constexpr i64 kChunkBytes = i64{2} << 20;
// Past this, even the smallest chunk is not worth it: the direct convolution.
constexpr i64 kMaxChunkBytes = i64{64} << 20;
// A measurement crops the input so that the direct convolution does about
// this many multiply-adds: a few milliseconds, scaled like the real shape.
constexpr i64 kMeasureMacs = i64{40} << 20;

// Up to this many tiles, the transposed GEMM (M^T = U^T V^T) is a candidate too.
constexpr i64 kMaxTransposedTiles = 256;

// How the convolution runs: directly, or as Winograd with M = V U (tiles as
// the GEMM's rows) or M^T = U^T V^T (output channels as its rows).
enum class Form { kDirect, kTileRows, kChannelRows };

struct Chunked {
  const winograd::Geometry* g;
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
  winograd::transform_input(*c->g, c->x, c->v, c->start, c->chunk, c->start + static_cast<i64>(first), static_cast<i64>(count));
}
void output_tiles(void* context, std::size_t first, std::size_t count) {
  const auto* c = static_cast<const Chunked*>(context);
  winograd::transform_output(*c->g, c->m, c->channel_rows, c->y, c->bias, c->min, c->max, c->start, c->chunk,
                             c->start + static_cast<i64>(first), static_cast<i64>(count));
}

// The whole convolution, chunk by chunk: the GEMM was set up on v and m.
void run_chunks(const winograd::Geometry& g, i64 chunk, xnn_operator_t gemm, bool channel_rows, const float* x, float* y, float* v,
                float* m, const float* bias, float min, float max, pthreadpool_t pool) {
  const i64 tiles = g.tiles();
  for (i64 start = 0; start < tiles; start += chunk) {
    Chunked c{&g, x, y, v, m, channel_rows, bias, min, max, start, chunk};
    // The last chunk's tiles past the end are zeros for the GEMM, never written out.
    pthreadpool_parallelize_1d_tile_1d(pool, input_tiles, &c, static_cast<std::size_t>(chunk), 8, 0);
    const xnn_status status = xnn_run_operator(gemm, pool);
    if (status != xnn_status_success) fail(ErrorCode::kInternal, "xnnpack: running a Winograd convolution's GEMM failed (status " + std::to_string(status) + ")");
    pthreadpool_parallelize_1d_tile_1d(pool, output_tiles, &c, static_cast<std::size_t>(std::min(chunk, tiles - start)), 8, 0);
  }
}

i64 chunk_for(const winograd::Geometry& g, Form form) {
  if (form == Form::kChannelRows) return g.tiles();
  const i64 per_tile = g.points() * (g.in_channels + g.out_channels) * static_cast<i64>(sizeof(float));
  return std::min(std::max<i64>(kChunkBytes / per_tile, 16), g.tiles());
}

// Measured choices, for the process: by shape, padding and threads.
std::mutex choices_mutex;
std::map<std::vector<i64>, Form> choices;

double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

bool XnnpackBackend::Impl::lower_winograd(const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b,
                                          const std::vector<i64>& padding, const Fused& fused, const DirectRun& direct) {
  const ConvAlgorithm algorithm = options_.conv_algorithm;
  if (algorithm == ConvAlgorithm::kDirect) return false;
  const Shape xs = slots_[static_cast<std::size_t>(x)].shape;
  const int rank = static_cast<int>(xs.size()) - 2;
  winograd::Geometry g;
  if (!winograd::Geometry::make(rank, xs[0], xs[1], w.shape()[0], xs.data() + 2, padding.data(), g)) return false;
  const i64 P = g.points();
  if (i64 smallest = P * 16 * (g.in_channels + g.out_channels) * static_cast<i64>(sizeof(float)); smallest > kMaxChunkBytes) return false;
  const float* bias = b.defined() ? b.data_as<float>() : nullptr;
  const std::size_t batch_dims[1] = {static_cast<std::size_t>(P)};
  const auto C = static_cast<std::size_t>(g.in_channels), O = static_cast<std::size_t>(g.out_channels);

  // Each form's GEMM, made once: tile rows pack U inside XNNPACK; channel rows
  // keep U^T as the left operand and pack V (as B, transposed) on each run.
  auto gemm = [&](Form form) -> xnn_operator_t {
    if (form == Form::kTileRows) {
      if (!st.winograd.op) {
        const std::vector<float> u = winograd::transform_weights(g, w.data_as<float>(), false);
        check(xnn_create_batch_matrix_multiply_nc_f32_const_weights(batch_dims[0], C, O, u.data(), 0, &st.winograd.op), n,
              "creating a Winograd convolution's GEMM");
      }
      return st.winograd.op;
    }
    if (!st.winograd_channel_rows.op) {
      st.winograd_weights = winograd::transform_weights(g, w.data_as<float>(), true);
      st.winograd_weights.resize(st.winograd_weights.size() + kTailBytes / sizeof(float), 0.0f);  // XNNPACK may read past the end
      check(xnn_create_batch_matrix_multiply_nc_f32(XNN_FLAG_TRANSPOSE_B, &st.winograd_channel_rows.op), n,
            "creating a Winograd convolution's GEMM");
    }
    return st.winograd_channel_rows.op;
  };
  // The form's GEMM for `chunk` tiles; returns its workspace bytes.
  auto reshape = [&](Form form, i64 chunk) {
    std::size_t ws_size = 0, ws_align = 0;
    const bool rows = form == Form::kChannelRows;
    check(xnn_reshape_batch_matrix_multiply_nc_f32(gemm(form), 1, batch_dims, batch_dims, rows ? O : static_cast<std::size_t>(chunk), C,
                                                   rows ? static_cast<std::size_t>(chunk) : O, &ws_size, &ws_align, pool()),
          n, "reshaping a Winograd convolution's GEMM");
    return ws_size;
  };
  auto setup = [&](Form form, void* workspace, const float* v, float* m) {
    const xnn_status status = form == Form::kChannelRows
                                  ? xnn_setup_batch_matrix_multiply_nc_f32(gemm(form), workspace, st.winograd_weights.data(), v, m)
                                  : xnn_setup_batch_matrix_multiply_nc_f32(gemm(form), workspace, v, nullptr, m);
    check(status, n, "setting up a Winograd convolution's GEMM");
  };
  const bool channel_rows_fit = g.tiles() <= kMaxTransposedTiles;

  // Forced: channel rows where few tiles meet many output channels.
  Form form = channel_rows_fit && 2 * g.tiles() < g.out_channels ? Form::kChannelRows : Form::kTileRows;
  if (algorithm == ConvAlgorithm::kFastest) {
    std::vector<i64> key{rank, g.batch, g.in_channels, g.out_channels, threads_};
    for (int axis = 0; axis < 3; ++axis) key.insert(key.end(), {g.in[axis], g.pad[axis]});
    std::optional<Form> known;
    {
      std::lock_guard<std::mutex> lock(choices_mutex);
      if (auto it = choices.find(key); it != choices.end()) known = it->second;
    }
    if (!known) {
      // Large shapes: batch 1 and the outermost spatial axis cropped to about
      // kMeasureMacs of direct work (the forms scale alike with the rows).
      winograd::Geometry m = g;
      const int outer = 3 - rank;
      if (!channel_rows_fit) {
        i64 plane = 1;
        for (int axis = outer + 1; axis < 3; ++axis) plane *= g.out[axis];
        const i64 macs_per_row = plane * g.in_channels * g.out_channels * (rank == 3 ? 27 : 9);
        i64 rows = std::max<i64>(2, kMeasureMacs / std::max<i64>(macs_per_row, 1));
        rows += rows % 2;
        i64 in_sizes[3] = {g.in[0], g.in[1], g.in[2]};
        in_sizes[outer] = std::min(g.in[outer], rows + 2 - 2 * g.pad[outer]);
        winograd::Geometry::make(rank, 1, g.in_channels, g.out_channels, in_sizes + outer, g.pad + outer, m);
      }
      std::vector<Form> forms{Form::kTileRows};
      if (channel_rows_fit) forms.push_back(Form::kChannelRows);
      i64 in_numel = m.batch * g.in_channels, out_numel = m.batch * g.out_channels, chunk_max = 0;
      for (int axis = 0; axis < 3; ++axis) in_numel *= m.in[axis], out_numel *= m.out[axis];
      std::size_t ws = 0;
      for (Form f : forms) chunk_max = std::max(chunk_max, chunk_for(m, f)), ws = std::max(ws, reshape(f, chunk_for(m, f)));
      const std::size_t bytes =
          sizeof(float) * static_cast<std::size_t>(in_numel + out_numel + P * chunk_max * (g.in_channels + g.out_channels)) + ws;
      Form fastest = Form::kDirect;
      if (bytes <= memory_budget() / 4) {
        AlignedFloats xm = aligned_floats(sizeof(float) * static_cast<std::size_t>(in_numel));
        AlignedFloats ym = aligned_floats(sizeof(float) * static_cast<std::size_t>(out_numel));
        AlignedFloats vm = aligned_floats(sizeof(float) * static_cast<std::size_t>(P * chunk_max * g.in_channels));
        AlignedFloats mm = aligned_floats(sizeof(float) * static_cast<std::size_t>(P * chunk_max * g.out_channels));
        AlignedFloats wsm = aligned_floats(ws);
        for (i64 i = 0; i < in_numel; ++i) xm[static_cast<std::size_t>(i)] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
        std::vector<std::function<void()>> runs{[&] { direct(xm.get(), ym.get(), m.batch, m.in + outer); }};
        for (Form f : forms) {
          runs.push_back([&, f] {
            const i64 chunk = chunk_for(m, f);
            reshape(f, chunk);
            setup(f, wsm.get(), vm.get(), mm.get());
            run_chunks(m, chunk, gemm(f), f == Form::kChannelRows, xm.get(), ym.get(), vm.get(), mm.get(), bias, fused.min, fused.max, pool());
          });
        }
        std::vector<double> best(runs.size(), std::numeric_limits<double>::infinity());
        for (auto& run : runs) run();  // warm-up
        for (int round = 0; round < 3; ++round)
          for (std::size_t k = 0; k < runs.size(); ++k) best[k] = std::min(best[k], seconds(runs[k]));
        // A tie keeps the direct convolution.
        double fastest_seconds = 0.95 * best[0];
        for (std::size_t k = 0; k < forms.size(); ++k)
          if (best[k + 1] < fastest_seconds) fastest = forms[k], fastest_seconds = best[k + 1];
      }
      known = fastest;
      std::lock_guard<std::mutex> lock(choices_mutex);
      choices[key] = fastest;
    }
    if (*known == Form::kDirect) return false;
    form = *known;
  }

  // The direct convolution's packed weights are not needed while Winograd runs.
  if (!st.ops.empty() && st.ops[0].op) xnn_delete_operator(std::exchange(st.ops[0].op, nullptr));
  const i64 chunk = chunk_for(g, form);
  workspace_bytes_ = std::max(workspace_bytes_, reshape(form, chunk));
  xnn_operator_t op = gemm(form);
  Shape out_shape{g.batch, g.out_channels};
  for (int axis = 3 - rank; axis < 3; ++axis) out_shape.push_back(g.out[axis]);
  const int out = new_tensor(std::move(out_shape), true);
  const int v = new_tensor(Shape{P, chunk, g.in_channels}, false);
  const int m = new_tensor(Shape{P, chunk, g.out_channels}, false);
  Step& step = add_step({x}, {out, v, m});
  const float* weights = form == Form::kChannelRows ? st.winograd_weights.data() : nullptr;
  step.setup = [this, op, weights, v, m, &n] {
    const xnn_status status = weights ? xnn_setup_batch_matrix_multiply_nc_f32(op, workspace_.get(), weights, ptr(v), ptr(m))
                                      : xnn_setup_batch_matrix_multiply_nc_f32(op, workspace_.get(), ptr(v), nullptr, ptr(m));
    check(status, n, "setting up a Winograd convolution's GEMM");
  };
  step.xnnpack = true;
  step.winograd = true;
  const float min = fused.min, max = fused.max;
  const bool channel_rows = form == Form::kChannelRows;
  step.run = [this, g, chunk, op, channel_rows, x, out, v, m, bias, min, max] {
    run_chunks(g, chunk, op, channel_rows, ptr(x), ptr(out), ptr(v), ptr(m), bias, min, max, pool());
  };
  post_activation(n, st, 1, fused, out);
  define(n.outputs[0], out);
  return true;
}

}  // namespace tracegraph::xnnpack
