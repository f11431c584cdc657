// The core's TorchScript archive reader (sdk, no LibTorch) against the
// native one on one archive, for the test models and the zoo.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "tracegraph/activation.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/torchscript_archive.h"
#include "tracegraph/traced_graph.h"

namespace tracegraph::testing {

// The reader of the core against the native one, on one archive: either it
// reads the model, runs it as the module does and names the same activation,
// or it refuses with a typed error naming the entry and line.
struct CoreRead {
  bool read = false;
  std::string why;  // when refused
};
inline CoreRead read_in_core(const std::string& path, const testing::ModelIo& io) {
  ExportedGraph core;
  std::vector<Shape> shapes;
  for (const Tensor& t : io.inputs) shapes.push_back(t.shape());
  try {
    core = load_torchscript_archive(path, {}, shapes);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
    EXPECT_NE(e.message().find(".py line "), std::string::npos) << e.what();  // the code entry and line
    return {false, e.message()};
  }
  EXPECT_EQ(core.graph.inputs().size(), io.inputs.size());
  native::TorchScriptOptions options;
  options.example_inputs = io.inputs;
  const ExportedGraph native_read = native::read_torchscript(path, options);
  const auto native_activation = output_activation(native_read.graph);
  auto activation = output_activation(core.graph);
  for (std::size_t i = 0; i < activation.size() && i < native_activation.size(); ++i) {
    // A softmax over dim -1 stays -1 without the output's rank; the native
    // reader knows it and counts from the front.
    const auto& shape = native_read.graph.value(native_read.graph.outputs()[i]).shape;
    if (activation[i].dim && *activation[i].dim < 0 && shape) *activation[i].dim += static_cast<std::int64_t>(shape->size());
  }
  EXPECT_EQ(activation.size(), native_activation.size());
  // With the input shapes, the values carry the shapes followed from them
  // (channel ranges of concatenated heads included): the same activation.
  for (std::size_t i = 0; i < activation.size() && i < native_activation.size(); ++i) {
    EXPECT_EQ(activation[i].str(), native_activation[i].str()) << "output " << i;
  }
  TracedGraph g = TracedGraph::from_exported(std::move(core), native::make_libtorch_backend());
  g.set_input_shapes(shapes);
  g.finalize();
  const std::vector<Tensor> out = g.run(io.inputs);
  EXPECT_EQ(out.size(), io.outputs.size());
  for (std::size_t i = 0; i < out.size() && i < io.outputs.size(); ++i) {
    EXPECT_LE(max_relative_error(out[i], io.outputs[i]), 1e-4) << "output " << i;
  }
  return {true, {}};
}

}  // namespace tracegraph::testing
