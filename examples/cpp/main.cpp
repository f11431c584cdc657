// Loads a model, prints what each output ends in, and runs it on LibTorch and
// on XNNPACK:  activation MODEL.ts D,D,...   (the input's shape)
#include <cstdio>
#include <sstream>
#include <string>

#include "tracegraph/activation.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/xnnpack/backend.h"

namespace tg = tracegraph;

int main(int argc, char** argv) try {
  if (argc != 3) return std::fprintf(stderr, "usage: activation MODEL D,D,...\n"), 2;
  tg::Shape shape;
  std::stringstream dims(argv[2]);
  for (std::string d; std::getline(dims, d, ',');) shape.push_back(std::stoll(d));
  const tg::Tensor x = tg::Tensor::zeros(tg::DType::kFloat32, shape);

  tg::TracedGraph g = tg::native::load(argv[1], {.example_inputs = {x}});
  for (const auto& a : tg::output_activation(g.graph())) std::printf("activation: %s\n", a.str().c_str());
  g.optimize();
  tg::TracedGraph on_xnnpack = tg::TracedGraph::from_exported({g.graph(), g.in_spec(), g.out_spec(), {}}, tg::xnnpack::make_backend());
  g.finalize();  // LibTorch, the default backend natively
  on_xnnpack.finalize();
  const tg::Tensor a = g.run({x})[0], b = on_xnnpack.run({x})[0];
  std::printf("output: %s on %s and %s, equal within 1e-4: %s\n", tg::shape_str(a.shape()).c_str(), g.backend()->name().c_str(),
              on_xnnpack.backend()->name().c_str(), a.allclose(b, 1e-4, 1e-5) ? "yes" : "no");
  return 0;
} catch (const tg::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
