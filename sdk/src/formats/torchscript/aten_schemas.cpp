#include "formats/torchscript/aten_schemas.h"

#include <cstddef>
#include <cstring>
#include <span>
#include <unordered_map>

#include "tracegraph/error.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph::detail {
namespace {

#include "formats/torchscript/aten_schemas.inc"

// "add.Tensor(self:T,other:T,*,alpha:N=)T"
Schema parse(std::string_view line) {
  Schema s;
  const auto open = line.find('(');
  const auto close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) fail(ErrorCode::kInternal, "aten schema table: bad line");
  const std::string_view head = line.substr(0, open);
  const auto dot = head.find('.');
  s.name = std::string(head.substr(0, dot));
  s.overload = dot == std::string_view::npos ? std::string() : std::string(head.substr(dot + 1));
  for (std::string_view ret = line.substr(close + 1); !ret.empty();) {
    const auto comma = ret.find(',');
    s.returns.emplace_back(ret.substr(0, comma));
    ret = comma == std::string_view::npos ? std::string_view() : ret.substr(comma + 1);
  }
  std::string_view args = line.substr(open + 1, close - open - 1);
  bool keyword = false;
  while (!args.empty()) {
    const auto comma = args.find(',');
    const std::string_view a = args.substr(0, comma);
    args = comma == std::string_view::npos ? std::string_view() : args.substr(comma + 1);
    if (a == "*") {
      keyword = true;
      continue;
    }
    SchemaArg arg;
    const auto colon = a.find(':');
    arg.name = std::string(a.substr(0, colon));
    std::string_view type = a.substr(colon + 1);
    if (!type.empty() && type.back() == '=') {
      arg.has_default = true;
      type.remove_suffix(1);
    }
    arg.type = std::string(type);
    arg.keyword_only = keyword;
    s.args.push_back(std::move(arg));
  }
  return s;
}

const std::unordered_map<std::string, std::vector<Schema>>& table() {
  static const auto* t = [] {
    const std::vector<std::byte> text = inflate_raw(std::as_bytes(std::span(kAtenSchemas)), kAtenSchemasSize, "the aten schema table");
    auto* m = new std::unordered_map<std::string, std::vector<Schema>>();
    std::string_view all(reinterpret_cast<const char*>(text.data()), text.size());
    while (!all.empty()) {
      const auto nl = all.find('\n');
      Schema s = parse(all.substr(0, nl));
      (*m)[s.name].push_back(std::move(s));
      all = nl == std::string_view::npos ? std::string_view() : all.substr(nl + 1);
    }
    return m;
  }();
  return *t;
}

}  // namespace

const std::vector<Schema>& aten_schemas(std::string_view name) {
  static const std::vector<Schema> kNone;
  auto it = table().find(std::string(name));
  return it == table().end() ? kNone : it->second;
}

}  // namespace tracegraph::detail
