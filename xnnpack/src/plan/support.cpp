// What lowerings and the runtime share (support.h): XNNPACK's start, buffers,
// measured choices, timing and the channels-last storage rules.
#include "plan/support.h"

namespace tracegraph::xnnpack::detail {

void init_xnnpack() {
  // The CPU first: a cap (TRACEGRAPH_MAX_CPU_ISA) must reach cpuinfo's table
  // before XNNPACK's hardware config reads it.
  cpu::features();
  static std::once_flag once;
  static xnn_status status = xnn_status_success;
  std::call_once(once, [] { status = xnn_initialize(nullptr); });
  if (status != xnn_status_success)
    fail(ErrorCode::kUnsupported, "xnnpack: xnn_initialize failed (status " + std::to_string(status) +
                                      "): this CPU lacks what XNNPACK needs");
}

XnnOp::~XnnOp() {
  if (op) xnn_delete_operator(op);
}

AlignedFloats aligned_floats(std::size_t bytes) {
  return AlignedFloats(static_cast<float*>(::operator new[](bytes + kTailBytes, std::align_val_t(kAlignment))));
}

std::optional<i64> MeasuredChoices::find(const std::vector<i64>& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = choices_.find(key);
  return it == choices_.end() ? std::nullopt : std::optional<i64>(it->second);
}

void MeasuredChoices::put(const std::vector<i64>& key, i64 choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  choices_[key] = choice;
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void warm_up(const std::string& family, const std::function<void()>& run) {
  static std::mutex mutex;
  static std::map<std::string, double> spent;
  std::lock_guard<std::mutex> lock(mutex);
  double& seconds = spent[family];
  for (int calls = 0; seconds < kWarmUpSeconds && calls < 1000; ++calls) seconds += seconds_of(run);
}

i64 prod(const Shape& shape, std::size_t from, std::size_t to) {
  i64 p = 1;
  for (std::size_t i = from; i < to && i < shape.size(); ++i) p *= shape[i];
  return p;
}

Shape physical(const Shape& logical, bool channels_last) {
  if (!channels_last) return logical;
  Shape p{logical[0]};
  for (std::size_t i = 2; i < logical.size(); ++i) p.push_back(logical[i]);
  p.push_back(logical[1]);
  return p;
}

std::size_t physical_axis(std::size_t axis, std::size_t rank, bool channels_last) {
  if (!channels_last || axis == 0) return axis;
  return axis == 1 ? rank - 1 : axis - 1;
}

i64 normalize_dim(i64 dim, std::size_t rank, const std::string& where) {
  const i64 r = static_cast<i64>(rank);
  if (dim < -std::max<i64>(r, 1) || dim >= std::max<i64>(r, 1)) fail(ErrorCode::kOutOfRange, where + ": dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(r));
  if (r == 0) return 0;  // a 0-d tensor: dim 0 and -1 both name it
  return dim < 0 ? dim + r : dim;
}

}  // namespace tracegraph::xnnpack::detail
