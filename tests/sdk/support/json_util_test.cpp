// The core's JSON parser (sdk/src/support/json_util.h): the document it builds
// is the library's own, and its limits hold before memory is spent.
#include "support/json_util.h"

#include <string>

#include "test_util.h"

namespace tracegraph::detail {
namespace {

TEST(JsonUtilTest, BuildsTheSameDocumentAsTheLibrary) {
  const std::string text =
      R"({"b": [1, -2, 3.5, 1e300, 18446744073709551615, true, null, "\u00e9\ud83d\ude00", {"z": {}, "a": []}],)"
      R"( "a": {"nested": [[[]], [{}], {"k": "v"}]}, "": "", "long key past the short-string buffer": "a value past it too"})";
  EXPECT_EQ(parse_json(text, "doc", {}).dump(), Json::parse(text).dump());
  // Member order is the file's, in objects of many members too.
  std::string many = "{";
  for (int k = 5000; k > 0; --k) many += "\"m" + std::to_string(k) + "\": [" + std::to_string(k) + "]" + (k > 1 ? ", " : "}");
  const Json doc = parse_json(many, "many", {});
  ASSERT_EQ(doc.size(), 5000u);
  EXPECT_EQ(doc.begin().key(), "m5000");
  EXPECT_EQ(doc.at("m1").at(0), 1);
  EXPECT_EQ(doc.dump(), Json::parse(many).dump());
}

TEST(JsonUtilTest, RefusesWhatTheLibraryWouldKeepSilently) {
  EXPECT_TG_ERROR(parse_json(R"({"a": 1, "b": {"c": 2, "c": 3}})", "doc", {}), ErrorCode::kDuplicateName,
                  "doc: key \"c\" appears twice in one object");
  // The same key in two objects is fine.
  EXPECT_EQ(parse_json(R"([{"c": 1}, {"c": 2}])", "doc", {}).at(1).at("c"), 2);
  EXPECT_TG_ERROR(parse_json(R"({"a": [1, 2})", "doc", {}), ErrorCode::kParse, "doc: not valid JSON at byte 12");
  EXPECT_TG_ERROR(parse_json("[1" + std::string(400, '0') + "]", "doc", {}), ErrorCode::kParse, "doc: not valid JSON");
}

TEST(JsonUtilTest, LimitsHoldBeforeTheMemoryIsSpent) {
  EXPECT_TG_ERROR(parse_json(std::string(40, '[') + std::string(40, ']'), "doc", {.max_depth = 32}), ErrorCode::kLimitExceeded,
                  "doc: JSON nests deeper than 32 levels");
  const std::string long_string = "[\"" + std::string(2000, 'n') + "\"]";
  EXPECT_TG_ERROR(parse_json(long_string, "doc", {.max_string_bytes = 1000}), ErrorCode::kLimitExceeded,
                  "doc: a string of 2000 bytes, over max_json_string_bytes (1000)");
  EXPECT_TG_ERROR(parse_json("{\"" + std::string(2000, 'k') + "\": 1}", "doc", {.max_string_bytes = 1000}), ErrorCode::kLimitExceeded,
                  "a key of 2000 bytes");
  EXPECT_EQ(parse_json(long_string, "doc", {.max_string_bytes = 2000}).at(0).get<std::string>().size(), 2000u);
  // 1,000 small objects: about 200 KB parsed, from 25 KB of text.
  std::string nodes = "[";
  for (int k = 0; k < 1000; ++k) nodes += std::string(k ? ", " : "") + R"({"id": 1, "op": "relu"})";
  nodes += "]";
  EXPECT_TG_ERROR(parse_json(nodes, "doc", {.max_memory_bytes = 64 << 10}), ErrorCode::kLimitExceeded,
                  "doc: its parsed form passes max_json_memory_bytes (65536)");
  EXPECT_EQ(parse_json(nodes, "doc", {.max_memory_bytes = 1 << 20}).size(), 1000u);
}

}  // namespace
}  // namespace tracegraph::detail
