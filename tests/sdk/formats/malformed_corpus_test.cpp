// Every file of tests/data/malformed (made by scripts/make_malformed_corpus.py)
// must get its own typed error from its loader, with a message naming the
// place, and never crash (the sanitizer preset runs this too).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "test_util.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/file_io.h"
#include "tracegraph/safetensors.h"
#include "tracegraph/tree_spec.h"

namespace tracegraph {
namespace {

struct Case {
  std::string file, loader, code, message;
};

std::vector<Case> load_manifest() {
  std::ifstream in(test_data("malformed/manifest.json"));
  EXPECT_TRUE(in.good()) << "run scripts/make_malformed_corpus.py";
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<Case> cases;
  for (const auto& c : j) cases.push_back({c["file"], c["loader"], c["code"], c["message"]});
  return cases;
}

void load_with(const Case& c) {
  const std::string path = test_data("malformed/" + c.file);
  if (c.loader == "graph") {
    load_graph(path);
  } else if (c.loader == "safetensors") {
    auto bytes = read_file_bytes(path, 1 << 20);
    parse_safetensors(*bytes, bytes, path);
  } else {
    TreeSpec::from_json(read_text_file(path, 1 << 20));
  }
}

TEST(MalformedCorpusTest, HasAtLeastFortyCasesCoveringEveryLoader) {
  auto cases = load_manifest();
  EXPECT_GE(cases.size(), 40u);
  std::set<std::string> loaders, codes;
  for (const auto& c : cases) {
    loaders.insert(c.loader);
    codes.insert(c.code);
  }
  EXPECT_EQ(loaders, (std::set<std::string>{"graph", "safetensors", "tree_spec"}));
  EXPECT_GE(codes.size(), 15u);
}

TEST(MalformedCorpusTest, EachFileGetsItsTypedError) {
  for (const auto& c : load_manifest()) {
    SCOPED_TRACE(c.file);
    try {
      load_with(c);
      ADD_FAILURE() << c.file << ": loaded without error, expected " << c.code;
    } catch (const Error& e) {
      EXPECT_EQ(error_code_name(e.code()), c.code) << e.what();
      EXPECT_NE(e.message().find(c.message), std::string::npos) << "message: " << e.message() << "\nexpected: " << c.message;
      // Errors from files name the file.
      if (c.loader != "tree_spec") {
        const bool names_a_file = e.message().find(".json") != std::string::npos ||
                                  e.message().find(".safetensors") != std::string::npos;
        EXPECT_TRUE(names_a_file) << e.message();
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.file << ": untyped exception: " << e.what();
    }
  }
}

// Inputs the fuzzers once crashed on (tests/data/fuzz_regressions), kept so
// the fix stays: each must now get a typed error.
TEST(MalformedCorpusTest, FuzzRegressionsGetTypedErrors) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test_data("fuzz_regressions"))) {
    const std::string name = entry.path().filename().string();
    const bool is_tree_spec = name.find(".treespec.json") != std::string::npos;
    const bool is_safetensors = name.find(".safetensors") != std::string::npos;
    Case c{"../fuzz_regressions/" + name, is_tree_spec ? "tree_spec" : is_safetensors ? "safetensors" : "graph", "", ""};
    SCOPED_TRACE(name);
    EXPECT_THROW(load_with(c), Error);
    ++seen;
  }
  EXPECT_GE(seen, 2);
}

TEST(MalformedCorpusTest, TheBaseCaseLoads) {
  ExportedGraph g = load_graph(test_data("valid/small.json"));
  EXPECT_EQ(g.graph.num_nodes(), 2u);
  EXPECT_EQ(g.graph.input_names(), std::vector<std::string>{"x"});
  EXPECT_EQ(g.graph.value(*g.graph.find_value("w")).data.data_as<float>()[1], -2.0f);
}

TEST(MalformedCorpusTest, LimitsAreConfigurable) {
  LoadLimits tight;
  tight.max_nodes = 1;
  EXPECT_TG_ERROR(load_graph(test_data("valid/small.json"), tight), ErrorCode::kLimitExceeded, "2 nodes, over the limit of 1");
  tight = {};
  tight.max_file_bytes = 64;
  EXPECT_TG_ERROR(load_graph(test_data("valid/small.json"), tight), ErrorCode::kLimitExceeded, "over the limit of 64 bytes");
  tight = {};
  tight.max_tensor_bytes = 8;
  EXPECT_TG_ERROR(load_graph(test_data("valid/small.json"), tight), ErrorCode::kLimitExceeded, "needs 16 bytes, over the limit of 8");
}

}  // namespace
}  // namespace tracegraph
