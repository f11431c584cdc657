// The schemas of LibTorch's aten operators (scripts/make_aten_schemas.py
// generates the table from the venv's torch), for readers that run without
// LibTorch: argument names, kinds, defaults and keyword-only markers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tracegraph::detail {

struct SchemaArg {
  std::string name;
  std::string type;  // the table's code: "T", "T?", "TL", "I", "IL", "N", ...
  bool has_default = false;
  bool keyword_only = false;
  bool optional() const { return !type.empty() && type.back() == '?'; }
};

struct Schema {
  std::string name;      // "add"
  std::string overload;  // "Tensor"; "" for the default one
  std::vector<SchemaArg> args;
  std::vector<std::string> returns;  // their codes: {"T"}, {"T", "T", "T"}, {"TL"}, {"I"}, ...
};

// Every overload of aten::`name`, in the table's (sorted) order; empty when there is none.
const std::vector<Schema>& aten_schemas(std::string_view name);

}  // namespace tracegraph::detail
