#include "backend_impl.h"
#include "tracegraph/flops.h"

namespace tracegraph::xnnpack {

void XnnpackBackend::Impl::prepare(const Graph& graph) {
  graph_ = graph;
  states_.clear();
  constant_copies_.clear();
  padded_.clear();
  planned_.reset();
  for (ValueId v : graph_.inputs()) {
    const Value& value = graph_.value(v);
    if (value.dtype && *value.dtype != DType::kFloat32)
      fail(ErrorCode::kUnsupported, "xnnpack: graph input '" + value.name + "' is " + std::string(dtype_name(*value.dtype)) + "; this backend runs float32 graphs");
  }
  // Plan now when every input's shape is known, so that an op this backend
  // cannot run is reported here rather than at the first run.
  std::vector<Shape> shapes;
  for (ValueId v : graph_.inputs()) {
    const Value& value = graph_.value(v);
    if (!value.shape) break;
    Shape s;
    for (const Dim& d : *value.shape) {
      if (!d.is_static()) break;
      s.push_back(d.size);
    }
    if (s.size() != value.shape->size()) break;
    shapes.push_back(std::move(s));
  }
  check_ops();  // every op this backend lacks, in one error, before planning any
  if (shapes.size() == graph_.inputs().size()) plan(shapes);
}

std::vector<Tensor> XnnpackBackend::Impl::run(const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph_.inputs().size())
    fail(ErrorCode::kInvalidArgument, "xnnpack: the graph takes " + std::to_string(graph_.inputs().size()) + " inputs, given " + std::to_string(inputs.size()));
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const std::string& name = graph_.value(graph_.inputs()[i]).name;
    if (!t.defined()) fail(ErrorCode::kInvalidArgument, "xnnpack: input '" + name + "' is undefined");
    if (t.dtype() != DType::kFloat32) fail(ErrorCode::kDTypeMismatch, "xnnpack: input '" + name + "' is " + std::string(dtype_name(t.dtype())) + ", expected float32");
    if (t.device().type != DeviceType::kCPU) fail(ErrorCode::kInvalidArgument, "xnnpack: input '" + name + "' is on " + t.device().str() + "; this backend runs on the CPU");
    shapes.push_back(t.shape());
  }
  if (!planned_ || *planned_ != shapes) plan(shapes);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const int s = input_slots_[i];
    if (s >= 0 && inputs[i].nbytes()) std::memcpy(ptr(s), inputs[i].data(), inputs[i].nbytes());
  }
  if (options_.profile) {
    std::fill(step_ms_.begin(), step_ms_.end(), 0.0);
    for (std::size_t k = 0; k < steps_.size(); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      steps_[k].run();
      step_ms_[k] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
  } else {
    for (Step& step : steps_) step.run();
  }
  std::vector<Tensor> outputs;
  for (int s : output_slots_) outputs.push_back(read_out(s));
  return outputs;
}

std::vector<NodeTime> XnnpackBackend::Impl::profile() const {
  std::vector<NodeTime> out;
  if (!options_.profile || step_ms_.empty()) return out;
  std::unordered_map<std::uint32_t, std::size_t> index;
  // A value's shape as planned (its slot), else the graph's when static.
  auto shape_of = [&](ValueId v) -> Shape {
    const int s = v.index < value_slot_.size() ? value_slot_[v.index] : -1;
    if (s >= 0) return slots_[static_cast<std::size_t>(s)].shape;
    Shape shape;
    if (const auto& symbolic = graph_.value(v).shape) {
      for (const Dim& d : *symbolic) {
        if (!d.is_static()) return {};
        shape.push_back(d.size);
      }
    }
    return shape;
  };
  for (NodeId id : graph_.nodes()) {
    const Node& node = graph_.node(id);
    index[id.index] = out.size();
    std::vector<Shape> ins, outs;
    for (ValueId v : node.inputs) ins.push_back(shape_of(v));
    for (ValueId v : node.outputs) outs.push_back(shape_of(v));
    NodeTime& t = out.emplace_back();
    t.node = node.name;
    t.op = node.op;
    t.flops = node_flops(node, ins, outs).value_or(0);
  }
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    if (!steps_[k].node.valid()) continue;
    auto it = index.find(steps_[k].node.index);
    if (it == index.end()) continue;
    NodeTime& t = out[it->second];
    t.milliseconds += step_ms_[k];
    if (steps_[k].layout_change) {
      // A graph input's change is the graph's edge, not inside it.
      const bool edge = std::any_of(steps_[k].reads.begin(), steps_[k].reads.end(), [&](int s) {
        return std::find(input_slots_.begin(), input_slots_.end(), root(s)) != input_slots_.end();
      });
      if (!edge) {
        ++t.layout_changes;
        t.layout_milliseconds += step_ms_[k];
      }
      continue;  // the engine is the node's own
    }
    t.column_blocks = std::max(t.column_blocks, steps_[k].column_blocks);
    t.pixel_fold = std::max(t.pixel_fold, steps_[k].pixel_fold);
    if (steps_[k].winograd) t.engine = Engine::kWinograd, t.winograd = steps_[k].winograd_form;
    else if (steps_[k].xnnpack) {
      if (t.engine != Engine::kWinograd) t.engine = Engine::kXnnpack;
    } else if (t.engine == Engine::kNone) t.engine = Engine::kPortable;
  }
  return out;
}

std::size_t XnnpackBackend::Impl::memory_budget() const {
  if (options_.memory_budget) return options_.memory_budget;
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
  // Natively, the machine's memory: beyond it an allocation may "succeed"
  // (overcommit) and the process dies when it touches the pages.
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
#endif
  return sizeof(void*) == 4 ? (std::size_t{1} << 31) : (std::size_t{1} << 46);
}

Tensor XnnpackBackend::Impl::read_out(int s) {
  const Slot& slot = slots_[static_cast<std::size_t>(s)];
  switch (slot.kind) {
    case Kind::kInt: return Tensor::from_vector<std::int64_t>({slot.i}, {});
    case Kind::kFloat: return Tensor::from_vector<double>({slot.f}, {});
    case Kind::kInts: return Tensor::from_vector<std::int64_t>(slot.ints, {static_cast<i64>(slot.ints.size())});
    case Kind::kTensor: break;
    case Kind::kNone: fail(ErrorCode::kUnsupported, "xnnpack: a graph output this backend cannot return");
  }
  Tensor out = Tensor::zeros(DType::kFloat32, slot.shape);
  if (!out.numel()) return out;
  const float* src = ptr(s);
  if (!slot.channels_last || layouts_agree(slot.shape)) {
    std::memcpy(out.data(), src, out.nbytes());
    return out;
  }
  const std::size_t rank = slot.shape.size();
  std::vector<std::size_t> in_shape, perm{0, rank - 1};
  for (i64 d : physical(slot.shape, true)) in_shape.push_back(static_cast<std::size_t>(d));
  for (std::size_t i = 2; i < rank; ++i) perm.push_back(i - 1);
  check(xnn_run_transpose_nd_x32(src, out.data(), rank, in_shape.data(), perm.data(), 0, pool()), "transposing an output");
  return out;
}

XnnpackBackend::XnnpackBackend(const Options& options) : impl_(std::make_unique<Impl>(options)) {}
XnnpackBackend::~XnnpackBackend() = default;

void XnnpackBackend::check_device(const Device& device) const {
  if (device.type != DeviceType::kCPU) fail(ErrorCode::kUnsupported, "xnnpack: runs on the CPU only, not on " + device.str());
}

void XnnpackBackend::prepare(const Graph& graph, const Device& device, const Stream* stream) {
  check_device(device);
  if (stream) fail(ErrorCode::kUnsupported, "xnnpack: runs on the CPU only, not on a stream");
  impl_->prepare(graph);
}

std::vector<Tensor> XnnpackBackend::run(const std::vector<Tensor>& inputs) { return impl_->run(inputs); }

std::vector<UnsupportedNode> XnnpackBackend::unsupported(const Graph& graph) const { return Impl::unsupported(graph); }

std::vector<std::string> lowered_ops() {
  return XnnpackBackend::Impl::lowered_op_names();
}

void XnnpackBackend::move(const Device& device, const Stream* stream) {
  check_device(device);
  if (stream) fail(ErrorCode::kUnsupported, "xnnpack: runs on the CPU only, not on a stream");
}

int XnnpackBackend::threads() const { return impl_->threads(); }

std::string XnnpackBackend::instruction_set() { return cpu::isa_name(cpu::features().isa); }
std::vector<NodeTime> XnnpackBackend::profile() const { return impl_->profile(); }

std::string_view engine_name(Engine engine) {
  switch (engine) {
    case Engine::kXnnpack: return "xnnpack";
    case Engine::kPortable: return "portable";
    case Engine::kWinograd: return "winograd";
    case Engine::kNone: break;
  }
  return "none";
}

std::string_view conv_algorithm_name(ConvAlgorithm a) {
  switch (a) {
    case ConvAlgorithm::kDirect: return "direct";
    case ConvAlgorithm::kWinograd: return "winograd";
    case ConvAlgorithm::kWinogradF4: return "winograd4";
    case ConvAlgorithm::kFastest: break;
  }
  return "fastest";
}

ConvAlgorithm conv_algorithm_from(std::string_view name) {
  for (ConvAlgorithm a : {ConvAlgorithm::kFastest, ConvAlgorithm::kDirect, ConvAlgorithm::kWinograd, ConvAlgorithm::kWinogradF4})
    if (name == conv_algorithm_name(a)) return a;
  fail(ErrorCode::kInvalidArgument, "xnnpack: convolution algorithm '" + std::string(name) + "' is none of fastest, direct, winograd, winograd4");
}
std::size_t XnnpackBackend::arena_bytes() const { return impl_->arena_bytes(); }

std::unique_ptr<Backend> make_backend(const Options& options) { return std::make_unique<XnnpackBackend>(options); }

bool has_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  return false;
#else
  return true;
#endif
}

}  // namespace tracegraph::xnnpack
