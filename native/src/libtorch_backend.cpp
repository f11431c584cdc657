#include "tracegraph/native/libtorch_backend.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/StreamGuard.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/script.h>

#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "tracegraph/native/aten_interop.h"
#include "tracegraph/op_table.h"
#include "tracegraph/shape_rules.h"
#include "tracegraph/transforms/transforms.h"

namespace tracegraph::native {
namespace {

namespace tj = torch::jit;

// An attribute as the IValue a schema argument of type `type` takes.
std::optional<c10::IValue> to_ivalue(const AttributeValue& a, const c10::TypePtr& type_in) {
  c10::TypePtr type = type_in;
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  const auto kind = type->kind();
  if (kind == c10::TypeKind::DeviceObjType) {
    if (auto* s = std::get_if<std::string>(&a)) return c10::IValue(c10::Device(*s));
    return std::nullopt;
  }
  if (kind == c10::TypeKind::TensorType) {
    // A number where the schema takes a tensor (torch.export writes x * 2.0
    // as aten.mul.Tensor(x, 2.0)): a wrapped number, as Python's binding makes
    // it, so that type promotion treats it as a scalar (float32 * 2.0 stays float32).
    at::Tensor t;
    if (auto* i = std::get_if<std::int64_t>(&a)) t = at::scalar_tensor(*i, at::kLong);
    else if (auto* d = std::get_if<double>(&a)) t = at::scalar_tensor(*d, at::kDouble);
    else if (auto* b = std::get_if<bool>(&a)) t = at::scalar_tensor(*b, at::kBool);
    else if (auto* tensor = std::get_if<Tensor>(&a)) return c10::IValue(to_aten(*tensor));
    else return std::nullopt;
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    return c10::IValue(t);
  }
  if (auto* i = std::get_if<std::int64_t>(&a)) {
    if (kind == c10::TypeKind::FloatType) return c10::IValue(static_cast<double>(*i));
    if (kind == c10::TypeKind::BoolType) return c10::IValue(*i != 0);
    if (auto list = type->cast<c10::ListType>()) {
      return c10::IValue(c10::List<int64_t>({*i}));  // int[N] written as one int
    }
    return c10::IValue(*i);
  }
  if (auto* d = std::get_if<double>(&a)) return c10::IValue(*d);
  if (auto* b = std::get_if<bool>(&a)) return c10::IValue(*b);
  if (auto* s = std::get_if<std::string>(&a)) return c10::IValue(*s);
  if (auto* v = std::get_if<std::vector<std::int64_t>>(&a)) {
    if (auto list = type->cast<c10::ListType>(); list && list->getElementType()->kind() == c10::TypeKind::FloatType) {
      return c10::IValue(c10::List<double>(std::vector<double>(v->begin(), v->end())));
    }
    return c10::IValue(c10::List<int64_t>(*v));
  }
  if (auto* v = std::get_if<std::vector<double>>(&a)) return c10::IValue(c10::List<double>(*v));
  if (auto* v = std::get_if<std::vector<bool>>(&a)) {
    c10::List<bool> l;
    for (bool x : *v) l.push_back(x);
    return c10::IValue(l);
  }
  if (auto* v = std::get_if<std::vector<std::string>>(&a)) {
    c10::List<std::string> l;
    for (const auto& x : *v) l.push_back(x);
    return c10::IValue(l);
  }
  if (auto* t = std::get_if<Tensor>(&a)) return c10::IValue(to_aten(*t));
  return std::nullopt;
}

// A run-time value as a schema argument of `type` wants it: a 0-d tensor where
// a number is expected becomes that number (TorchScript's scalars travel as
// 0-d tensors when they are constants of the graph), and a number where a
// tensor is expected a wrapped number.
c10::IValue coerce(c10::IValue v, const c10::TypePtr& type_in) {
  c10::TypePtr type = type_in;
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  const auto kind = type->kind();
  if (!v.isTensor()) {
    // A number computed in the graph (torch.export's item(), mul.Tensor(x, it))
    // where a tensor is expected: a wrapped number, as Python passes it, which
    // type promotion treats as a scalar (float32 * a double stays float32).
    if (kind == c10::TypeKind::TensorType && (v.isDouble() || v.isInt() || v.isBool())) {
      at::Tensor t = at::scalar_tensor(v.toScalar(), at::TensorOptions().dtype(v.isDouble() ? at::kDouble : v.isInt() ? at::kLong : at::kBool));
      t.unsafeGetTensorImpl()->set_wrapped_number(true);
      return c10::IValue(t);
    }
    return v;
  }
  const at::Tensor& t = v.toTensor();
  if (kind == c10::TypeKind::IntType || kind == c10::TypeKind::SymIntType) return c10::IValue(t.item<int64_t>());
  if (kind == c10::TypeKind::FloatType) return c10::IValue(t.item<double>());
  if (kind == c10::TypeKind::BoolType) return c10::IValue(t.item<bool>());
  if (auto list = type->cast<c10::ListType>(); list && list->getElementType()->kind() == c10::TypeKind::IntType) {
    // A folded shape: a 1-D int64 constant where an int[] is expected.
    const at::Tensor flat = t.to(at::kCPU).to(at::kLong).reshape({-1}).contiguous();
    return c10::IValue(c10::List<int64_t>(std::vector<int64_t>(flat.data_ptr<int64_t>(), flat.data_ptr<int64_t>() + flat.numel())));
  }
  if (kind == c10::TypeKind::NumberType) {
    return at::isFloatingType(t.scalar_type()) ? c10::IValue(t.item<double>()) : c10::IValue(t.item<int64_t>());
  }
  return v;
}

// Constant folding's evaluator: one node on constant inputs, run on the CPU
// through the same planning as a whole graph.
class LibTorchEvaluator final : public ConstantEvaluator {
 public:
  std::optional<std::vector<Tensor>> evaluate(const Node& node, const std::vector<Tensor>& inputs) const override;
};

class LibTorchBackend final : public Backend {
 public:
  std::string name() const override { return "libtorch"; }
  const ConstantEvaluator* evaluator() const override { return &evaluator_; }

  std::vector<UnsupportedNode> unsupported(const Graph& graph) const override {
    std::vector<UnsupportedNode> out;
    for (NodeId id : graph.nodes()) {
      const Node& n = graph.node(id);
      if (n.op == "prim::ListConstruct") continue;
      Resolved r = resolve(n);
      if (!r.op) out.push_back({n.name, n.op, std::move(r.why)});
    }
    return out;
  }

  void prepare(const Graph& graph, const Device& device, const Stream* stream) override {
    check_device(device);
    steps_.clear();
    device_ = device;
    set_stream(stream);
    // One slot per live value.
    std::unordered_map<std::uint32_t, int> slot;
    for (ValueId v : graph.values()) slot.emplace(v.index, static_cast<int>(slot.size()));
    slots_.assign(slot.size(), c10::IValue());
    constants_.clear();
    is_constant_.assign(slots_.size(), false);
    for (ValueId c : graph.constants()) {
      at::Tensor t = to_aten(graph.value(c).data);
      constants_.emplace_back(slot.at(c.index), t);
      is_constant_[static_cast<std::size_t>(slot.at(c.index))] = true;
    }
    input_slots_.clear();
    for (ValueId v : graph.inputs()) input_slots_.push_back(slot.at(v.index));
    output_slots_.clear();
    for (ValueId v : graph.outputs()) output_slots_.push_back(slot.at(v.index));

    fail_if_unsupported(name(), unsupported(graph));
    std::vector<const Value*> value_of(slots_.size());
    for (ValueId v : graph.values()) value_of[static_cast<std::size_t>(slot.at(v.index))] = &graph.value(v);
    for (NodeId id : graph.nodes()) steps_.push_back(plan(graph, graph.node(id), slot, value_of));
    fuse_residual_adds(value_of);
    plan_packed_weights();

    // Free each intermediate after its last reader; inputs, constants and outputs are kept.
    std::vector<int> last_use(slots_.size(), -1);
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      for (int s : read_slots(steps_[i])) last_use[static_cast<std::size_t>(s)] = static_cast<int>(i);
    }
    std::vector<bool> keep = is_constant_;
    for (int s : input_slots_) keep[static_cast<std::size_t>(s)] = true;
    for (int s : output_slots_) keep[static_cast<std::size_t>(s)] = true;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      if (!keep[s] && last_use[s] >= 0) steps_[static_cast<std::size_t>(last_use[s])].free_after.push_back(static_cast<int>(s));
    }
    // A residual operand nothing reads afterwards takes the sum in place,
    // unless it is the convolution's own input (oneDNN would read what it writes).
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      if (!steps_[i].onednn || !steps_[i].onednn->residual) continue;
      const int r = *steps_[i].onednn->residual;
      steps_[i].onednn->residual_in_place = !keep[static_cast<std::size_t>(r)] &&
                                            last_use[static_cast<std::size_t>(r)] == static_cast<int>(i) && r != steps_[i].args[0].slots[0];
    }
    move(device, stream);
  }

  void move(const Device& device, const Stream* stream) override {
    check_device(device);
    device_ = device;
    set_stream(stream);
    const c10::Device target = to_aten_device(device_);
    translate_torch_errors(ErrorCode::kUnsupported, "moving the weights to " + device_.str(), [&] {
      for (auto& [s, t] : constants_) {
        if (t.is_mkldnn()) t = t.to_dense();  // packed for oneDNN on the CPU: torch's layout again first
        t = t.to(target);
        // oneDNN convolutions' weights, reordered once here into the blocked
        // layout oneDNN picks for the input's shape (as to_mkldnn does).
        if (device_.type == DeviceType::kCPU) {
          if (auto packing = packed_weights_.find(s); packing != packed_weights_.end()) t = pack_weight(t, packing->second);
        }
        slots_[static_cast<std::size_t>(s)] = t;
      }
    });
  }

  std::vector<LibTorchStep> plan_steps() const {
    std::vector<LibTorchStep> out;
    for (const Step& step : steps_) {
      LibTorchStep s;
      s.nodes = step.nodes;
      s.kernel = step.list_construct ? "prim::ListConstruct" : step.op_name;
      if (step.onednn) {
        const OneDnnConv& conv = *step.onednn;
        s.kernel = !conv.residual ? "mkldnn::_convolution_pointwise"
                   : conv.residual_in_place ? "mkldnn::_convolution_pointwise_.binary"
                                            : "mkldnn::_convolution_pointwise.binary";
        s.fused_activation = conv.unary;
        const c10::IValue& w = slots_[static_cast<std::size_t>(step.args[1].slots[0])];
        s.packed_weight = w.isTensor() && w.toTensor().is_mkldnn();
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) override {
    std::vector<at::Tensor> in;
    in.reserve(inputs.size());
    for (const Tensor& t : inputs) in.push_back(to_aten(t));
    std::vector<Tensor> out;
    for (const at::Tensor& t : run_aten(in)) out.push_back(from_aten(t));
    return out;
  }

 private:
  std::vector<at::Tensor> run_aten(const std::vector<at::Tensor>& inputs) {
    c10::InferenceMode inference;
    std::optional<c10::StreamGuard> stream_guard;
    if (stream_) stream_guard.emplace(*stream_);
    const c10::Device target = to_aten_device(device_);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const at::Tensor& t = inputs[i];
      slots_[static_cast<std::size_t>(input_slots_[i])] = t.device() == target ? t : t.to(target);
    }
    tj::Stack stack;
    for (Step& step : steps_) {
      stack.clear();
      bool fused_applied = false;
      translate_torch_errors(ErrorCode::kInvalidArgument, step.where, [&] {
        for (const Arg& a : step.args) push_arg(a, stack);
        if (step.layout == Layout::kDense) make_dense(stack);
        if (step.list_construct) {
          stack = {make_list(stack)};
        } else if (step.onednn) {
          fused_applied = run_onednn(step, stack);
        } else {
          step.operation(stack);
        }
      });
      if (step.unpack_list) {
        auto list = stack.at(0).toListRef();
        for (std::size_t k = 0; k < step.outputs.size() && k < list.size(); ++k) slots_[static_cast<std::size_t>(step.outputs[k])] = list[k];
      } else {
        for (std::size_t k = 0; k < step.outputs.size(); ++k) slots_[static_cast<std::size_t>(step.outputs[k])] = std::move(stack.at(k));
      }
      if (!step.fused.empty() && !fused_applied) apply_fused(step, slots_[static_cast<std::size_t>(step.outputs[0])]);
      for (int s : step.free_after) slots_[static_cast<std::size_t>(s)] = c10::IValue();
    }
    std::vector<at::Tensor> out;
    for (int s : output_slots_) {
      const c10::IValue& v = slots_[static_cast<std::size_t>(s)];
      if (v.isTensor()) out.push_back(v.toTensor().contiguous());  // channels-last inside, NCHW out
      else if (v.isInt()) out.push_back(at::scalar_tensor(v.toInt(), at::kLong));
      else if (v.isDouble()) out.push_back(at::scalar_tensor(v.toDouble(), at::kDouble));
      else if (v.isBool()) out.push_back(at::scalar_tensor(v.toBool(), at::kBool));
      else if (std::optional<std::vector<int64_t>> ints = int_list(v)) out.push_back(at::tensor(*ints, at::kLong));  // as XNNPACK returns one
      else fail(ErrorCode::kUnsupported, "a graph output is a " + v.tagKind() + ", not a tensor");
    }
    // Hold nothing of this run (inputs are the caller's, outputs now too);
    // constants stay for the next run.
    for (int s : input_slots_) slots_[static_cast<std::size_t>(s)] = c10::IValue();
    for (int s : output_slots_) {
      if (!is_constant_[static_cast<std::size_t>(s)]) slots_[static_cast<std::size_t>(s)] = c10::IValue();
    }
    return out;
  }

  // A list of ints (sizes a graph computes: prim::ListConstruct), whether
  // LibTorch holds it typed or generic; nullopt for anything else.
  static std::optional<std::vector<int64_t>> int_list(const c10::IValue& v) {
    if (v.isIntList()) return v.toIntVector();
    if (!v.isList()) return std::nullopt;
    std::vector<int64_t> out;
    for (const c10::IValue& e : v.toListRef()) {
      if (!e.isInt()) return std::nullopt;
      out.push_back(e.toInt());
    }
    return out;
  }

  enum class Layout : std::uint8_t { kAny, kDense, kChannelsLast };
  // A float32 CPU convolution run by oneDNN (mkldnn::_convolution_pointwise):
  // its arguments' places, and what it does in the same pass over its output.
  struct OneDnnConv {
    std::size_t spatial = 2;         // 2 or 3
    std::size_t groups_at = 6;       // the groups argument (8 in aten::_convolution)
    std::vector<int64_t> input_size; // the input's static shape: the weight's layout is chosen for it
    std::optional<int> residual;     // a residual add's other operand (its slot): the sum is oneDNN's post-op
    bool residual_in_place = false;  // nothing reads that operand after: the sum goes into its tensor
    std::string unary;               // the fused activation as oneDNN's post-op; empty: applied after
    c10::IValue post_op, post_op_scalars;  // the same as the op's arguments, made once
  };
  // The arguments a constant weight is reordered for, once, at move().
  struct Packing {
    std::size_t spatial = 2;
    std::vector<int64_t> padding, stride, dilation, input_size;
    int64_t groups = 1;
    bool same_arguments(const Packing& o) const {
      return spatial == o.spatial && padding == o.padding && stride == o.stride && dilation == o.dilation && groups == o.groups;
    }
  };
  struct Arg {
    enum class Kind { kConstant, kValue, kValueList } kind = Kind::kConstant;
    c10::IValue constant;
    std::vector<int> slots;
    c10::TypePtr type;
    // A Tensor?[] (aten::index's indices): its elements are optional, and
    // where `present` is false the element is None (no slot).
    bool optional_elements = false;
    std::vector<bool> present;
  };
  struct Step {
    tj::Operation operation = nullptr;
    bool list_construct = false;
    bool unpack_list = false;
    std::vector<Arg> args;
    std::vector<int> outputs;
    std::vector<int> free_after;
    std::string where;
    std::vector<std::string> nodes;  // the graph nodes it runs (a convolution and a residual add fused into it: two)
    std::string fused;  // activation_fusion's activation, applied in place to the output
    std::optional<double> fused_min, fused_max;
    // The memory layout its tensor arguments need (on the CPU): oneDNN's
    // convolutions take channels-last inputs, ops that compute the same in any
    // layout take what comes, every other op gets contiguous (NCHW) tensors.
    Layout layout = Layout::kDense;
    std::string op_name;  // the kernel's schema name and overload: "aten::add.Tensor"
    std::optional<OneDnnConv> onednn;
  };

  void check_device(const Device& device) const override {
    if (device.type == DeviceType::kCUDA && !cuda_available()) {
      fail(ErrorCode::kUnsupported, "device " + device.str() + ": this LibTorch has no CUDA, or sees no CUDA device");
    }
  }

  void set_stream(const Stream* stream) {
    stream_.reset();
    if (stream) stream_ = c10::Stream(c10::Stream::UNSAFE, to_aten_device(stream->device), stream->id);
  }

  void push_arg(const Arg& a, tj::Stack& stack) const {
    switch (a.kind) {
      case Arg::Kind::kConstant: stack.push_back(a.constant); break;
      case Arg::Kind::kValue: stack.push_back(coerce(slots_[static_cast<std::size_t>(a.slots[0])], a.type)); break;
      case Arg::Kind::kValueList: {
        if (a.optional_elements) {
          c10::List<std::optional<at::Tensor>> list;
          std::size_t next = 0;
          const std::size_t n = a.present.empty() ? a.slots.size() : a.present.size();
          for (std::size_t k = 0; k < n; ++k) {
            if (!a.present.empty() && !a.present[k]) list.push_back(std::nullopt);
            else list.push_back(slots_[static_cast<std::size_t>(a.slots[next++])].toTensor());
          }
          stack.push_back(c10::IValue(list));
          break;
        }
        c10::List<at::Tensor> list;
        for (int s : a.slots) list.push_back(slots_[static_cast<std::size_t>(s)].toTensor());
        stack.push_back(c10::IValue(list));
        break;
      }
    }
  }

  // LibTorch's oneDNN convolution with fused post-ops (what inductor's CPU
  // path calls); missing from a LibTorch without oneDNN.
  struct OneDnnOps {
    bool available = false;
    std::optional<tj::Operation> conv, conv_add, conv_add_in_place;
  };
  static OneDnnOps& onednn_ops() {
    static OneDnnOps ops = [] {
      OneDnnOps o;
      const auto find = [](const char* name, const char* overload) { return tj::findOperatorFor(c10::OperatorName(name, overload)); };
      const auto conv = find("mkldnn::_convolution_pointwise", "");
      const auto conv_add = find("mkldnn::_convolution_pointwise", "binary");
      const auto in_place = find("mkldnn::_convolution_pointwise_", "binary");
      if (!at::hasMKLDNN() || !conv || !conv_add || !in_place) return o;
      o.available = true;
      o.conv = conv->getOperation();
      o.conv_add = conv_add->getOperation();
      o.conv_add_in_place = in_place->getOperation();
      return o;
    }();
    return ops;
  }

  // A float32 2D/3D convolution on the CPU runs through oneDNN: on
  // channels-last activations, with its weight reordered once into oneDNN's
  // blocked layout (move()), its activation and a residual add after it
  // (fuse_residual_adds) done in the same pass. Same arguments, same result
  // up to float rounding; what does not fit at run time takes the op's own kernel.
  void maybe_use_onednn(Step& step, const Node& n, const c10::FunctionSchema& schema, const std::vector<const Value*>& value_of) {
    if (device_.type != DeviceType::kCPU || !onednn_ops().available) return;
    const std::string& name = schema.name();
    const bool plain = (name == "aten::conv2d" || name == "aten::conv3d") && schema.overload_name().empty();
    const bool general = (name == "aten::_convolution" || name == "aten::convolution") &&
                         !n.attributes.get_bool("transposed").value_or(true);
    if (!plain && !general) return;
    OneDnnConv conv;
    conv.groups_at = general ? 8 : 6;
    // The rank, hence 2D or 3D, from the op or, as everywhere else, the
    // weight's known shape [O, C / groups, kernel...] (an unbatched input has
    // one dim less; run_onednn() hands it to the op's own kernel).
    const auto value_arg = [&](std::size_t a) {
      const bool given = step.args.size() > a && step.args[a].kind == Arg::Kind::kValue;
      return given ? value_of[static_cast<std::size_t>(step.args[a].slots[0])] : nullptr;
    };
    const Value *input = value_arg(0), *weight = value_arg(1);
    const std::size_t weight_rank = weight && weight->shape ? weight->shape->size() : 0;
    conv.spatial = named_spatial_rank(name).value_or(weight_rank >= 2 ? weight_rank - 2 : 0);
    if (conv.spatial != 2 && conv.spatial != 3) return;
    if (step.args.size() <= conv.groups_at || step.args[0].kind != Arg::Kind::kValue || step.args[1].kind != Arg::Kind::kValue) return;
    for (std::size_t a : {std::size_t{3}, std::size_t{4}, std::size_t{5}, conv.groups_at}) {
      if (step.args[a].kind != Arg::Kind::kConstant) return;  // computed at run time: the op's own kernel
    }
    for (std::size_t a : {3, 4, 5}) {
      const c10::IValue& v = step.args[a].constant;
      if (!v.isIntList() || v.toIntVector().size() != conv.spatial) return;
    }
    if (!step.args[conv.groups_at].constant.isInt()) return;
    if (input && input->shape && input->dtype == DType::kFloat32) {
      for (const Dim& d : *input->shape) {
        if (!d.is_static()) {
          conv.input_size.clear();
          break;
        }
        conv.input_size.push_back(d.size);
      }
    }
    step.layout = Layout::kChannelsLast;
    step.onednn = std::move(conv);
  }

  // The activation oneDNN applies as the convolution's post-op: after a
  // residual sum it takes relu only; the rest is applied after the op. tanh
  // stays apart too: as a post-op it measured up to 1.15x slower than
  // LibTorch's own tanh_ after the convolution (the others 0.83-1.0x), and
  // so does silu in 3D (swish as a post-op 0.96-1.10x silu_ after, over five
  // 3D UNet shapes of 1 to 24 channels; in 2D 0.90-0.98x).
  static void set_onednn_unary(Step& step) {
    OneDnnConv& conv = *step.onednn;
    const bool relu = step.fused == "relu" || (step.fused == "clip" && step.fused_min == 0.0 && !step.fused_max);
    conv.unary = relu ? "relu" : "";
    c10::List<std::optional<at::Scalar>> scalars;
    if (!conv.residual) {
      if (step.fused == "clip" && step.fused_min && step.fused_max) {
        conv.unary = "hardtanh";
        scalars.push_back(at::Scalar(*step.fused_min));
        scalars.push_back(at::Scalar(*step.fused_max));
      } else if (step.fused == "sigmoid" || step.fused == "hardswish") {
        conv.unary = step.fused;
      } else if (step.fused == "silu" && conv.spatial == 2) {
        conv.unary = "swish";
      }
    }
    // The plain op takes "none"; after a sum, no activation is None.
    conv.post_op = !conv.unary.empty() ? c10::IValue(conv.unary) : conv.residual ? c10::IValue() : c10::IValue("none");
    conv.post_op_scalars = c10::IValue(scalars);
  }

  static std::vector<int64_t> conv_output_sizes(const at::Tensor& input, const at::Tensor& weight, const tj::Stack& stack) {
    const std::vector<int64_t> stride = stack[3].toIntVector(), padding = stack[4].toIntVector(), dilation = stack[5].toIntVector();
    std::vector<int64_t> out = {input.size(0), weight.size(0)};
    for (std::size_t i = 0; i < stride.size(); ++i) {
      const auto d = static_cast<int64_t>(i) + 2;
      const auto length = shape_rules::window_output(input.size(d), weight.size(d), stride[i], padding[i], dilation[i]);
      if (!length) return {};  // the op's own checks name what is wrong
      out.push_back(*length);
    }
    return out;
  }

  // One oneDNN convolution step; true when its fused activation was applied
  // in the op (else run() applies it after).
  bool run_onednn(Step& step, tj::Stack& stack) const {
    const OneDnnConv& conv = *step.onednn;
    const at::Tensor input = stack[0].toTensor();
    const at::Tensor weight = stack[1].toTensor();
    const auto rank = static_cast<int64_t>(conv.spatial + 2);
    const at::Tensor* residual = conv.residual ? &slots_[static_cast<std::size_t>(*conv.residual)].toTensor() : nullptr;
    bool fits = input.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat && input.is_cpu() && weight.is_cpu() &&
                input.dim() == rank && weight.dim() == rank;
    if (fits && residual) {
      fits = residual->scalar_type() == at::kFloat && residual->is_cpu() &&
             residual->sizes() == c10::IntArrayRef(conv_output_sizes(input, weight, stack));
    }
    if (!fits) {
      if (weight.is_mkldnn()) stack[1] = weight.to_dense();  // the op's own kernel wants torch's layout
      step.operation(stack);
      if (residual) stack[0] = at::add(stack[0].toTensor(), *residual);
      return false;
    }
    const auto format = conv.spatial == 2 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::ChannelsLast3d;
    const c10::IValue &unary = conv.post_op, &scalars = conv.post_op_scalars;
    const c10::IValue& bias = stack[2];
    const c10::IValue &stride = stack[3], &padding = stack[4], &dilation = stack[5], &groups = stack[conv.groups_at];
    const at::Tensor x = input.contiguous(format);
    tj::Stack call;
    if (!residual) {
      call = {x, weight, bias, padding, stride, dilation, groups, unary, scalars, c10::IValue()};
      (*onednn_ops().conv)(call);
    } else if (conv.residual_in_place && residual->is_contiguous(format) && residual->use_count() == 1 &&
               residual->storage().use_count() == 1) {
      // The operand's tensor is this slot's alone and read by nothing after: sum into it.
      call = {*residual, x, weight, bias, padding, stride, dilation, groups, "add", c10::IValue(), unary, scalars, c10::IValue()};
      (*onednn_ops().conv_add_in_place)(call);
    } else {
      call = {x, *residual, weight, bias, padding, stride, dilation, groups, "add", c10::IValue(), unary, scalars, c10::IValue()};
      (*onednn_ops().conv_add)(call);
    }
    stack.clear();
    stack.push_back(std::move(call.back()));
    return !conv.unary.empty();
  }

  // The slots a step reads: its arguments' and a fused residual operand.
  static std::vector<int> read_slots(const Step& step) {
    std::vector<int> out;
    for (const Arg& a : step.args) out.insert(out.end(), a.slots.begin(), a.slots.end());
    if (step.onednn && step.onednn->residual) out.push_back(*step.onednn->residual);
    return out;
  }

  static bool same_static_float_shape(const Value* a, const Value* b) {
    if (!a || !b || a->dtype != DType::kFloat32 || b->dtype != DType::kFloat32 || !a->shape || !b->shape) return false;
    for (const Dim& d : *a->shape) {
      if (!d.is_static()) return false;
    }
    return *a->shape == *b->shape;
  }

  // A residual add (alpha 1) of a oneDNN convolution's output, read by
  // nothing else, and another float tensor of the same static shape becomes
  // that convolution's sum post-op, run where the add was (both operands are
  // computed by then); the add's activation comes after the sum.
  void fuse_residual_adds(const std::vector<const Value*>& value_of) {
    std::vector<int> readers(slots_.size(), 0), producer(slots_.size(), -1);
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      for (int s : read_slots(steps_[i])) ++readers[static_cast<std::size_t>(s)];
      for (int o : steps_[i].outputs) producer[static_cast<std::size_t>(o)] = static_cast<int>(i);
    }
    for (int s : output_slots_) ++readers[static_cast<std::size_t>(s)];  // the caller reads a graph output
    std::vector<bool> merged_away(steps_.size(), false);
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      Step& add = steps_[i];
      if (add.op_name != "aten::add.Tensor" || add.outputs.size() != 1 || add.args.size() != 3 ||
          add.args[0].kind != Arg::Kind::kValue || add.args[1].kind != Arg::Kind::kValue || add.args[2].kind != Arg::Kind::kConstant) {
        continue;
      }
      const c10::IValue& alpha = add.args[2].constant;
      if (!(alpha.isInt() && alpha.toInt() == 1) && !(alpha.isDouble() && alpha.toDouble() == 1.0)) continue;
      for (std::size_t side = 0; side < 2; ++side) {
        const int x = add.args[side].slots[0], other = add.args[1 - side].slots[0];
        const int c = producer[static_cast<std::size_t>(x)];
        if (x == other || c < 0 || merged_away[static_cast<std::size_t>(c)] || readers[static_cast<std::size_t>(x)] != 1) continue;
        Step& conv = steps_[static_cast<std::size_t>(c)];
        if (!conv.onednn || conv.onednn->residual || !conv.fused.empty() || conv.outputs.size() != 1) continue;
        if (!same_static_float_shape(value_of[static_cast<std::size_t>(x)], value_of[static_cast<std::size_t>(other)])) continue;
        Step merged = std::move(conv);
        merged.where += " with the residual add " + add.where;
        merged.outputs = add.outputs;
        merged.nodes.insert(merged.nodes.end(), add.nodes.begin(), add.nodes.end());
        merged.fused = add.fused;
        merged.fused_min = add.fused_min;
        merged.fused_max = add.fused_max;
        merged.onednn->residual = other;
        add = std::move(merged);
        merged_away[static_cast<std::size_t>(c)] = true;
        break;
      }
    }
    std::vector<Step> kept;
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      if (!merged_away[i]) kept.push_back(std::move(steps_[i]));
    }
    steps_ = std::move(kept);
    for (Step& step : steps_) {
      if (step.onednn) set_onednn_unary(step);
    }
  }

  // Constant weights read only as oneDNN convolutions' weights, with the same
  // arguments, are reordered once at move(); any other reader (or a graph
  // output) keeps the weight in torch's layout.
  void plan_packed_weights() {
    packed_weights_.clear();
    std::map<int, std::optional<Packing>> seen;  // nullopt: not packed
    for (int s : output_slots_) seen[s] = std::nullopt;
    for (const Step& step : steps_) {
      for (std::size_t a = 0; a < step.args.size(); ++a) {
        for (int s : step.args[a].slots) {
          if (!is_constant_[static_cast<std::size_t>(s)]) continue;
          if (!step.onednn || a != 1) {
            seen[s] = std::nullopt;
            continue;
          }
          Packing p;
          p.spatial = step.onednn->spatial;
          p.stride = step.args[3].constant.toIntVector();
          p.padding = step.args[4].constant.toIntVector();
          p.dilation = step.args[5].constant.toIntVector();
          p.groups = step.args[step.onednn->groups_at].constant.toInt();
          p.input_size = step.onednn->input_size;
          auto [it, fresh] = seen.emplace(s, p);
          if (!fresh && it->second && !it->second->same_arguments(p)) it->second = std::nullopt;
        }
      }
      if (step.onednn && step.onednn->residual) seen[*step.onednn->residual] = std::nullopt;
    }
    for (const auto& [s, p] : seen) {
      if (p) packed_weights_.emplace(s, *p);
    }
  }

  // A float32 weight in oneDNN's blocked layout for its convolution (an
  // MKLDNN tensor); a weight oneDNN cannot reorder stays as it is, and the
  // op reorders it each run (or its own kernel runs).
  static at::Tensor pack_weight(const at::Tensor& weight, const Packing& p) {
    if (weight.scalar_type() != at::kFloat || weight.dim() != static_cast<int64_t>(p.spatial + 2)) return weight;
    std::optional<std::vector<int64_t>> input_size;
    if (p.input_size.size() == p.spatial + 2 && p.input_size[1] == weight.size(1) * p.groups) input_size = p.input_size;
    try {
      const at::Tensor w = weight.contiguous().to_mkldnn();
      const at::OptionalIntArrayRef size = input_size ? at::OptionalIntArrayRef(*input_size) : at::OptionalIntArrayRef();
      return p.spatial == 2 ? at::mkldnn_reorder_conv2d_weight(w, p.padding, p.stride, p.dilation, p.groups, size)
                            : at::mkldnn_reorder_conv3d_weight(w, p.padding, p.stride, p.dilation, p.groups, size);
    } catch (const c10::Error&) {
      return weight;
    }
  }

  // Ops that compute the same whatever the memory layout of their tensors
  // (ATen keeps a channels-last input channels-last through them), by
  // canonical name. The rest may depend on strides (view) or were never
  // measured in channels-last, and get contiguous tensors.
  static inline const std::set<std::string> kAnyLayout = {
      "relu", "sigmoid", "tanh", "hardswish", "hardsigmoid", "silu", "gelu", "elu", "leaky_relu", "clip", "add", "sub",
      "rsub", "mul", "div", "batch_norm", "max_pool", "avg_pool", "adaptive_avg_pool", "upsample", "cat", "dropout"};

  static void make_dense(tj::Stack& stack) {
    for (c10::IValue& v : stack) {
      if (v.isTensor()) {
        if (!v.toTensor().is_contiguous()) v = v.toTensor().contiguous();
      } else if (v.isTensorList()) {
        c10::List<at::Tensor> list = v.toTensorList();
        for (std::size_t i = 0; i < list.size(); ++i) {
          const at::Tensor t = list.get(i);
          if (!t.is_contiguous()) list.set(i, t.contiguous());
        }
      }
    }
  }

  // The activation a fused node carries, in place on its fresh output.
  static void apply_fused(const Step& step, c10::IValue& out) {
    at::Tensor t = out.toTensor();
    if (step.fused == "relu") t.relu_();
    else if (step.fused == "sigmoid") t.sigmoid_();
    else if (step.fused == "tanh") t.tanh_();
    else if (step.fused == "hardswish") at::hardswish_(t);
    else if (step.fused == "silu") at::silu_(t);
    else if (step.fused == "clip") t.clamp_(step.fused_min ? c10::optional<at::Scalar>(*step.fused_min) : c10::nullopt,
                                             step.fused_max ? c10::optional<at::Scalar>(*step.fused_max) : c10::nullopt);
    else fail(ErrorCode::kUnsupported, "libtorch: fused activation '" + step.fused + "' is not one this backend runs");
  }

  // prim::ListConstruct of numbers computed at run time.
  static c10::IValue make_list(const tj::Stack& items) {
    bool all_int = true;
    for (const auto& v : items) {
      all_int = all_int && (v.isInt() || (v.isTensor() && !at::isFloatingType(v.toTensor().scalar_type())));
    }
    if (all_int) {
      c10::List<int64_t> l;
      for (const auto& v : items) l.push_back(v.isInt() ? v.toInt() : v.toTensor().item<int64_t>());
      return l;
    }
    c10::List<double> l;
    for (const auto& v : items) l.push_back(v.isDouble() ? v.toDouble() : v.isInt() ? static_cast<double>(v.toInt()) : v.toTensor().item<double>());
    return l;
  }

  // The LibTorch operator a node runs: its recorded overload, else the first
  // whose arguments the node fills; a reason when there is none.
  struct Resolved {
    std::shared_ptr<tj::Operator> op;
    std::string why;
  };
  static Resolved resolve(const Node& n) {
    const std::optional<OpName> name = parse_op_name(n.op);
    if (!name) return {nullptr, "the LibTorch backend runs LibTorch's ops (aten::x, aten.x.overload, prim::x); this op has no LibTorch kernel"};
    std::shared_ptr<tj::Operator> op;
    if (auto overload = node_overload(n)) op = tj::findOperatorFor(c10::OperatorName(name->qualified, *overload));
    if (!op) {
      for (const auto& candidate : tj::getAllOperatorsFor(c10::Symbol::fromQualString(name->qualified))) {
        if (fits(candidate->schema(), n, arg_names(n))) return {candidate, {}};
      }
      return {nullptr, "LibTorch has no kernel for this op with these arguments"};
    }
    return {op, {}};
  }

  static std::vector<std::string> arg_names(const Node& n) {
    if (const AttributeValue* a = n.attributes.find(kArgNamesAttribute)) {
      if (auto* names = std::get_if<std::vector<std::string>>(a)) return *names;
    }
    return {};
  }

  Step plan(const Graph& graph, const Node& n, const std::unordered_map<std::uint32_t, int>& slot,
            const std::vector<const Value*>& value_of) {
    Step step;
    step.where = "node '" + n.name + "' (" + n.op + ")";
    step.nodes = {n.name};
    for (ValueId o : n.outputs) step.outputs.push_back(slot.at(o.index));
    if (n.op == "prim::ListConstruct") {
      step.list_construct = true;
      step.layout = Layout::kAny;  // its reader decides
      for (ValueId in : n.inputs) step.args.push_back({Arg::Kind::kValue, {}, {slot.at(in.index)}, c10::AnyType::get(), false, {}});
      return step;
    }
    const Resolved resolved = resolve(n);
    if (!resolved.op) fail(ErrorCode::kUnsupported, step.where + ": " + resolved.why);
    const std::shared_ptr<tj::Operator>& op = resolved.op;
    const c10::FunctionSchema& schema = op->schema();
    const std::vector<std::string> names = names_for(schema, arg_names(n));
    for (const c10::Argument& arg : schema.arguments()) {
      Arg a;
      a.type = arg.type();
      std::vector<int> from_inputs;
      for (std::size_t i = 0; i < names.size() && i < n.inputs.size(); ++i) {
        if (names[i] == arg.name()) from_inputs.push_back(slot.at(n.inputs[i].index));
      }
      const auto list_type = arg.type()->cast<c10::ListType>();
      const c10::TypePtr element = list_type ? list_type->getElementType() : nullptr;
      const auto optional_element = element ? element->cast<c10::OptionalType>() : nullptr;
      const bool tensor_list = element && (element->cast<c10::TensorType>() ||
                                           (optional_element && optional_element->getElementType()->cast<c10::TensorType>()));
      if (!from_inputs.empty()) {
        a.kind = tensor_list ? Arg::Kind::kValueList : Arg::Kind::kValue;
        a.optional_elements = tensor_list && optional_element;
        if (a.optional_elements) {
          if (const AttributeValue* mask = n.attributes.find(arg.name())) {
            const auto* present = std::get_if<std::vector<bool>>(mask);
            const auto given = present ? static_cast<std::size_t>(std::count(present->begin(), present->end(), true)) : 0;
            if (!present || given != from_inputs.size()) {
              fail(ErrorCode::kSchema, step.where + ": attribute '" + arg.name() + "' must be bools with one true per input filling it");
            }
            a.present = *present;
          }
        }
        a.slots = std::move(from_inputs);
      } else if (const AttributeValue* attr = n.attributes.find(arg.name())) {
        auto iv = to_ivalue(*attr, arg.type());
        if (!iv) fail(ErrorCode::kUnsupported, step.where + ": attribute '" + arg.name() + "' cannot be passed as " + arg.type()->str());
        a.constant = std::move(*iv);
      } else if (arg.default_value()) {
        a.constant = *arg.default_value();
      } else if (arg.type()->kind() == c10::TypeKind::OptionalType) {
        a.constant = c10::IValue();
      } else {
        fail(ErrorCode::kUnsupported, step.where + ": argument '" + arg.name() + "' of " + schema.name() + " is not given");
      }
      step.args.push_back(std::move(a));
    }
    step.operation = op->getOperation();
    step.op_name = schema.overload_name().empty() ? schema.name() : schema.name() + "." + schema.overload_name();
    if (const auto canonical = canonical_op(n); canonical && kAnyLayout.count(canonical->name)) step.layout = Layout::kAny;
    maybe_use_onednn(step, n, schema, value_of);
    if (auto fused = n.attributes.get_string(kFusedActivation)) {
      if (!is_fusible_activation(*fused)) fail(ErrorCode::kUnsupported, step.where + ": fused activation '" + *fused + "' is not one this backend runs");
      step.fused = *fused;
      step.fused_min = n.attributes.get_float(kFusedMin);
      step.fused_max = n.attributes.get_float(kFusedMax);
    }
    // A kernel returning a list (split, unbind) for a node whose outputs are
    // its tensors; one output is the list itself unless the list holds tensors
    // and the graph says the output is one (a .pt2's split into one piece;
    // never size's int[]).
    const c10::TypePtr& returned = schema.returns().size() == 1 ? schema.returns()[0].type() : c10::TypePtr();
    const auto list = returned ? returned->cast<c10::ListType>() : nullptr;
    const bool one_tensor = n.outputs.size() == 1 && list && list->getElementType()->kind() == c10::TypeKind::TensorType &&
                            graph.value(n.outputs[0]).dtype.has_value();
    step.unpack_list = list && (n.outputs.size() > 1 || one_tensor);
    if (!step.unpack_list && schema.returns().size() != n.outputs.size()) {
      fail(ErrorCode::kUnsupported, step.where + ": the kernel returns " + std::to_string(schema.returns().size()) +
                                        " values, the node has " + std::to_string(n.outputs.size()) + " outputs");
    }
    return step;
  }

  // An in-place op rewritten to its functional form keeps the in-place
  // schema's `self` (aten::dropout_(Tensor(a!) self, ...)), where the
  // functional one may name it otherwise (aten::dropout(Tensor input, ...)).
  static std::vector<std::string> names_for(const c10::FunctionSchema& schema, std::vector<std::string> names) {
    if (!schema.arguments().empty() && !schema.argumentIndexWithName("self")) {
      for (auto& name : names) {
        if (name == "self") name = schema.arguments()[0].name();
      }
    }
    return names;
  }

  static bool fits(const c10::FunctionSchema& schema, const Node& n, const std::vector<std::string>& given) {
    const std::vector<std::string> names = names_for(schema, given);
    std::size_t matched_inputs = 0;
    for (const c10::Argument& arg : schema.arguments()) {
      const bool from_input = std::find(names.begin(), names.end(), arg.name()) != names.end();
      if (from_input) matched_inputs += static_cast<std::size_t>(std::count(names.begin(), names.end(), arg.name()));
      const bool given = from_input || n.attributes.contains(arg.name());
      if (!given && !arg.default_value() && arg.type()->kind() != c10::TypeKind::OptionalType) return false;
    }
    return matched_inputs == n.inputs.size();
  }

  LibTorchEvaluator evaluator_;
  std::vector<Step> steps_;
  std::vector<c10::IValue> slots_;
  std::vector<std::pair<int, at::Tensor>> constants_;
  std::vector<bool> is_constant_;  // per slot
  std::map<int, Packing> packed_weights_;  // constant slots reordered for oneDNN on the CPU
  std::vector<int> input_slots_, output_slots_;
  Device device_;
  std::optional<c10::Stream> stream_;
};

std::optional<std::vector<Tensor>> LibTorchEvaluator::evaluate(const Node& node, const std::vector<Tensor>& inputs) const {
  try {
    Graph g;
    std::vector<ValueId> ins;
    for (std::size_t i = 0; i < inputs.size(); ++i) ins.push_back(g.add_constant("in" + std::to_string(i), inputs[i]));
    std::vector<NewValue> outs;
    for (std::size_t i = 0; i < node.outputs.size(); ++i) outs.emplace_back("out" + std::to_string(i));
    const NodeId n = g.add_node(node.op, ins, std::move(outs), node.attributes, node.name);
    g.set_outputs(g.node(n).outputs);
    LibTorchBackend backend;
    backend.prepare(g, Device::cpu(), nullptr);
    std::vector<Tensor> result;
    for (const Tensor& t : backend.run({})) result.push_back(t.clone());  // owned: the constant outlives this backend
    return result;
  } catch (const std::exception&) {
    return std::nullopt;  // not foldable here: the node stays
  }
}

}  // namespace

std::unique_ptr<Backend> make_libtorch_backend() { return std::make_unique<LibTorchBackend>(); }

}  // namespace tracegraph::native

// Linking tracegraph::native makes LibTorch the default backend
// (set_default_backend), so trace()'s result finalizes as it is. The target's
// link options name this symbol (--undefined), which keeps this object in
// every executable linking the static library, even one naming nothing else here.
extern "C" {
int tracegraph_native_default_backend = [] {
  tracegraph::set_default_backend(&tracegraph::native::make_libtorch_backend);
  return 1;
}();
}

namespace tracegraph::native {

std::vector<at::Tensor> run(TracedGraph& graph, const std::vector<at::Tensor>& inputs) {
  // Views both ways (from_aten and to_aten copy nothing for contiguous tensors),
  // so the same checks as run() apply at no cost.
  std::vector<Tensor> in;
  in.reserve(inputs.size());
  for (const auto& t : inputs) in.push_back(from_aten(t));
  std::vector<at::Tensor> out;
  for (const auto& t : graph.run(in)) out.push_back(to_aten(t));
  return out;
}

std::vector<LibTorchStep> libtorch_plan(const Backend& backend) {
  const auto* libtorch = dynamic_cast<const LibTorchBackend*>(&backend);
  if (!libtorch) fail(ErrorCode::kInvalidArgument, "libtorch_plan: the backend is '" + backend.name() + "', not LibTorch's");
  return libtorch->plan_steps();
}

bool has_libtorch_op(const std::string& qualified) {
  return !tj::getAllOperatorsFor(c10::Symbol::fromQualString(qualified)).empty();
}

bool cuda_available() { return at::hasCUDA() && at::getNumGPUs() > 0; }

}  // namespace tracegraph::native
