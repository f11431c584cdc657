// Internal helpers around nlohmann::json: parsing with a depth limit and a
// typed error naming the byte offset, checked member access that names the
// JSON pointer, and strings quoted exactly as Python's json.dumps quotes them.
// Not part of the public headers: the JSON library stays out of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracegraph/error.h"

namespace tracegraph::detail {

using Json = nlohmann::ordered_json;

// What one parse may spend; unbounded where not given (the readers pass
// LoadLimits' values: formats/json_limits.h).
struct JsonLimits {
  std::uint64_t max_depth = UINT64_MAX;
  std::uint64_t max_string_bytes = UINT64_MAX;
  std::uint64_t max_memory_bytes = UINT64_MAX;
};

// Parses `text`; kParse naming `source` and the byte offset, kLimitExceeded
// when objects or arrays nest deeper than `max_depth`, a string or key is
// longer than `max_string_bytes` or the parsed form would pass
// `max_memory_bytes`; kDuplicateName for a key twice in one object.
Json parse_json(std::string_view text, std::string_view source, const JsonLimits& limits);

// "/graph/nodes/3" + "inputs" -> "/graph/nodes/3/inputs" (RFC 6901 escaping).
std::string pointer_join(std::string_view pointer, std::string_view key);
std::string pointer_join(std::string_view pointer, std::size_t index);

// Python's json.dumps(s) with ensure_ascii=True.
std::string py_json_quote(std::string_view utf8);

// A JSON type name for messages: "object", "array", "string", ...
std::string json_type(const Json& j);

// Where a JSON document came from, for messages: "model.json at /graph/nodes/3".
struct JsonPlace {
  std::string_view source;
  std::string pointer;

  JsonPlace at(std::string_view key) const { return {source, pointer_join(pointer, key)}; }
  JsonPlace at(std::size_t index) const { return {source, pointer_join(pointer, index)}; }
  std::string str() const { return std::string(source) + " at " + (pointer.empty() ? "/" : pointer); }
  [[noreturn]] void fail_with(ErrorCode code, const std::string& what) const;
};

// Checked access: kSchema naming the place when a key is missing or has another type.
const Json& member(const Json& object, std::string_view key, const JsonPlace& place);
const Json* optional_member(const Json& object, std::string_view key, const JsonPlace& place);
const Json& expect_object(const Json& j, const JsonPlace& place);
const Json& expect_array(const Json& j, const JsonPlace& place);
std::string expect_string(const Json& j, const JsonPlace& place);
bool expect_bool(const Json& j, const JsonPlace& place);
std::int64_t expect_int(const Json& j, const JsonPlace& place);
// An integer in [0, limit]; kSchema for other types, kOutOfRange past the limit.
std::uint64_t expect_index(const Json& j, const JsonPlace& place, std::uint64_t limit);
double expect_number(const Json& j, const JsonPlace& place);

}  // namespace tracegraph::detail
