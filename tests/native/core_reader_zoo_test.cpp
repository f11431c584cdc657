// The core's TorchScript archive reader (sdk, no LibTorch) on the zoo:
// every model, traced or scripted, reads with its input shapes, runs on
// LibTorch within 1e-4 of the module and names the native reader's
// activation (core_reader.h); without the shapes, scripted code that
// branches on them is kNeedsInputShapes naming its line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core_reader.h"
#include "zoo_models.h"

namespace tracegraph {
namespace {

TEST(CoreReaderZoo, ReadsEveryZooModel) {
#ifdef TRACEGRAPH_ZOO_LARGE
  const auto& zoo = testing::kZooLarge;
#else
  const auto& zoo = testing::kZooSmall;
#endif
  std::size_t read = 0, traced_models = 0, need_shapes = 0;
  for (const std::string& name : zoo) {
    SCOPED_TRACE(name);
    const nlohmann::json facts = testing::read_json(testing::zoo_path(name + ".expected.json"));
    const testing::CoreRead r = testing::read_in_core(testing::zoo_path(name + ".ts"), testing::read_model_io(testing::zoo_path(name + ".io.safetensors")));
    const bool is_traced = facts["how"] == "trace";
    traced_models += is_traced;
    read += r.read;
    EXPECT_TRUE(r.read) << r.why;
    if (!is_traced) {
      // Without the input shapes: read as well, or asked for them at the line that needs them.
      try {
        load_torchscript_archive(testing::zoo_path(name + ".ts"));
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kNeedsInputShapes) << e.what();
        EXPECT_NE(e.message().find(".py line "), std::string::npos) << e.what();
        ++need_shapes;
      }
    }
  }
  std::printf("[core reader] %zu of %zu zoo models read (%zu traced); %zu scripted ones need their input shapes\n", read, zoo.size(),
              traced_models, need_shapes);
}

}  // namespace
}  // namespace tracegraph
