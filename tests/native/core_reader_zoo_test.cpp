// The core's TorchScript archive reader (sdk, no LibTorch) on the zoo:
// every traced model reads, runs on LibTorch within 1e-4 of the module and
// names the native reader's activation (core_reader.h).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core_reader.h"
#include "zoo_models.h"

namespace tracegraph {
namespace {

TEST(CoreReaderZoo, ReadsEveryTracedZooModel) {
#ifdef TRACEGRAPH_ZOO_LARGE
  const auto& zoo = testing::kZooLarge;
#else
  const auto& zoo = testing::kZooSmall;
#endif
  std::size_t read = 0, traced_models = 0;
  for (const std::string& name : zoo) {
    SCOPED_TRACE(name);
    const nlohmann::json facts = testing::read_json(testing::zoo_path(name + ".expected.json"));
    const testing::CoreRead r = testing::read_in_core(testing::zoo_path(name + ".ts"), testing::read_model_io(testing::zoo_path(name + ".io.safetensors")));
    const bool is_traced = facts["how"] == "trace";
    traced_models += is_traced;
    read += r.read;
    if (is_traced) {
      EXPECT_TRUE(r.read) << r.why;
    }
    if (!r.read) std::printf("[core reader] %s refused: %s\n", name.c_str(), r.why.c_str());
  }
  std::printf("[core reader] %zu of %zu zoo models read (%zu traced)\n", read, zoo.size(), traced_models);
}

}  // namespace
}  // namespace tracegraph
