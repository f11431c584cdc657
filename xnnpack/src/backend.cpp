// The public XnnpackBackend over the runtime, and the names of its options.
#include "lower/table.h"
#include "runtime/runtime.h"

namespace tracegraph::xnnpack {

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

std::vector<UnsupportedNode> XnnpackBackend::unsupported(const Graph& graph) const { return unsupported_nodes(graph); }

std::optional<std::vector<Engine>> op_engines(std::string_view base_op) { return lowered_op_engines(base_op); }

std::vector<std::string> lowered_ops() {
  return lowered_op_names();
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
