// The planning context's layouts: a tensor in torch's or channels-last order
// (a transpose step, or a copy made once for a constant), and XNNPACK's tail on constants.
#include "plan/context.h"

namespace tracegraph::xnnpack {

int Context::as_layout(int s, bool channels_last) {
  const Slot& slot = slots_[static_cast<std::size_t>(s)];
  const bool want = channels_last && spatial_rank(slot.shape.size());
  if (slot.channels_last == want) return s;
  if (layouts_agree(slot.shape)) return alias(s, slot.shape, want);
  const auto key = std::make_pair(s, want);
  if (auto it = layout_memo_.find(key); it != layout_memo_.end()) return it->second;
  const std::size_t rank = slot.shape.size();
  std::vector<std::size_t> in_shape, perm(rank);
  for (i64 d : physical(slot.shape, slot.channels_last)) in_shape.push_back(static_cast<std::size_t>(d));
  if (want) {  // [N, C, S...] -> [N, S..., C]
    perm[0] = 0;
    for (std::size_t i = 1; i + 1 < rank; ++i) perm[i] = i + 1;
    perm[rank - 1] = 1;
  } else {  // [N, S..., C] -> [N, C, S...]
    perm[0] = 0;
    perm[1] = rank - 1;
    for (std::size_t i = 2; i < rank; ++i) perm[i] = i - 1;
  }
  const int out = transposed(s, in_shape, perm, slot.shape, want);
  layout_memo_[key] = out;
  return out;
}

int Context::transposed(int s, const std::vector<std::size_t>& full_shape, const std::vector<std::size_t>& full_perm, const Shape& shape,
               bool channels_last) {
  const Slot& slot = slots_[static_cast<std::size_t>(s)];
  // The same move over fewer dims: size-1 dims dropped, and input dims that
  // stay next to each other merged (a 3D Swin transformer's window partition
  // permutes 8 dims, of which 5 or 6 are left). None moved: the same bytes.
  std::vector<std::size_t> in_shape, perm;
  simplify_permutation(full_shape, full_perm, in_shape, perm);
  if (std::is_sorted(perm.begin(), perm.end())) return alias(s, shape, channels_last);
  const std::size_t rank = in_shape.size();
  // XNNPACK's transpose takes up to XNN_MAX_TENSOR_DIMS (6) dims; past
  // that, a strided copy of ours.
  const bool portable = rank > XNN_MAX_TENSOR_DIMS;
  std::vector<i64> sizes(rank), strides(rank), in_strides(rank, 1);
  for (std::size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * static_cast<i64>(in_shape[d]);
  for (std::size_t d = 0; d < rank; ++d) sizes[d] = static_cast<i64>(in_shape[perm[d]]), strides[d] = in_strides[perm[d]];
  if (slot.constant) {
    auto& copy = constant_copies_[{slot.constant, channels_last, shape}];
    if (copy.empty()) {
      copy.resize(static_cast<std::size_t>(numel(shape)) + kTailBytes / sizeof(float));
      if (portable) portable::as_strided(slot.constant, copy.data(), sizes, strides, 0);
      else check(xnn_run_transpose_nd_x32(slot.constant, copy.data(), rank, in_shape.data(), perm.data(), 0, nullptr), "transposing a constant");
      padded_.insert(copy.data());
    }
    Slot c;
    c.kind = Kind::kTensor;
    c.shape = shape;
    c.channels_last = channels_last;
    c.constant = copy.data();
    return new_slot(std::move(c));
  }
  const int out = new_tensor(shape, channels_last);
  if (portable) {
    Step& step = add_step({s}, {out});
    step.layout_change = true;
    step.run = [this, s, out, sizes, strides] { portable::as_strided(ptr(s), ptr(out), sizes, strides, 0); };
    return out;
  }
  plan_ops_.emplace_back();
  XnnOp& op = plan_ops_.back();
  check(xnn_create_transpose_nd_x32(0, &op.op), "creating a transpose");
  const xnn_status reshaped = xnn_reshape_transpose_nd_x32(op.op, rank, in_shape.data(), perm.data(), pool());
  if (reshaped != xnn_status_success) op.op = nullptr;  // XNNPACK deletes a transpose whose reshape fails
  check(reshaped, "reshaping a transpose");
  xnn_operator_t o = op.op;
  Step& step = add_step({s}, {out});
  step.setup = [this, o, s, out] { check(xnn_setup_transpose_nd_x32(o, ptr(s), ptr(out)), "setting up a transpose"); };
  step.xnnpack = true;
  step.layout_change = true;
  step.run = [this, o] { check(xnn_run_operator(o, pool()), "running a transpose"); };
  return out;
}

void Context::simplify_permutation(const std::vector<std::size_t>& shape, const std::vector<std::size_t>& perm,
                                 std::vector<std::size_t>& out_shape, std::vector<std::size_t>& out_perm) {
  const std::size_t rank = shape.size();
  // The kept dims in input order, renumbered.
  std::vector<std::size_t> renumber(rank, rank);
  std::vector<std::size_t> kept_shape;
  for (std::size_t d = 0; d < rank; ++d)
    if (shape[d] != 1) renumber[d] = kept_shape.size(), kept_shape.push_back(shape[d]);
  std::vector<std::size_t> kept_perm;
  for (std::size_t p : perm)
    if (renumber[p] < rank) kept_perm.push_back(renumber[p]);
  // Runs of consecutive input dims in the output order.
  std::vector<std::size_t> group_of(kept_shape.size());  // input dim -> its run
  std::vector<std::size_t> first_of_run;                  // the runs in output order, by first input dim
  for (std::size_t k = 0; k < kept_perm.size(); ++k)
    if (k == 0 || kept_perm[k] != kept_perm[k - 1] + 1) first_of_run.push_back(kept_perm[k]);
  std::vector<std::size_t> starts(first_of_run);
  std::sort(starts.begin(), starts.end());  // the runs in input order
  out_shape.assign(starts.size(), 1);
  for (std::size_t r = 0; r < starts.size(); ++r) {
    const std::size_t end = r + 1 < starts.size() ? starts[r + 1] : kept_shape.size();
    for (std::size_t d = starts[r]; d < end; ++d) out_shape[r] *= kept_shape[d], group_of[d] = r;
  }
  out_perm.clear();
  for (std::size_t first : first_of_run) out_perm.push_back(group_of[first]);
}

int Context::padded(int s) {
  const Slot& slot = slots_[static_cast<std::size_t>(s)];
  if (!slot.constant || padded_.count(slot.constant)) return s;
  auto& copy = constant_copies_[{slot.constant, slot.channels_last, slot.shape}];
  if (copy.empty()) {
    const std::size_t n = static_cast<std::size_t>(numel(slot.shape));
    copy.assign(n + kTailBytes / sizeof(float), 0.0f);
    std::memcpy(copy.data(), slot.constant, n * sizeof(float));
    padded_.insert(copy.data());
  }
  Slot c = slot;
  c.constant = copy.data();
  c.root = -1;
  return new_slot(std::move(c));
}

}  // namespace tracegraph::xnnpack
