#include "tracegraph/native/libtorch_backend.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/StreamGuard.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/script.h>

#include <optional>
#include <set>
#include <unordered_map>

#include "tracegraph/native/aten_interop.h"
#include "tracegraph/op_table.h"

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
// 0-d tensors when they are constants of the graph).
c10::IValue coerce(c10::IValue v, const c10::TypePtr& type_in) {
  if (!v.isTensor()) return v;
  c10::TypePtr type = type_in;
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  const auto kind = type->kind();
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
    for (NodeId id : graph.nodes()) steps_.push_back(plan(graph, graph.node(id), slot));
    channels_last_weights_.clear();
    for (const Step& step : steps_) {
      if (step.layout != Layout::kChannelsLast || step.args.size() < 2 || step.args[1].kind != Arg::Kind::kValue) continue;
      const int w = step.args[1].slots[0];
      if (is_constant_[static_cast<std::size_t>(w)]) channels_last_weights_.insert(w);
    }

    // Free each intermediate after its last reader; inputs, constants and outputs are kept.
    std::vector<int> last_use(slots_.size(), -1);
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      for (const Arg& a : steps_[i].args) {
        for (int s : a.slots) last_use[s] = static_cast<int>(i);
      }
    }
    std::vector<bool> keep = is_constant_;
    for (int s : input_slots_) keep[static_cast<std::size_t>(s)] = true;
    for (int s : output_slots_) keep[static_cast<std::size_t>(s)] = true;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      if (!keep[s] && last_use[s] >= 0) steps_[static_cast<std::size_t>(last_use[s])].free_after.push_back(static_cast<int>(s));
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
        t = t.to(target);
        // oneDNN convolutions' weights (2D and 3D), channels-last once here rather than each run.
        if (device_.type == DeviceType::kCPU && channels_last_weights_.count(s) && (t.dim() == 4 || t.dim() == 5)) {
          t = t.contiguous(t.dim() == 4 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::ChannelsLast3d);
        }
        slots_[static_cast<std::size_t>(s)] = t;
      }
    });
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
      translate_torch_errors(ErrorCode::kInvalidArgument, step.where, [&] {
        for (const Arg& a : step.args) push_arg(a, stack);
        if (step.layout == Layout::kDense) make_dense(stack);
        if (step.list_construct) {
          stack = {make_list(stack)};
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
      if (!step.fused.empty()) apply_fused(step, slots_[static_cast<std::size_t>(step.outputs[0])]);
      for (int s : step.free_after) slots_[static_cast<std::size_t>(s)] = c10::IValue();
    }
    std::vector<at::Tensor> out;
    for (int s : output_slots_) {
      const c10::IValue& v = slots_[static_cast<std::size_t>(s)];
      if (v.isTensor()) out.push_back(v.toTensor().contiguous());  // channels-last inside, NCHW out
      else if (v.isInt()) out.push_back(at::scalar_tensor(v.toInt(), at::kLong));
      else if (v.isDouble()) out.push_back(at::scalar_tensor(v.toDouble(), at::kDouble));
      else if (v.isBool()) out.push_back(at::scalar_tensor(v.toBool(), at::kBool));
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

  enum class Layout : std::uint8_t { kAny, kDense, kChannelsLast };
  struct Arg {
    enum class Kind { kConstant, kValue, kValueList } kind = Kind::kConstant;
    c10::IValue constant;
    std::vector<int> slots;
    c10::TypePtr type;
  };
  struct Step {
    tj::Operation operation = nullptr;
    bool list_construct = false;
    bool unpack_list = false;
    std::vector<Arg> args;
    std::vector<int> outputs;
    std::vector<int> free_after;
    std::string where;
    std::string fused;  // activation_fusion's activation, applied in place to the output
    std::optional<double> fused_min, fused_max;
    // The memory layout its tensor arguments need (on the CPU): oneDNN's
    // convolutions take channels-last inputs, ops that compute the same in any
    // layout take what comes, every other op gets contiguous (NCHW) tensors.
    Layout layout = Layout::kDense;
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
        c10::List<at::Tensor> list;
        for (int s : a.slots) list.push_back(slots_[static_cast<std::size_t>(s)].toTensor());
        stack.push_back(c10::IValue(list));
        break;
      }
    }
  }

  // A float32 2D/3D convolution on the CPU runs through oneDNN when this
  // LibTorch has it: Debian's build otherwise takes a much slower path
  // (im2col + GEMM) for aten::conv2d/conv3d. Same arguments, same result up to
  // float rounding; anything else falls back to the op's own kernel at run time.
  void maybe_use_onednn(Step& step, const Node& n, const c10::FunctionSchema& schema) {
    if (device_.type != DeviceType::kCPU || !at::hasMKLDNN()) return;
    const std::string& name = schema.name();
    const bool plain = (name == "aten::conv2d" || name == "aten::conv3d") && schema.overload_name().empty();
    const bool general = (name == "aten::_convolution" || name == "aten::convolution") &&
                         !n.attributes.get_bool("transposed").value_or(true);
    if (!plain && !general) return;
    step.layout = Layout::kChannelsLast;
    const std::size_t spatial = name == "aten::conv2d" ? 2 : name == "aten::conv3d" ? 3 : 0;
    tj::Operation fallback = step.operation;
    step.operation = [fallback, general, spatial](tj::Stack& stack) mutable {
      const at::Tensor& input = stack[0].toTensor();
      const at::Tensor& weight = stack[1].toTensor();
      const std::size_t dims = spatial ? spatial : static_cast<std::size_t>(std::max<int64_t>(input.dim() - 2, 0));
      const std::size_t groups_at = general ? 8 : 6;
      const bool fits = input.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat && input.is_cpu() &&
                        (dims == 2 || dims == 3) && input.dim() == static_cast<int64_t>(dims + 2) &&
                        stack[3].toIntVector().size() == dims && stack[4].toIntVector().size() == dims &&
                        stack[5].toIntVector().size() == dims;
      if (!fits) {
        fallback(stack);
        return;
      }
      // Channels-last activations: oneDNN's direct layout, no reorder of the
      // input and output each call (the weight is channels-last since move()).
      const at::Tensor last = input.contiguous(dims == 2 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::ChannelsLast3d);
      at::Tensor out = at::mkldnn_convolution(last, weight, stack[2].toOptional<at::Tensor>(), stack[4].toIntVector(),
                                              stack[3].toIntVector(), stack[5].toIntVector(), stack[groups_at].toInt());
      stack.clear();
      stack.emplace_back(std::move(out));
    };
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

  Step plan(const Graph& graph, const Node& n, const std::unordered_map<std::uint32_t, int>& slot) {
    Step step;
    step.where = "node '" + n.name + "' (" + n.op + ")";
    for (ValueId o : n.outputs) step.outputs.push_back(slot.at(o.index));
    if (n.op == "prim::ListConstruct") {
      step.list_construct = true;
      step.layout = Layout::kAny;  // its reader decides
      for (ValueId in : n.inputs) step.args.push_back({Arg::Kind::kValue, {}, {slot.at(in.index)}, c10::AnyType::get()});
      return step;
    }
    const Resolved resolved = resolve(n);
    if (!resolved.op) fail(ErrorCode::kUnsupported, step.where + ": " + resolved.why);
    const std::shared_ptr<tj::Operator>& op = resolved.op;
    const std::vector<std::string> names = arg_names(n);
    const c10::FunctionSchema& schema = op->schema();
    for (const c10::Argument& arg : schema.arguments()) {
      Arg a;
      a.type = arg.type();
      std::vector<int> from_inputs;
      for (std::size_t i = 0; i < names.size() && i < n.inputs.size(); ++i) {
        if (names[i] == arg.name()) from_inputs.push_back(slot.at(n.inputs[i].index));
      }
      const bool tensor_list = arg.type()->kind() == c10::TypeKind::ListType &&
                               arg.type()->cast<c10::ListType>()->getElementType()->cast<c10::TensorType>();
      if (!from_inputs.empty()) {
        a.kind = tensor_list ? Arg::Kind::kValueList : Arg::Kind::kValue;
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
    if (const auto canonical = canonical_op(n); canonical && kAnyLayout.count(canonical->name)) step.layout = Layout::kAny;
    maybe_use_onednn(step, n, schema);
    if (auto fused = n.attributes.get_string("fused_activation")) {
      static const std::set<std::string> kKnown = {"relu", "clip", "sigmoid", "tanh", "hardswish", "silu"};
      if (!kKnown.count(*fused)) fail(ErrorCode::kUnsupported, step.where + ": fused activation '" + *fused + "' is not one this backend runs");
      step.fused = *fused;
      step.fused_min = n.attributes.get_float("fused_min");
      step.fused_max = n.attributes.get_float("fused_max");
    }
    step.unpack_list = schema.returns().size() == 1 && n.outputs.size() > 1 &&
                       schema.returns()[0].type()->kind() == c10::TypeKind::ListType;
    if (!step.unpack_list && schema.returns().size() != n.outputs.size()) {
      fail(ErrorCode::kUnsupported, step.where + ": the kernel returns " + std::to_string(schema.returns().size()) +
                                        " values, the node has " + std::to_string(n.outputs.size()) + " outputs");
    }
    return step;
  }

  static bool fits(const c10::FunctionSchema& schema, const Node& n, const std::vector<std::string>& names) {
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
  std::set<int> channels_last_weights_;  // constant slots kept channels-last on the CPU
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

bool has_libtorch_op(const std::string& qualified) {
  return !tj::getAllOperatorsFor(c10::Symbol::fromQualString(qualified)).empty();
}

bool cuda_available() { return at::hasCUDA() && at::getNumGPUs() > 0; }

}  // namespace tracegraph::native
