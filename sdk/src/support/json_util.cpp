#include "support/json_util.h"

#include <cstdio>
#include <unordered_set>
#include <vector>

namespace tracegraph::detail {

namespace {

std::string after_tag(const std::string& what) {
  // Keeps nlohmann's explanation after its "[json.exception.parse_error.101] " tag.
  auto cut = what.find("] ");
  return cut == std::string::npos ? what : what.substr(cut + 2);
}

// Builds the document from nlohmann's SAX events, checking as it goes: depth
// (later recursive walks and the library's own destructor stay bounded), one
// string's length, duplicate keys (the library would silently keep one), and
// the parsed form's size, before it is allocated: the library's destructor
// itself allocates, so a document that exhausts memory ends the process.
// Members are appended, not looked up: ordered_json's operator[] searches its
// object linearly, and nlohmann's callback parser scans the parent of every
// closed object, both quadratic in a document of 100,000 nodes (an 11 MB graph
// JSON took 3.7 s, 78% of it there).
class DomBuilder {
 public:
  DomBuilder(std::string_view source, const JsonLimits& limits) : source_(source), limits_(limits) {}

  Json take() { return std::move(root_); }

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return put(Json(v)); }
  bool string(Json::string_t& v) {
    check_length(v, "string");
    return put(Json(std::move(v)));
  }
  bool binary(Json::binary_t& v) { return put(Json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() {
    // The members move into the object at once: ordered_json's pairs hold a
    // const key, so a growing object copies every member's whole value.
    Frame& top = open_.back();
    auto& members = top.value->get_ref<Json::object_t&>();
    members.reserve(top.members.size());
    for (auto& [k, v] : top.members) members.emplace_back(std::move(k), std::move(v));
    return close();
  }
  bool end_array() { return close(); }

  bool key(Json::string_t& k) {
    check_length(k, "key");
    Frame& top = open_.back();
    if (!top.keys.insert(k).second) {
      fail(ErrorCode::kDuplicateName, std::string(source_) + ": key \"" + k + "\" appears twice in one object");
    }
    spend(sizeof(Json::object_t::value_type) + heap_bytes(k));
    top.members.emplace_back(std::move(k), Json());
    member_ = &top.members.back().second;
    return true;
  }

  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) {
    if (dynamic_cast<const Json::parse_error*>(&e)) {
      fail(ErrorCode::kParse, std::string(source_) + ": not valid JSON at byte " + std::to_string(byte) + ": " + after_tag(e.what()));
    }
    // A number too large for any JSON number type, say.
    fail(ErrorCode::kParse, std::string(source_) + ": not valid JSON: " + after_tag(e.what()));
  }

 private:
  struct Frame {
    Json* value;
    // An object's keys and members so far; the members' addresses hold while
    // a member's own container is open, as it is their last.
    std::unordered_set<std::string> keys;
    std::vector<std::pair<std::string, Json>> members;
  };

  void check_length(const std::string& s, const char* what) const {
    if (s.size() > limits_.max_string_bytes) {
      fail(ErrorCode::kLimitExceeded, std::string(source_) + ": a " + what + " of " + std::to_string(s.size()) +
                                          " bytes, over max_json_string_bytes (" + std::to_string(limits_.max_string_bytes) + ")");
    }
  }

  // Places a value where the document is: the root, the next element of the
  // open array, or the member whose key came last. The open containers are
  // each the last of their parent, so their addresses hold while they are open.
  Json* place(Json&& v) {
    spend(sizeof(Json) + (v.is_string() ? sizeof(Json::string_t) + heap_bytes(v.get_ref<const Json::string_t&>()) : 0));
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& top = *open_.back().value;
    if (top.is_array()) {
      auto& elements = top.get_ref<Json::array_t&>();
      elements.push_back(std::move(v));
      return &elements.back();
    }
    *member_ = std::move(v);
    return member_;
  }
  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json&& container) {
    spend(sizeof(Json::object_t));  // the container's own heap block (array_t is as big)
    if (open_.size() >= limits_.max_depth) {
      fail(ErrorCode::kLimitExceeded, std::string(source_) + ": JSON nests deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    open_.push_back(Frame{place(std::move(container)), {}, {}});
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  static std::size_t heap_bytes(const std::string& s) {
    constexpr std::size_t kInline = 15;  // libstdc++'s short strings live in the object
    return s.size() > kInline ? s.size() + 1 : 0;
  }
  // The document's parsed size so far, as the library lays it out: a value's
  // 16 bytes, an object member's pair, a container's or string's own block,
  // the characters of a long string or key.
  void spend(std::size_t bytes) {
    spent_ += bytes;
    if (spent_ > limits_.max_memory_bytes) {
      fail(ErrorCode::kLimitExceeded, std::string(source_) + ": its parsed form passes max_json_memory_bytes (" +
                                          std::to_string(limits_.max_memory_bytes) + ")");
    }
  }

  std::string_view source_;
  JsonLimits limits_;
  Json root_;
  std::vector<Frame> open_;
  Json* member_ = nullptr;
  std::uint64_t spent_ = 0;
};

}  // namespace

Json parse_json(std::string_view text, std::string_view source, const JsonLimits& limits) {
  DomBuilder builder(source, limits);
  Json::sax_parse(text.begin(), text.end(), &builder);
  return builder.take();
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
