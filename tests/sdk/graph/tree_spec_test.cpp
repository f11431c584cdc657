#include "tracegraph/tree_spec.h"

#include "test_util.h"

namespace tracegraph {
namespace {

using IntTree = Tree<int>;

// ((a, b), {"x": c})
IntTree example() {
  return IntTree::tuple({IntTree::tuple({IntTree(1), IntTree(2)}), IntTree::dict({{"x", IntTree(3)}})});
}

// What PyTorch 2.x's treespec_dumps writes for the spec of ((a, b), {"x": c}).
constexpr const char* kExampleJson =
    R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}, {"type": null, "context": null, "children_spec": []}]}, {"type": "builtins.dict", "context": "[\"x\"]", "children_spec": [{"type": null, "context": null, "children_spec": []}]}]}])";

TEST(TreeSpecTest, FlattenGivesLeavesInPytreeOrder) {
  auto [leaves, spec] = flatten(example());
  EXPECT_EQ(leaves, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(spec.num_leaves(), 3u);
  EXPECT_EQ(spec.str(), "((*, *), {'x': *})");
}

TEST(TreeSpecTest, UnflattenRebuildsTheStructure) {
  auto [leaves, spec] = flatten(example());
  IntTree back = unflatten(spec, std::vector<int>{10, 20, 30});
  EXPECT_EQ(back.children()[0].children()[1].leaf(), 20);
  EXPECT_EQ(back.children()[1].at("x").leaf(), 30);
  EXPECT_EQ(flatten(back).second, spec);
  EXPECT_TG_ERROR(unflatten(spec, std::vector<int>{1, 2}), ErrorCode::kTreeSpecMismatch, "has 3 leaves, given 2");
}

TEST(TreeSpecTest, DumpsExactlyAsPyTorch) {
  EXPECT_EQ(flatten(example()).second.to_json(), kExampleJson);
  EXPECT_EQ(TreeSpec::leaf().to_json(), R"([1, {"type": null, "context": null, "children_spec": []}])");
}

TEST(TreeSpecTest, LoadsWhatPyTorchDumps) {
  TreeSpec spec = TreeSpec::from_json(kExampleJson);
  EXPECT_EQ(spec, flatten(example()).second);
  EXPECT_EQ(spec.to_json(), kExampleJson);
}

TEST(TreeSpecTest, EveryKindRoundTrips) {
  TreeSpec spec = TreeSpec::list({TreeSpec::none(), TreeSpec::leaf(),
                                  TreeSpec::named_tuple("mod.Point", {"x", "y"}, {TreeSpec::leaf(), TreeSpec::leaf()}),
                                  TreeSpec::dict({{"é \"q\"", TreeSpec::tuple({})}, {"b", TreeSpec::leaf()}})});
  EXPECT_EQ(spec.num_leaves(), 4u);
  const std::string json = spec.to_json();
  // Named tuples serialize as their registered type name (PyTorch 2.3+), without field names.
  EXPECT_NE(json.find(R"("type": "collections.namedtuple", "context": "\"mod.Point\"")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("type": "builtins.NoneType", "context": "null")"), std::string::npos) << json;
  // Non-ASCII keys are escaped as Python's json.dumps escapes them.
  EXPECT_NE(json.find(R"(\"\\u00e9 \\\"q\\\"\")"), std::string::npos) << json;
  TreeSpec back = TreeSpec::from_json(json);
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.children()[2].type_name(), "mod.Point");
  EXPECT_EQ(back.children()[3].keys(), (std::vector<std::string>{"é \"q\"", "b"}));
}

TEST(TreeSpecTest, ReadsTheOlderNamedTupleContext) {
  const char* json =
      R"([1, {"type": "collections.namedtuple", "context": "{\"class_name\": \"P\", \"fields\": [\"a\", \"b\"]}", "children_spec": [{"type": null, "context": null, "children_spec": []}, {"type": null, "context": null, "children_spec": []}]}])";
  TreeSpec spec = TreeSpec::from_json(json);
  EXPECT_EQ(spec.kind(), TreeKind::kNamedTuple);
  EXPECT_EQ(spec.keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(spec.str(), "P(a=*, b=*)");
}

TEST(TreeSpecTest, MatchNamesThePathOfAMismatch) {
  TreeSpec spec = flatten(example()).second;
  match(spec, example());
  IntTree wrong_key = IntTree::tuple({IntTree::tuple({IntTree(1), IntTree(2)}), IntTree::dict({{"y", IntTree(3)}})});
  EXPECT_TG_ERROR(match(spec, wrong_key), ErrorCode::kTreeSpecMismatch, "at [1]: expected dict keys {'x'}, got {'y'}");
  IntTree wrong_kind = IntTree::tuple({IntTree::list({IntTree(1), IntTree(2)}), IntTree::dict({{"x", IntTree(3)}})});
  EXPECT_TG_ERROR(match(spec, wrong_kind), ErrorCode::kTreeSpecMismatch, "at [0]: expected a tuple, got a list");
  IntTree deep = IntTree::tuple({IntTree::tuple({IntTree(1), IntTree(2)}), IntTree::dict({{"x", IntTree::tuple({})}})});
  EXPECT_TG_ERROR(match(spec, deep), ErrorCode::kTreeSpecMismatch, "at [1]['x']: expected a leaf, got a tuple");
  EXPECT_TG_ERROR(match(spec, IntTree(1)), ErrorCode::kTreeSpecMismatch, "at the root");
}

TEST(TreeSpecTest, BadJsonGetsTypedErrors) {
  EXPECT_TG_ERROR(TreeSpec::from_json("[1, "), ErrorCode::kParse, "byte");
  EXPECT_TG_ERROR(TreeSpec::from_json(R"([2, {"type": null, "context": null, "children_spec": []}])"),
                  ErrorCode::kUnsupportedVersion, "protocol 2");
  EXPECT_TG_ERROR(TreeSpec::from_json(R"([1, {"type": null, "children_spec": []}])"), ErrorCode::kSchema,
                  "at /1: missing key \"context\"");
  EXPECT_TG_ERROR(TreeSpec::from_json(R"([1, {"type": "builtins.set", "context": null, "children_spec": []}])"),
                  ErrorCode::kUnsupported, "builtins.set");
  EXPECT_TG_ERROR(TreeSpec::from_json(R"([1, {"type": "builtins.dict", "context": "[\"a\"]", "children_spec": []}])"),
                  ErrorCode::kSchema, "1 dict keys for 0 children");
  EXPECT_TG_ERROR(TreeSpec::from_json(R"([1, {"type": "builtins.dict", "context": "[1]", "children_spec": [{"type": null, "context": null, "children_spec": []}]}])"),
                  ErrorCode::kUnsupported, "only string keys");
  std::string deep = "[1, ";
  for (int i = 0; i < 300; ++i) deep += R"({"type": "builtins.list", "context": "null", "children_spec": [)";
  EXPECT_TG_ERROR(TreeSpec::from_json(deep), ErrorCode::kLimitExceeded, "deeper");
}

}  // namespace
}  // namespace tracegraph
