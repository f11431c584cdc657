#include "formats/torchscript/reader.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "tracegraph/error.h"

namespace tracegraph::torchscript {

namespace {

// A line that may change a value in place: a call of an in-place op
// (`torch.add_(`, not `__contains__(`) or of a module's method.
bool may_mutate(const std::string& text) {
  for (std::size_t i = text.find("_("); i != std::string::npos; i = text.find("_(", i + 1)) {
    if (i > 0 && text[i - 1] != '_' && (std::isalnum(static_cast<unsigned char>(text[i - 1])))) return true;
  }
  return text.find(").forward(") != std::string::npos;
}

}  // namespace

const Function& Reader::method(const std::string& qualified_class, const std::string& name, const Where& from) {
  const auto dot = qualified_class.rfind('.');
  return find_def(qualified_class.substr(0, dot), qualified_class.substr(dot + 1), name, from);
}

const Function& Reader::function(const std::string& qualified, const Where& from) {
  const auto dot = qualified.rfind('.');
  return find_def(qualified.substr(0, dot), "", qualified.substr(dot + 1), from);
}

const Function& Reader::find_def(const std::string& module, const std::string& cls, const std::string& name, const Where& from) {
  const std::string key = module + "|" + cls + "|" + name;
  if (auto it = functions_.find(key); it != functions_.end()) return it->second;
  std::string path = module;
  std::replace(path.begin(), path.end(), '.', '/');
  const std::string entry = root_ + "code/" + path + ".py";
  const std::string what = cls.empty() ? "function " + module + "." + name : "method " + name + " of " + module + "." + cls;
  if (!zip_.find(entry)) unsupported(from, "no code for the " + what + " (entry '" + entry + "' is not in the archive)");
  const std::vector<Line>& lines = file(entry);
  std::size_t i = 0, def_indent = 0;
  if (!cls.empty()) {
    while (i < lines.size() && !(lines[i].indent == 0 && lines[i].text.rfind("class " + cls + "(", 0) == 0)) ++i;
    if (i + 1 >= lines.size()) unsupported(from, "no class " + cls + " in '" + entry + "'");
    def_indent = lines[++i].indent;
    if (def_indent == 0) unsupported(from, "class " + cls + " in '" + entry + "' has no body");
  }
  const std::string wanted = "def " + name + "(";
  for (; i < lines.size(); ++i) {
    if (!cls.empty() && lines[i].indent < def_indent) break;
    if (lines[i].indent == def_indent && lines[i].text.rfind(wanted, 0) == 0) break;
  }
  if (i >= lines.size() || lines[i].indent != def_indent || lines[i].text.rfind(wanted, 0) != 0) {
    unsupported(from, "no " + what + " in '" + entry + "'");
  }
  Function fn;
  fn.where = Where{zip_.source() + ":" + entry, lines[i].number};
  // def name(self: T, x: Tensor, ...) -> R:
  const std::string& def = lines[i].text;
  int depth = 0;
  std::string param;
  for (std::size_t k = def.find('(') + 1; k < def.size(); ++k) {
    const char c = def[k];
    if ((c == ',' || c == ')') && depth == 0) {
      // "name: Type=default"
      const std::string p = param.substr(0, param.find(':'));
      const auto b = p.find_first_not_of(' '), e = p.find_last_not_of(' ');
      if (b != std::string::npos) {
        fn.params.push_back(p.substr(b, e - b + 1));
        const auto eq = top_level_equals(param);
        fn.defaults.push_back(eq == std::string::npos ? std::string() : param.substr(eq + 1));
      }
      param.clear();
      if (c == ')') break;
      continue;
    }
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    param += c;
  }
  for (++i; i < lines.size() && lines[i].indent > def_indent; ++i) fn.body.push_back(lines[i]);
  fn.method = !cls.empty() && !fn.params.empty();
  fn.check = def.find("-> NoneType:") != std::string::npos &&
             std::none_of(fn.body.begin(), fn.body.end(), [](const Line& l) { return may_mutate(l.text); });
  return functions_.emplace(key, std::move(fn)).first->second;
}

const std::vector<Line>& Reader::file(const std::string& entry) {
  if (auto it = files_.find(entry); it != files_.end()) return it->second;
  return files_.emplace(entry, logical_lines(zip_.read(entry).text(), entry, limits_.max_code_line_bytes)).first->second;
}

std::optional<Slot> Reader::class_constant(const std::string& qualified_class, const std::string& name, const Where& w) {
  const auto dot = qualified_class.rfind('.');
  std::string path = qualified_class.substr(0, dot);
  std::replace(path.begin(), path.end(), '.', '/');
  const std::string entry = root_ + "code/" + path + ".py";
  if (!zip_.find(entry)) return std::nullopt;
  const std::vector<Line>& lines = file(entry);
  const std::string cls = "class " + qualified_class.substr(dot + 1) + "(";
  std::size_t i = 0;
  while (i < lines.size() && !(lines[i].indent == 0 && lines[i].text.rfind(cls, 0) == 0)) ++i;
  for (++i; i < lines.size() && lines[i].indent > 0; ++i) {
    const std::string& t = lines[i].text;
    if (t.rfind(name + " : Final[", 0) != 0) continue;
    const auto eq = top_level_equals(t);
    if (eq == std::string::npos) return std::nullopt;
    return constant_expression(t.substr(eq + 1), Where{zip_.source() + ":" + entry, lines[i].number}, 0);
  }
  return std::nullopt;
}

std::size_t Reader::top_level_equals(const std::string& text) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == '=' && depth == 0 && (i + 1 >= text.size() || text[i + 1] != '=') && (i == 0 || (text[i - 1] != '=' && text[i - 1] != '!' && text[i - 1] != '<' && text[i - 1] != '>'))) return i;
  }
  return std::string::npos;
}

}  // namespace tracegraph::torchscript
