// What every part of the XNNPACK backend uses: XNNPACK's start, owners of
// its operators and of aligned buffers, measured choices, and the small
// shape helpers (logical and channels-last layouts). Private to xnnpack/src.
#pragma once

#include "tracegraph/xnnpack/backend.h"

#include <pthreadpool.h>
#include <xnnpack.h>
// Ours, renamed (scripts/build_xnnpack.sh), not LibTorch's header of the same
// name, which would have this file call LibTorch's copy.
#ifndef TRACEGRAPH_XNNPACK_SYMBOLS
#error "xnnpack.h is not tracegraph's own: put tracegraph_xnnpack_deps' include directory before LibTorch's"
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <new>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <unistd.h>
#endif

#include "platform/cpu.h"
#include "kernels/layout.h"
#include "kernels/portable/portable.h"
#include "platform/thread_pool.h"
#include "tracegraph/op_table.h"
#include "tracegraph/shape_rules.h"

namespace tracegraph::xnnpack {
namespace detail {

using i64 = std::int64_t;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::size_t kAlignment = 64;
// XNNPACK may read (never write) a little past the end of its inputs.
constexpr std::size_t kTailBytes = XNN_EXTRA_BYTES + kAlignment;

// XNNPACK initialized once per process, after the CPU's features (and their cap).
void init_xnnpack();

// Owns one XNNPACK operator.
struct XnnOp {
  xnn_operator_t op = nullptr;
  XnnOp() = default;
  XnnOp(const XnnOp&) = delete;
  XnnOp& operator=(const XnnOp&) = delete;
  XnnOp(XnnOp&& o) noexcept : op(std::exchange(o.op, nullptr)) {}
  ~XnnOp();
};

struct AlignedDeleter {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t(kAlignment)); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedDeleter>;
// `bytes` (and XNNPACK's tail), kAlignment-aligned.
AlignedFloats aligned_floats(std::size_t bytes);

// Choices measured while planning (Winograd's form by its key(), whether our
// depthwise, 1x1 or unfolded kernel wins), each held as an integer and
// remembered for the process by a key of sizes; graphs on any thread share them.
class MeasuredChoices {
 public:
  std::optional<i64> find(const std::vector<i64>& key);
  void put(const std::vector<i64>& key, i64 choice);

 private:
  std::mutex mutex_;
  std::map<std::vector<i64>, i64> choices_;
};

// The wall-clock seconds f takes.
double seconds_of(const std::function<void()>& f);

// In wasm, a function first runs as V8's baseline (Liftoff) code; its
// optimized code replaces it only after it has run a while and a background
// compile is done. A kernel measured before then looks 1.5-4x slower than it
// is: our 1x1 kernel's first three rounds took 1.3-5.4 ms, then 0.31 (against
// XNNPACK's 0.45), so it lost a choice it should have won. Before a run is
// timed, warm_up() runs it untimed until its family (the kernels it runs) has
// run kWarmUpSeconds in this process. Natively there is nothing to wait for.
#ifdef __EMSCRIPTEN__
inline constexpr double kWarmUpSeconds = 0.05;
#else
inline constexpr double kWarmUpSeconds = 0.0;
#endif
void warm_up(const std::string& family, const std::function<void()>& run);

inline i64 numel(const Shape& shape) { return checked_numel(shape); }
// The product of dims [from, to).
i64 prod(const Shape& shape, std::size_t from, std::size_t to);
inline bool spatial_rank(std::size_t rank) { return rank == 4 || rank == 5; }
// XNNPACK takes geometry as uint32_t; the sizes were checked against the shapes.
inline std::uint32_t u32(i64 v) { return static_cast<std::uint32_t>(v); }

// Channels-last storage of a logical [N, C, S...] tensor is [N, S..., C].
Shape physical(const Shape& logical, bool channels_last);
// Where logical axis `axis` of a rank-`rank` tensor is in that storage.
std::size_t physical_axis(std::size_t axis, std::size_t rank, bool channels_last);
// Whether channels-last and plain storage of this shape are the same bytes.
inline bool layouts_agree(const Shape& s) { return !spatial_rank(s.size()) || s[1] == 1 || prod(s, 2, s.size()) == 1; }

// A dim in [-rank, rank) as its index (kOutOfRange naming `where` otherwise).
i64 normalize_dim(i64 dim, std::size_t rank, const std::string& where);

// "relu_" for "aten::relu_" and for torch.export's "aten.relu_.default"; a
// view's copying form that has no lowering of its own (select_copy,
// view_as_real_copy: what functionalized graphs write) as its view ("select"),
// which computes the same values (lower/table.cpp).
std::string base_op(const std::string& op);

}  // namespace detail
using namespace detail;

}  // namespace tracegraph::xnnpack
