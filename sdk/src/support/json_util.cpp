#include "support/json_util.h"

#include <cstdio>
#include <set>
#include <vector>

namespace tracegraph::detail {

Json parse_json(std::string_view text, std::string_view source, std::size_t max_depth) {
  // The callback sees every container as it opens; refusing deep nesting here
  // keeps later recursive walks (and the library's own destructor) bounded.
  // Duplicate keys are refused too: the library would silently keep one.
  std::vector<std::set<std::string>> keys_seen;
  auto depth_guard = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
        static_cast<std::size_t>(depth) >= max_depth) {
      fail(ErrorCode::kLimitExceeded, std::string(source) + ": JSON nests deeper than " + std::to_string(max_depth) + " levels");
    }
    if (event == Json::parse_event_t::object_start) keys_seen.emplace_back();
    if (event == Json::parse_event_t::object_end && !keys_seen.empty()) keys_seen.pop_back();
    if (event == Json::parse_event_t::key && !keys_seen.empty() && parsed.is_string() &&
        !keys_seen.back().insert(parsed.get<std::string>()).second) {
      fail(ErrorCode::kDuplicateName, std::string(source) + ": key \"" + parsed.get<std::string>() + "\" appears twice in one object");
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), depth_guard);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();
    // Keep nlohmann's explanation after its "[json.exception.parse_error.101] " tag.
    auto cut = what.find("] ");
    if (cut != std::string::npos) what = what.substr(cut + 2);
    fail(ErrorCode::kParse, std::string(source) + ": not valid JSON at byte " + std::to_string(e.byte) + ": " + what);
  } catch (const Json::exception& e) {
    // A number too large for any JSON number type, say (no byte offset given).
    std::string what = e.what();
    auto cut = what.find("] ");
    if (cut != std::string::npos) what = what.substr(cut + 2);
    fail(ErrorCode::kParse, std::string(source) + ": not valid JSON: " + what);
  }
}

std::string pointer_join(std::string_view pointer, std::string_view key) {
  std::string out(pointer);
  out += '/';
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string pointer_join(std::string_view pointer, std::size_t index) {
  return std::string(pointer) + "/" + std::to_string(index);
}

std::string py_json_quote(std::string_view s) {
  std::string out = "\"";
  auto hex4 = [&](unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", v & 0xffffu);
    out += buf;
  };
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            if (c == 0x7f) out += static_cast<char>(c);
            else hex4(c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence; invalid bytes become U+FFFD.
    unsigned cp = 0xfffd;
    std::size_t len = 1;
    if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07;
    bool ok = len > 1 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (!ok) {
      cp = 0xfffd;
      len = 1;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      hex4(0xd800 + (cp >> 10));
      hex4(0xdc00 + (cp & 0x3ff));
    } else {
      hex4(cp);
    }
    i += len;
  }
  return out + "\"";
}

std::string json_type(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "object";
    case Json::value_t::array: return "array";
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    default: return "binary";
  }
}

void JsonPlace::fail_with(ErrorCode code, const std::string& what) const { fail(code, str() + ": " + what); }

const Json& member(const Json& object, std::string_view key, const JsonPlace& place) {
  const Json* found = optional_member(object, key, place);
  if (!found) place.fail_with(ErrorCode::kSchema, "missing key \"" + std::string(key) + "\"");
  return *found;
}

const Json* optional_member(const Json& object, std::string_view key, const JsonPlace& place) {
  expect_object(object, place);
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const Json& expect_object(const Json& j, const JsonPlace& place) {
  if (!j.is_object()) place.fail_with(ErrorCode::kSchema, "expected an object, found " + json_type(j));
  return j;
}

const Json& expect_array(const Json& j, const JsonPlace& place) {
  if (!j.is_array()) place.fail_with(ErrorCode::kSchema, "expected an array, found " + json_type(j));
  return j;
}

std::string expect_string(const Json& j, const JsonPlace& place) {
  if (!j.is_string()) place.fail_with(ErrorCode::kSchema, "expected a string, found " + json_type(j));
  return j.get<std::string>();
}

bool expect_bool(const Json& j, const JsonPlace& place) {
  if (!j.is_boolean()) place.fail_with(ErrorCode::kSchema, "expected a boolean, found " + json_type(j));
  return j.get<bool>();
}

std::int64_t expect_int(const Json& j, const JsonPlace& place) {
  if (j.is_number_integer() && !j.is_number_unsigned()) return j.get<std::int64_t>();
  if (j.is_number_unsigned()) {
    auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) place.fail_with(ErrorCode::kOutOfRange, "integer " + std::to_string(u) + " overflows int64");
    return static_cast<std::int64_t>(u);
  }
  place.fail_with(ErrorCode::kSchema, "expected an integer, found " + json_type(j));
}

std::uint64_t expect_index(const Json& j, const JsonPlace& place, std::uint64_t limit) {
  if (!j.is_number_integer()) place.fail_with(ErrorCode::kSchema, "expected a non-negative integer, found " + json_type(j));
  if (!j.is_number_unsigned() && j.get<std::int64_t>() < 0) {
    place.fail_with(ErrorCode::kOutOfRange, "expected a non-negative integer, found " + std::to_string(j.get<std::int64_t>()));
  }
  auto u = j.get<std::uint64_t>();
  if (u > limit) place.fail_with(ErrorCode::kOutOfRange, std::to_string(u) + " is past the limit " + std::to_string(limit));
  return u;
}

double expect_number(const Json& j, const JsonPlace& place) {
  if (!j.is_number()) place.fail_with(ErrorCode::kSchema, "expected a number, found " + json_type(j));
  return j.get<double>();
}

}  // namespace tracegraph::detail
