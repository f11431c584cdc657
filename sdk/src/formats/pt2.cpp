#include "tracegraph/pt2.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "formats/json_limits.h"
#include "formats/storage.h"
#include "support/json_util.h"
#include "tracegraph/file_io.h"
#include "tracegraph/op_table.h"
#include "tracegraph/transforms/inplace_to_functional.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph {

using detail::Json;
using detail::JsonPlace;

namespace {

// torch/_export/serde/schema.py's ScalarType, as our dtypes.
std::optional<DType> dtype_of_export(std::int64_t code) {
  switch (code) {
    case 1: return DType::kUInt8;
    case 2: return DType::kInt8;
    case 3: return DType::kInt16;
    case 4: return DType::kInt32;
    case 5: return DType::kInt64;
    case 6: return DType::kFloat16;
    case 7: return DType::kFloat32;
    case 8: return DType::kFloat64;
    case 10: return DType::kComplex64;
    case 12: return DType::kBool;
    case 13: return DType::kBFloat16;
    default: return std::nullopt;
  }
}

// The same ScalarType as c10's code: what a schema's ScalarType argument holds
// as an int in TorchScript, and so in our attributes.
std::optional<std::int64_t> c10_scalar_type(std::int64_t code) {
  static constexpr std::int64_t kC10[] = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15};
  if (code >= 1 && code <= 13) return kC10[code];
  return std::nullopt;
}

// Layout and MemoryFormat, schema.py's codes to c10's.
std::optional<std::int64_t> c10_layout(std::int64_t code) { return code == 7 ? std::optional<std::int64_t>(0) : std::nullopt; }
std::optional<std::int64_t> c10_memory_format(std::int64_t code) {
  switch (code) {
    case 1: return 0;  // contiguous
    case 2: return 2;  // channels_last
    case 3: return 3;  // channels_last_3d
    case 4: return 1;  // preserve
    default: return std::nullopt;
  }
}

// The serializer writes non-finite floats as strings.
double read_float(const Json& j, const JsonPlace& p) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return detail::expect_number(j, p);
}

// A symbolic size as people write it: torch writes sympy's srepr
// ("Symbol('s77', positive=True, integer=True)", "Mul(Integer(2), Symbol('s0', ...))");
// we keep "s77" and "2*s0". Text that is not srepr stays as it is.
class SymbolText {
 public:
  explicit SymbolText(std::string_view s) : s_(s) {}
  std::string read() {
    std::string out;
    if (!expr(out, 0) || pos_ != s_.size()) return std::string(s_);
    return out;
  }

 private:
  void space() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  // One expression; `depth` bounds the recursion of a hostile file.
  bool expr(std::string& out, int depth) {
    if (depth > 64) return false;
    space();
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '-')) ++pos_;
    const std::string_view head = s_.substr(start, pos_ - start);
    if (head.empty()) return false;
    if (pos_ >= s_.size() || s_[pos_] != '(') {
      out = std::string(head);  // a number
      return true;
    }
    ++pos_;
    std::vector<std::string> args;
    for (;;) {
      space();
      if (pos_ < s_.size() && s_[pos_] == ')') break;
      if (pos_ < s_.size() && s_[pos_] == '\'') {
        const std::size_t close = s_.find('\'', pos_ + 1);
        if (close == std::string_view::npos) return false;
        args.emplace_back(s_.substr(pos_ + 1, close - pos_ - 1));
        pos_ = close + 1;
      } else {
        std::string a;
        if (!expr(a, depth + 1)) return false;
        space();
        if (pos_ < s_.size() && s_[pos_] == '=') {  // a keyword (positive=True): not part of the value
          ++pos_;
          std::string ignored;
          if (!expr(ignored, depth + 1)) return false;
        } else {
          args.push_back(std::move(a));
        }
      }
      space();
      if (pos_ < s_.size() && s_[pos_] == ',') ++pos_;
      else if (pos_ >= s_.size() || s_[pos_] != ')') return false;
    }
    ++pos_;
    auto join = [&](std::string_view sep, bool wrap_sums) {
      std::string r;
      for (std::size_t i = 0; i < args.size(); ++i) {
        const bool sum = wrap_sums && args[i].find(" + ") != std::string::npos;
        r += (i ? std::string(sep) : "") + (sum ? "(" + args[i] + ")" : args[i]);
      }
      return r;
    };
    if ((head == "Symbol" || head == "Integer") && args.size() == 1) out = args[0];
    else if (head == "Add") out = join(" + ", false);
    else if (head == "Mul") out = join("*", true);
    else if (head == "FloorDiv" && args.size() == 2) out = join("//", true);
    else out = std::string(head) + "(" + join(", ", false) + ")";
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

// The one key of a schema union ({"as_tensor": {...}}).
std::pair<std::string, const Json*> union_member(const Json& j, const JsonPlace& p) {
  detail::expect_object(j, p);
  if (j.size() != 1) p.fail_with(ErrorCode::kSchema, "expected an object with exactly one key (a union), found " + std::to_string(j.size()));
  return {j.begin().key(), &j.begin().value()};
}

std::string name_of(const Json& j, const JsonPlace& p) {
  const std::string n = detail::expect_string(detail::member(j, "name", p), p.at("name"));
  if (n.empty()) p.at("name").fail_with(ErrorCode::kSchema, "an empty name");
  return n;
}

// strict export's "L['self'].layers[0]['attn']" as named_modules() names it:
// "layers.0.attn". Non-strict export already writes that.
std::string module_path_of(std::string_view text) {
  if (text.starts_with("L['self']")) {
    text.remove_prefix(9);
    if (text.starts_with('.')) text.remove_prefix(1);
  }
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') {
      if (!out.empty()) out += '.';
    } else if (c != ']' && c != '\'' && c != '"') {
      out += c;
    }
  }
  return out;
}

// A node's metadata["nn_module_stack"] as torch.export.save writes it
// (torch/_export/serde/serialize.py): "KEY,PATH,TYPE" for each module from
// the root down, joined by ';', a field holding commas only inside brackets.
// The root (PATH "") is not a frame. It says where a node came from, not what
// it computes: one that does not split so gives no frames, not an error.
std::vector<ModuleFrame> nn_module_stack(std::string_view text) {
  std::vector<ModuleFrame> frames;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    std::vector<std::string_view> fields;
    int depth = 0;
    std::size_t from = 0;
    for (std::size_t k = 0; k < item.size(); ++k) {
      const char c = item[k];
      if (c == '[' || c == '(') ++depth;
      else if (c == ']' || c == ')') --depth;
      else if (c == ',' && depth == 0) {
        fields.push_back(item.substr(from, k - from));
        from = k + 1;
      }
    }
    fields.push_back(item.substr(from));
    if (fields.size() != 3) return {};
    std::string path = module_path_of(fields[1]);
    if (!path.empty()) frames.push_back(ModuleFrame{std::move(path), module_class_name(fields[2])});
    start = end + 1;
  }
  return frames;
}

class Pt2Reader {
 public:
  Pt2Reader(const ZipArchive& zip, const Pt2Options& options, const LoadLimits& limits) : zip_(zip), options_(options), limits_(limits) {}

  ExportedGraph read() {
    find_layout();
    const ZipData model = zip_.read(model_path_);
    model_source_ = zip_.source() + ":" + model_path_;
    const Json doc = detail::parse_json(model.text(), model_source_, detail::json_limits(limits_));
    const JsonPlace root{model_source_, ""};
    detail::expect_object(doc, root);
    check_version(doc, root);
    read_configs();
    const JsonPlace gmp = root.at("graph_module");
    const Json& gm = detail::expect_object(detail::member(doc, "graph_module", root), gmp);
    const JsonPlace gp = gmp.at("graph");
    const Json& g = detail::expect_object(detail::member(gm, "graph", gmp), gp);
    // Indexed once: the object's own find is linear, once per tensor read.
    const Json& values = detail::expect_object(detail::member(g, "tensor_values", gp), gp.at("tensor_values"));
    for (auto it = values.begin(); it != values.end(); ++it) tensor_values_.emplace(it.key(), &*it);
    tensor_values_place_ = gp.at("tensor_values");
    range_constraints_ = detail::optional_member(doc, "range_constraints", root);
    read_inputs(g, gp, gm, gmp);
    read_nodes(g, gp);
    read_outputs(g, gp, gm, gmp);
    // The IR torch.export gives by default keeps in-place ops (x[:, a:b] =
    // f(...) as slice + copy_, a mask filled by slices with fill_) and reads
    // the written value by its old name after them, as TorchScript does.
    if (const std::size_t rewritten = inplace_to_functional(out_.graph)) out_.metadata["inplace_rewritten"] = std::to_string(rewritten);
    read_specs(gm, gmp);
    out_.metadata["reader"] = "pt2";
    out_.metadata["source"] = zip_.source();
    if (const Json* tv = detail::optional_member(doc, "torch_version", root); tv && tv->is_string()) out_.metadata["torch_version"] = tv->get<std::string>();
    out_.metadata["schema_version"] = std::to_string(major_) + "." + std::to_string(minor_);
    if (dropped_checks_) out_.metadata["dropped_checks"] = std::to_string(dropped_checks_);
    out_.graph.verify();
    return std::move(out_);
  }

 private:
  // ---- the archive layout ----------------------------------------------------
  void find_layout() {
    // Every entry sits under one root folder, named after the file torch wrote.
    for (const ZipEntry& e : zip_.entries()) {
      const std::string_view rest = name_in_root(e.name);
      if (rest == "archive_format") {
        root_ = e.name.substr(0, e.name.size() - rest.size());
        const std::string format(zip_.read(e).text());
        if (format != "pt2") {
          fail(ErrorCode::kUnsupported, zip_.source() + ": entry '" + e.name + "' says archive format '" + format +
                                            "'; this reader reads 'pt2' (torch.export.save)");
        }
        break;
      }
      if (rest == "serialized_exported_program.json") {
        fail(ErrorCode::kUnsupportedVersion,
             zip_.source() + ": entry '" + e.name +
                 "' is the flat archive layout of torch 2.1-2.5 (serialized_exported_program.json with pickled weights); "
                 "load it with torch.export.load and save it again with a newer torch to get the pt2 layout this reader reads");
      }
    }
    if (!zip_.find(root_ + "archive_format")) {
      const bool torchscript = std::any_of(zip_.entries().begin(), zip_.entries().end(), [](const ZipEntry& e) {
        return e.name.size() >= 9 && e.name.compare(e.name.size() - 9, 9, "/data.pkl") == 0;
      });
      fail(ErrorCode::kUnsupported, zip_.source() + (torchscript ? ": a TorchScript or torch.save archive (it holds data.pkl), not a torch.export program"
                                                                 : ": a zip archive without archive_format: not a torch.export (.pt2) archive"));
    }
    std::vector<std::string> models;
    const std::string prefix = root_ + "models/";
    for (const ZipEntry& e : zip_.entries()) {
      if (e.name.compare(0, prefix.size(), prefix) == 0 && e.name.size() > prefix.size() + 5 &&
          e.name.compare(e.name.size() - 5, 5, ".json") == 0 && e.name.find('/', prefix.size()) == std::string::npos) {
        models.push_back(e.name.substr(prefix.size(), e.name.size() - prefix.size() - 5));
      }
    }
    std::string name = options_.model_name;
    if (name.empty()) {
      if (std::find(models.begin(), models.end(), "model") != models.end()) name = "model";
      else if (models.size() == 1) name = models[0];
    }
    if (name.empty() || std::find(models.begin(), models.end(), name) == models.end()) {
      std::string list;
      for (const auto& m : models) list += (list.empty() ? "" : ", ") + m;
      fail(ErrorCode::kNotFound, zip_.source() + ": " + (name.empty() ? std::string("which model? ") : "no model '" + name + "'; ") +
                                     "the archive holds " + (models.empty() ? std::string("none under ") + prefix : list));
    }
    model_path_ = prefix + name + ".json";
  }

  void check_version(const Json& doc, const JsonPlace& root) {
    const JsonPlace vp = root.at("schema_version");
    const Json& v = detail::expect_object(detail::member(doc, "schema_version", root), vp);
    major_ = detail::expect_int(detail::member(v, "major", vp), vp.at("major"));
    minor_ = detail::expect_int(detail::member(v, "minor", vp), vp.at("minor"));
    if (major_ != kPt2SchemaMajor) {
      vp.fail_with(ErrorCode::kUnsupportedVersion, "graph schema " + std::to_string(major_) + "." + std::to_string(minor_) + "; this reader reads major " +
                                                       std::to_string(kPt2SchemaMajor) + " (torch 2.14 writes 8.20)");
    }
  }

  // ---- weights and constants -------------------------------------------------
  struct Payload {
    std::string path;  // the archive entry holding its storage
    Json meta;         // its TensorMeta
    JsonPlace place;
  };

  void read_config(const std::string& dir, const std::string& file, std::unordered_map<std::string, Payload>& into) {
    const std::string path = root_ + "data/" + dir + "/" + file;
    if (!zip_.find(path)) return;  // an archive without weights or constants
    config_sources_.push_back(zip_.source() + ":" + path);
    const std::string& src = config_sources_.back();
    const Json j = detail::parse_json(zip_.read(path).text(), src, detail::json_limits(limits_));
    const JsonPlace p{src, ""};
    detail::expect_object(j, p);
    const JsonPlace cp = p.at("config");
    const Json& config = detail::expect_object(detail::member(j, "config", p), cp);
    for (auto it = config.begin(); it != config.end(); ++it) {
      const JsonPlace ep = cp.at(it.key());
      detail::expect_object(it.value(), ep);
      if (const Json* pickle = detail::optional_member(it.value(), "use_pickle", ep); pickle && detail::expect_bool(*pickle, ep.at("use_pickle"))) {
        ep.fail_with(ErrorCode::kUnsupported, "'" + it.key() + "' is a pickled tensor subclass; only plain tensors' raw storage is read");
      }
      const std::string name = detail::expect_string(detail::member(it.value(), "path_name", ep), ep.at("path_name"));
      if (name.find('/') != std::string::npos || name == ".." || name.empty()) {
        ep.at("path_name").fail_with(ErrorCode::kSchema, "path_name must be a file name in " + dir + "/, found '" + name + "'");
      }
      const Json* meta = detail::optional_member(it.value(), "tensor_meta", ep);
      if (!meta || meta->is_null()) ep.fail_with(ErrorCode::kUnsupported, "'" + it.key() + "' is not a tensor (no tensor_meta)");
      into.emplace(it.key(), Payload{root_ + "data/" + dir + "/" + name, *meta, ep.at("tensor_meta")});
    }
  }

  void read_configs() {
    config_sources_.reserve(2);  // the places below point into these strings
    read_config("weights", "model_weights_config.json", weights_);
    read_config("constants", "model_constants_config.json", constants_);
  }

  // A static shape from a TensorMeta's sizes (or strides), kBadShape for a symbol.
  std::vector<std::int64_t> static_ints(const Json& list, const JsonPlace& p) {
    detail::expect_array(list, p);
    if (list.size() > limits_.max_rank) p.fail_with(ErrorCode::kLimitExceeded, "rank " + std::to_string(list.size()) + " is over the limit of " + std::to_string(limits_.max_rank));
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto [kind, v] = union_member(list[i], p.at(i));
      if (kind != "as_int") p.at(i).fail_with(ErrorCode::kBadShape, "a weight's size or stride is symbolic (" + kind + ")");
      out.push_back(detail::expect_int(*v, p.at(i).at(kind)));
    }
    return out;
  }

  Tensor load_payload(const std::string& fqn, const Payload& pl) {
    const JsonPlace& p = pl.place;
    const std::int64_t code = detail::expect_int(detail::member(pl.meta, "dtype", p), p.at("dtype"));
    const std::optional<DType> dtype = dtype_of_export(code);
    if (!dtype) p.at("dtype").fail_with(ErrorCode::kUnknownDType, "'" + fqn + "' has export dtype " + std::to_string(code) + ", which no tracegraph dtype is");
    const Shape shape = static_ints(detail::member(pl.meta, "sizes", p), p.at("sizes"));
    const std::vector<std::int64_t> strides = static_ints(detail::member(pl.meta, "strides", p), p.at("strides"));
    std::int64_t offset = 0;
    if (const Json* so = detail::optional_member(pl.meta, "storage_offset", p)) {
      const auto [kind, v] = union_member(*so, p.at("storage_offset"));
      if (kind != "as_int") p.at("storage_offset").fail_with(ErrorCode::kBadShape, "a symbolic storage offset");
      offset = detail::expect_int(*v, p.at("storage_offset").at(kind));
    }
    const std::size_t nbytes = checked_nbytes(*dtype, shape);
    if (nbytes > limits_.max_tensor_bytes) {
      p.fail_with(ErrorCode::kLimitExceeded, "'" + fqn + "' is " + std::to_string(nbytes) + " bytes, over the limit of " + std::to_string(limits_.max_tensor_bytes));
    }
    if (checked_numel(shape) == 0) return Tensor::zeros(*dtype, shape);
    const ZipEntry* entry = zip_.find(pl.path);
    if (!entry) p.fail_with(ErrorCode::kNotFound, "'" + fqn + "': the archive has no entry '" + pl.path + "'");
    const std::string where = p.str() + ": '" + fqn + "' (entry '" + pl.path + "')";
    // Only the bytes the tensor reaches are inflated: its entry's size is the
    // file's word (a storage may be larger than one view of it), the tensor's
    // shape and dtype are what it needs.
    const std::uint64_t need = detail::storage_bytes_needed(*dtype, shape, strides, offset, limits_.max_tensor_bytes, where);
    if (need > entry->size) {
      fail(ErrorCode::kOutOfRange, where + " needs " + std::to_string(need) + " bytes of its storage, which holds " + std::to_string(entry->size));
    }
    return detail::tensor_from_storage(*dtype, shape, strides, offset, zip_.read_prefix(*entry, need), where);
  }

  Tensor weight(const std::string& fqn, const JsonPlace& p) {
    for (auto* table : {&weights_, &constants_}) {
      if (auto it = table->find(fqn); it != table->end()) return load_payload(fqn, it->second);
    }
    p.fail_with(ErrorCode::kNotFound, "'" + fqn + "' is in neither the weights nor the constants config of " + zip_.source());
  }

  // ---- values ----------------------------------------------------------------
  // The dtype and shape tensor_values gives a tensor; symbols stay symbols.
  std::pair<std::optional<DType>, std::optional<SymbolicShape>> tensor_type(const std::string& name, const JsonPlace& where) {
    const auto found = tensor_values_.find(name);
    const Json* meta = found == tensor_values_.end() ? nullptr : found->second;
    if (!meta) where.fail_with(ErrorCode::kDanglingId, "tensor '" + name + "' is not in the graph's tensor_values");
    const JsonPlace p = tensor_values_place_.at(name);
    const std::int64_t code = detail::expect_int(detail::member(*meta, "dtype", p), p.at("dtype"));
    const std::optional<DType> dtype = dtype_of_export(code);
    if (!dtype) p.at("dtype").fail_with(ErrorCode::kUnknownDType, "tensor '" + name + "' has export dtype " + std::to_string(code) + ", which no tracegraph dtype is");
    const JsonPlace sp = p.at("sizes");
    const Json& sizes = detail::expect_array(detail::member(*meta, "sizes", p), sp);
    if (sizes.size() > limits_.max_rank) sp.fail_with(ErrorCode::kLimitExceeded, "rank " + std::to_string(sizes.size()) + " is over the limit of " + std::to_string(limits_.max_rank));
    SymbolicShape shape;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const auto [kind, v] = union_member(sizes[i], sp.at(i));
      if (kind == "as_int") {
        const std::int64_t d = detail::expect_int(*v, sp.at(i).at(kind));
        if (d < 0) sp.at(i).fail_with(ErrorCode::kBadShape, "a negative size");
        shape.push_back(Dim::of(d));
      } else if (kind == "as_expr") {
        std::string expr = detail::expect_string(detail::member(*v, "expr_str", sp.at(i).at(kind)), sp.at(i).at(kind).at("expr_str"));
        if (expr.empty()) sp.at(i).fail_with(ErrorCode::kSchema, "an empty symbolic size");
        shape.push_back(Dim::sym(SymbolText(expr).read()));
      } else {
        sp.at(i).fail_with(ErrorCode::kSchema, "a size of kind '" + kind + "'");
      }
    }
    return {dtype, std::move(shape)};
  }

  ValueId lookup(const std::string& name, const JsonPlace& where, const std::string& who) const {
    auto it = values_.find(name);
    if (it == values_.end()) where.fail_with(ErrorCode::kUnproducedOutput, who + " reads '" + name + "', which no input, weight or earlier node produces");
    return it->second;
  }

  void bind(const std::string& name, ValueId id, const JsonPlace& where) {
    if (!values_.emplace(name, id).second) where.fail_with(ErrorCode::kMultipleProducers, "'" + name + "' is produced twice");
  }

  // ---- inputs: the signature decides what each placeholder is -----------------
  void read_inputs(const Json& g, const JsonPlace& gp, const Json& gm, const JsonPlace& gmp) {
    const JsonPlace ip = gp.at("inputs");
    const Json& inputs = detail::expect_array(detail::member(g, "inputs", gp), ip);
    const JsonPlace sp = gmp.at("signature");
    const Json& sig = detail::expect_object(detail::member(gm, "signature", gmp), sp);
    const JsonPlace isp = sp.at("input_specs");
    const Json& specs = detail::expect_array(detail::member(sig, "input_specs", sp), isp);
    if (specs.size() != inputs.size()) {
      isp.fail_with(ErrorCode::kSchema, std::to_string(specs.size()) + " input specs for " + std::to_string(inputs.size()) + " graph inputs");
    }
    if (inputs.size() > limits_.max_values) ip.fail_with(ErrorCode::kLimitExceeded, std::to_string(inputs.size()) + " inputs, over the limit");
    Json example_inputs = Json::array();
    std::set<std::string> input_symbols;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const JsonPlace p = isp.at(i);
      const auto [kind, spec] = union_member(specs[i], p);
      const JsonPlace kp = p.at(kind);
      if (kind == "user_input") {
        const JsonPlace ap = kp.at("arg");
        const auto [akind, arg] = union_member(detail::member(*spec, "arg", kp), ap);
        if (akind != "as_tensor") {
          ap.fail_with(ErrorCode::kUnsupported, "a user input of kind '" + akind + "'; only tensor inputs are read");
        }
        const std::string name = name_of(*arg, ap.at(akind));
        auto [dtype, shape] = tensor_type(name, ap);
        example_inputs.push_back(example_sizes(name));
        if (shape)
          for (const Dim& d : *shape)
            if (!d.is_static()) input_symbols.insert(d.symbol);
        bind(name, out_.graph.add_input(name, dtype, std::move(shape)), ap);
        continue;
      }
      std::string target_key;
      if (kind == "parameter") target_key = "parameter_name";
      else if (kind == "buffer") target_key = "buffer_name";
      else if (kind == "tensor_constant") target_key = "tensor_constant_name";
      else kp.fail_with(ErrorCode::kUnsupported, "an input of kind '" + kind + "' (only user inputs, parameters, buffers and tensor constants are read)");
      const std::string name = name_of(detail::member(*spec, "arg", kp), kp.at("arg"));
      const std::string fqn = detail::expect_string(detail::member(*spec, target_key, kp), kp.at(target_key));
      Tensor t = weight(fqn, kp.at(target_key));
      bind(name, out_.graph.add_constant(name, std::move(t)), kp);
    }
    // A front end's example inputs where a size is a symbol: the sizes the
    // program was exported with, and each symbol's range (torch.export.Dim's
    // min and max), as JSON.
    if (!input_symbols.empty()) {
      out_.metadata["example_input_shapes"] = example_inputs.dump();
      out_.metadata["symbol_ranges"] = symbol_ranges(input_symbols).dump();
    }
  }

  // One input's sizes as exported: a symbolic size's hint (the example
  // input's size), null where the file gives none.
  Json example_sizes(const std::string& name) const {
    Json out = Json::array();
    const auto found = tensor_values_.find(name);
    const Json* sizes = found == tensor_values_.end() ? nullptr : found->second->contains("sizes") ? &found->second->at("sizes") : nullptr;
    if (!sizes || !sizes->is_array()) return out;
    for (const Json& size : *sizes) {
      const Json* v = nullptr;
      if (size.is_object() && size.contains("as_int")) v = &size.at("as_int");
      else if (size.is_object() && size.contains("as_expr") && size.at("as_expr").is_object()) {
        const Json& e = size.at("as_expr");
        if (e.contains("hint") && e.at("hint").is_object() && e.at("hint").contains("as_int")) v = &e.at("hint").at("as_int");
      }
      out.push_back(v && v->is_number_integer() && v->get<std::int64_t>() >= 0 ? *v : Json(nullptr));
    }
    return out;
  }

  // The ranges (range_constraints) of the symbolic sizes the inputs have, as
  // the shapes name them: {"8*s69": [8, 256]}; a bound that is not an integer
  // (unbounded) null. One pass over the constraints, however many.
  Json symbol_ranges(const std::set<std::string>& input_symbols) const {
    Json out = Json::object();
    const Json* rc = range_constraints_;
    if (!rc || !rc->is_object()) return out;
    const auto bound = [](const Json& r, const char* key) { return r.contains(key) && r.at(key).is_number_integer() ? r.at(key) : Json(nullptr); };
    for (auto it = rc->begin(); it != rc->end(); ++it) {
      std::string symbol = SymbolText(it.key()).read();
      if (!it->is_object() || !input_symbols.count(symbol) || out.contains(symbol)) continue;
      out[symbol] = Json::array({bound(*it, "min_val"), bound(*it, "max_val")});
    }
    return out;
  }

  // ---- nodes ---------------------------------------------------------------------
  struct Call {
    std::vector<ValueId> inputs;
    std::vector<std::string> arg_names;
    Attributes attributes;
  };

  // A 0-d int64 constant standing for a literal size inside a list of sizes
  // that the graph computes in part.
  ValueId literal(std::int64_t v, const std::string& hint) {
    return out_.graph.add_constant(out_.graph.unique_value_name(hint), Tensor::from_vector<std::int64_t>({v}, {}));
  }

  // A symbolic scalar argument: its value, or nullopt when it is a literal (then `literal_out` holds it).
  std::optional<ValueId> sym_scalar(const Json& j, const JsonPlace& p, const std::string& who, std::optional<std::int64_t>& literal_out) {
    const auto [kind, v] = union_member(j, p);
    if (kind == "as_name") return lookup(detail::expect_string(*v, p.at(kind)), p, who);
    if (kind == "as_int") {
      literal_out = detail::expect_int(*v, p.at(kind));
      return std::nullopt;
    }
    if (kind == "as_bool") {
      literal_out = detail::expect_bool(*v, p.at(kind)) ? 1 : 0;
      return std::nullopt;
    }
    p.fail_with(ErrorCode::kUnsupported, who + ": a symbolic value of kind '" + kind + "'");
  }

  void read_argument(const std::string& arg_name, const Json& arg, const JsonPlace& p, const std::string& who, Call& call) {
    const auto [kind, v] = union_member(arg, p);
    const JsonPlace vp = p.at(kind);
    auto input = [&](ValueId id) {
      call.inputs.push_back(id);
      call.arg_names.push_back(arg_name);
    };
    if (kind == "as_none") return;  // an optional argument not given
    if (kind == "as_tensor") return input(lookup(name_of(*v, vp), vp, who));
    if (kind == "as_optional_tensor") {
      const auto [okind, ov] = union_member(*v, vp);
      if (okind == "as_tensor") input(lookup(name_of(*ov, vp.at(okind)), vp.at(okind), who));
      return;
    }
    if (kind == "as_tensors" || kind == "as_optional_tensors") {
      detail::expect_array(*v, vp);
      std::vector<bool> present;
      for (std::size_t i = 0; i < v->size(); ++i) {
        const JsonPlace ep = vp.at(i);
        if (kind == "as_tensors") {
          input(lookup(name_of((*v)[i], ep), ep, who));
          continue;
        }
        const auto [okind, ov] = union_member((*v)[i], ep);
        present.push_back(okind == "as_tensor");
        if (okind == "as_tensor") input(lookup(name_of(*ov, ep.at(okind)), ep.at(okind), who));
        else if (okind != "as_none") ep.fail_with(ErrorCode::kSchema, who + ": an optional tensor of kind '" + okind + "'");
      }
      // Tensor?[] with a None in it (aten.index.Tensor's indices): which
      // positions the inputs fill (docs/format.md).
      if (std::find(present.begin(), present.end(), false) != present.end()) call.attributes.set(arg_name, std::move(present));
      return;
    }
    if (kind == "as_int") return call.attributes.set(arg_name, detail::expect_int(*v, vp));
    if (kind == "as_float") return call.attributes.set(arg_name, read_float(*v, vp));
    if (kind == "as_bool") return call.attributes.set(arg_name, detail::expect_bool(*v, vp));
    if (kind == "as_string") return call.attributes.set(arg_name, detail::expect_string(*v, vp));
    if (kind == "as_ints" || kind == "as_floats" || kind == "as_bools" || kind == "as_strings") {
      detail::expect_array(*v, vp);
      if (kind == "as_ints") {
        std::vector<std::int64_t> xs;
        for (std::size_t i = 0; i < v->size(); ++i) xs.push_back(detail::expect_int((*v)[i], vp.at(i)));
        return call.attributes.set(arg_name, std::move(xs));
      }
      if (kind == "as_floats") {
        std::vector<double> xs;
        for (std::size_t i = 0; i < v->size(); ++i) xs.push_back(read_float((*v)[i], vp.at(i)));
        return call.attributes.set(arg_name, std::move(xs));
      }
      if (kind == "as_bools") {
        std::vector<bool> xs;
        for (std::size_t i = 0; i < v->size(); ++i) xs.push_back(detail::expect_bool((*v)[i], vp.at(i)));
        return call.attributes.set(arg_name, std::move(xs));
      }
      std::vector<std::string> xs;
      for (std::size_t i = 0; i < v->size(); ++i) xs.push_back(detail::expect_string((*v)[i], vp.at(i)));
      return call.attributes.set(arg_name, std::move(xs));
    }
    if (kind == "as_scalar_type" || kind == "as_layout" || kind == "as_memory_format") {
      const std::int64_t code = detail::expect_int(*v, vp);
      const auto c10 = kind == "as_scalar_type" ? c10_scalar_type(code) : kind == "as_layout" ? c10_layout(code) : c10_memory_format(code);
      if (!c10) vp.fail_with(ErrorCode::kUnsupported, who + ": argument '" + arg_name + "' is " + kind.substr(3) + " " + std::to_string(code) + ", which tracegraph does not run");
      return call.attributes.set(arg_name, *c10);
    }
    if (kind == "as_device") {
      std::string device = detail::expect_string(detail::member(*v, "type", vp), vp.at("type"));
      if (const Json* index = detail::optional_member(*v, "index", vp); index && !index->is_null()) {
        device += ":" + std::to_string(detail::expect_int(*index, vp.at("index")));
      }
      return call.attributes.set(arg_name, std::move(device));
    }
    if (kind == "as_sym_int" || kind == "as_sym_bool" || kind == "as_sym_float") {
      if (kind == "as_sym_float") {
        const auto [fkind, fv] = union_member(*v, vp);
        if (fkind == "as_float") return call.attributes.set(arg_name, read_float(*fv, vp.at(fkind)));
        if (fkind == "as_name") return input(lookup(detail::expect_string(*fv, vp.at(fkind)), vp, who));
        vp.fail_with(ErrorCode::kUnsupported, who + ": a symbolic float of kind '" + fkind + "'");
      }
      std::optional<std::int64_t> lit;
      if (auto id = sym_scalar(*v, vp, who, lit)) return input(*id);
      if (kind == "as_sym_bool") return call.attributes.set(arg_name, *lit != 0);
      return call.attributes.set(arg_name, *lit);
    }
    if (kind == "as_sym_ints") {
      detail::expect_array(*v, vp);
      std::vector<std::optional<ValueId>> ids;
      std::vector<std::int64_t> lits;
      bool all_literal = true;
      for (std::size_t i = 0; i < v->size(); ++i) {
        std::optional<std::int64_t> lit;
        ids.push_back(sym_scalar((*v)[i], vp.at(i), who, lit));
        lits.push_back(lit.value_or(0));
        all_literal = all_literal && !ids.back();
      }
      if (all_literal) return call.attributes.set(arg_name, std::move(lits));
      // Sizes computed at run time: a list node, as the TorchScript reader makes one.
      std::vector<ValueId> items;
      for (std::size_t i = 0; i < ids.size(); ++i) items.push_back(ids[i] ? *ids[i] : literal(lits[i], who_name_ + "." + arg_name + "." + std::to_string(i)));
      const NodeId list = out_.graph.add_node("prim::ListConstruct", std::move(items), {NewValue(out_.graph.unique_value_name(who_name_ + "." + arg_name))});
      out_.graph.set_node_module(list, module_);
      return input(out_.graph.node(list).outputs[0]);
    }
    vp.fail_with(ErrorCode::kUnsupported, who + ": argument '" + arg_name + "' is of kind '" + kind + "', which tracegraph does not read");
  }

  // The op a target names: "torch.ops.aten.add.Tensor" -> "aten.add.Tensor";
  // Python's operator module on sizes ("_operator.mul") -> TorchScript's int op.
  static std::optional<std::string> op_of(const std::string& target, Attributes& attrs) {
    static constexpr std::string_view kTorchOps = "torch.ops.";
    if (target.compare(0, kTorchOps.size(), kTorchOps) == 0) {
      std::string op = target.substr(kTorchOps.size());
      if (op.compare(0, 5, "aten.") == 0 && parse_op_name(op)) return op;
      return std::nullopt;
    }
    static const std::unordered_map<std::string, std::string> kSymOps = {
        {"_operator.add", "add"}, {"_operator.sub", "sub"}, {"_operator.mul", "mul"}, {"_operator.floordiv", "floordiv"},
        {"_operator.mod", "remainder"}, {"_operator.neg", "neg"}, {"_operator.eq", "eq"}, {"_operator.ne", "ne"},
        {"_operator.lt", "lt"}, {"_operator.le", "le"}, {"_operator.gt", "gt"}, {"_operator.ge", "ge"}};
    if (auto it = kSymOps.find(target); it != kSymOps.end()) {
      attrs.set(std::string(kOverloadAttribute), std::string("int"));
      return "aten::" + it->second;
    }
    return std::nullopt;
  }

  void read_nodes(const Json& g, const JsonPlace& gp) {
    const JsonPlace np = gp.at("nodes");
    const Json& nodes = detail::expect_array(detail::member(g, "nodes", gp), np);
    if (nodes.size() > limits_.max_nodes) np.fail_with(ErrorCode::kLimitExceeded, std::to_string(nodes.size()) + " nodes, over the limit of " + std::to_string(limits_.max_nodes));
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const JsonPlace p = np.at(i);
      const Json& n = detail::expect_object(nodes[i], p);
      const std::string target = detail::expect_string(detail::member(n, "target", p), p.at("target"));
      const Json& outs = detail::expect_array(detail::member(n, "outputs", p), p.at("outputs"));
      // Output values: one per tensor (a list output is one value per element).
      struct Out {
        std::string name;
        bool sym = false;
        JsonPlace place;
      };
      std::vector<Out> out_names;
      for (std::size_t k = 0; k < outs.size(); ++k) {
        const JsonPlace op = p.at("outputs").at(k);
        const auto [kind, v] = union_member(outs[k], op);
        if (kind == "as_tensor") out_names.push_back({name_of(*v, op.at(kind)), false, op.at(kind)});
        else if (kind == "as_tensors") {
          detail::expect_array(*v, op.at(kind));
          for (std::size_t e = 0; e < v->size(); ++e) out_names.push_back({name_of((*v)[e], op.at(kind).at(e)), false, op.at(kind).at(e)});
        } else if (kind == "as_sym_int" || kind == "as_sym_bool" || kind == "as_sym_float") {
          const auto [skind, sv] = union_member(*v, op.at(kind));
          if (skind != "as_name") op.fail_with(ErrorCode::kSchema, "a node output of kind '" + skind + "'");
          out_names.push_back({detail::expect_string(*sv, op.at(kind).at(skind)), true, op.at(kind)});
        } else if (kind == "as_none") {
          out_names.push_back({"", false, op});  // an output nobody reads
        } else {
          op.fail_with(ErrorCode::kUnsupported, "node output of kind '" + kind + "'");
        }
      }
      std::string name = detail::optional_member(n, "name", p) && n["name"].is_string() ? n["name"].get<std::string>() : std::string();
      bool has_output = false;
      for (const Out& o : out_names) has_output = has_output || !o.name.empty();
      if (!has_output) {
        ++dropped_checks_;  // _assert_tensor_metadata, _assert_scalar, ...: torch's own checks while tracing
        continue;
      }
      if (name.empty()) name = out_names[0].name.empty() ? "node" + std::to_string(i) : out_names[0].name;
      const std::string who = "node '" + name + "' (" + target + ")";
      who_name_ = name;
      module_ = ModuleId();
      if (const Json* meta = detail::optional_member(n, "metadata", p); meta && meta->is_object()) {
        if (auto it = meta->find("nn_module_stack"); it != meta->end() && it->is_string()) {
          const std::vector<ModuleFrame> frames = nn_module_stack(it->get<std::string>());
          // Bounded as a document's nesting is: what reads the path (the module tree) walks it per node.
          if (frames.size() > limits_.max_json_depth) {
            p.at("metadata").fail_with(ErrorCode::kLimitExceeded, "node '" + name + "': nn_module_stack nests " + std::to_string(frames.size()) +
                                                                      " modules, over max_json_depth (" + std::to_string(limits_.max_json_depth) + ")");
          }
          module_ = out_.graph.add_module_path(frames);
        }
      }
      Call call;
      const std::optional<std::string> op = op_of(target, call.attributes);
      if (!op) p.at("target").fail_with(ErrorCode::kUnsupported, who + ": not an ATen operator (higher-order ops and custom ops are not read)");
      const JsonPlace ap = p.at("inputs");
      const Json& args = detail::expect_array(detail::member(n, "inputs", p), ap);
      for (std::size_t a = 0; a < args.size(); ++a) {
        const JsonPlace pa = ap.at(a);
        detail::expect_object(args[a], pa);
        const std::string arg_name = detail::expect_string(detail::member(args[a], "name", pa), pa.at("name"));
        read_argument(arg_name, detail::member(args[a], "arg", pa), pa.at("arg"), who, call);
      }
      if (!call.inputs.empty()) call.attributes.set(std::string(kArgNamesAttribute), call.arg_names);
      std::vector<NewValue> news;
      for (std::size_t k = 0; k < out_names.size(); ++k) {
        const Out& o = out_names[k];
        if (o.name.empty()) {
          news.emplace_back(out_.graph.unique_value_name(name + "." + std::to_string(k)));
        } else if (o.sym) {
          news.emplace_back(o.name);  // an int the graph computes: no tensor type
        } else {
          auto [dtype, shape] = tensor_type(o.name, o.place);
          news.emplace_back(o.name, dtype, std::move(shape));
        }
        if (values_.count(news.back().name) || out_.graph.find_value(news.back().name)) {
          o.place.fail_with(ErrorCode::kMultipleProducers, who + ": '" + news.back().name + "' is produced twice");
        }
      }
      if (out_.graph.find_node(name)) p.at("name").fail_with(ErrorCode::kDuplicateName, "node name '" + name + "' is used twice");
      const NodeId id = out_.graph.add_node(*op, std::move(call.inputs), std::move(news), std::move(call.attributes), name);
      out_.graph.set_node_module(id, module_);
      for (std::size_t k = 0; k < out_names.size(); ++k) {
        if (!out_names[k].name.empty()) values_.emplace(out_names[k].name, out_.graph.node(id).outputs[k]);
      }
    }
  }

  void read_outputs(const Json& g, const JsonPlace& gp, const Json& gm, const JsonPlace& gmp) {
    const JsonPlace sp = gmp.at("signature");
    const Json& sig = detail::member(gm, "signature", gmp);
    const JsonPlace osp = sp.at("output_specs");
    const Json& specs = detail::expect_array(detail::member(sig, "output_specs", sp), osp);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const auto [kind, spec] = union_member(specs[i], osp.at(i));
      if (kind != "user_output") {
        osp.at(i).fail_with(ErrorCode::kUnsupported, "the program writes a " + kind + " (a training program, or one that mutates a buffer); export the model in eval() mode");
      }
    }
    const JsonPlace op = gp.at("outputs");
    const Json& outs = detail::expect_array(detail::member(g, "outputs", gp), op);
    std::vector<ValueId> ids;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const auto [kind, v] = union_member(outs[i], op.at(i));
      if (kind != "as_tensor") op.at(i).fail_with(ErrorCode::kUnsupported, "graph output " + std::to_string(i) + " is of kind '" + kind + "'; only tensor outputs are read");
      ids.push_back(lookup(name_of(*v, op.at(i).at(kind)), op.at(i), "graph output " + std::to_string(i)));
    }
    out_.graph.set_outputs(std::move(ids));
  }

  void read_specs(const Json& gm, const JsonPlace& gmp) {
    const Json* calls = detail::optional_member(gm, "module_call_graph", gmp);
    if (!calls) return;
    const JsonPlace cp = gmp.at("module_call_graph");
    detail::expect_array(*calls, cp);
    for (std::size_t i = 0; i < calls->size(); ++i) {
      const JsonPlace p = cp.at(i);
      const Json& entry = detail::expect_object((*calls)[i], p);
      if (detail::expect_string(detail::member(entry, "fqn", p), p.at("fqn")) != "") continue;
      const Json* sig = detail::optional_member(entry, "signature", p);
      if (!sig || sig->is_null()) return;
      auto spec = [&](std::string_view key, std::size_t leaves, const char* what) -> std::optional<TreeSpec> {
        const JsonPlace kp = p.at("signature").at(key);
        const std::string text = detail::expect_string(detail::member(*sig, key, p.at("signature")), kp);
        TreeSpec s = [&] {
          try {
            return TreeSpec::from_json(text, limits_.max_json_depth);
          } catch (const Error& e) {
            kp.fail_with(e.code(), e.message());
          }
        }();
        if (s.num_leaves() != leaves) {
          kp.fail_with(ErrorCode::kTreeSpecMismatch, std::string(what) + " has " + std::to_string(s.num_leaves()) + " leaves for " +
                                                         std::to_string(leaves) + " graph " + what + "s");
        }
        return s;
      };
      out_.in_spec = spec("in_spec", out_.graph.inputs().size(), "input");
      out_.out_spec = spec("out_spec", out_.graph.outputs().size(), "output");
      return;
    }
  }

  const ZipArchive& zip_;
  const Pt2Options& options_;
  const LoadLimits& limits_;
  std::string root_, model_path_, model_source_;
  std::vector<std::string> config_sources_;
  std::int64_t major_ = 0, minor_ = 0;
  std::unordered_map<std::string, Payload> weights_, constants_;
  std::unordered_map<std::string_view, const Json*> tensor_values_;  // keys in the document
  const Json* range_constraints_ = nullptr;
  JsonPlace tensor_values_place_;
  std::unordered_map<std::string, ValueId> values_;
  std::string who_name_;
  ModuleId module_;  // the module of the node being read (its nn_module_stack)
  std::size_t dropped_checks_ = 0;
  ExportedGraph out_;
};

}  // namespace

ExportedGraph read_pt2(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, std::string_view source,
                       const Pt2Options& options, const LoadLimits& limits) {
  const ZipArchive zip = ZipArchive::open(bytes, std::move(owner), std::string(source), limits);
  return Pt2Reader(zip, options, limits).read();
}

ExportedGraph load_pt2(const std::string& path, const Pt2Options& options, const LoadLimits& limits) {
  auto bytes = read_file_bytes(path, limits.max_file_bytes);
  const std::span<const std::byte> view(bytes->data(), bytes->size());
  return read_pt2(view, std::move(bytes), path, options, limits);
}

namespace {

// A torch.export program's archive: its archive_format, or the older flat layout.
bool holds_program(const std::vector<ZipEntry>& entries) {
  return std::any_of(entries.begin(), entries.end(), [](const ZipEntry& e) {
    const std::string_view rest = name_in_root(e.name);
    return rest == "archive_format" || rest == "serialized_exported_program.json";
  });
}

}  // namespace

bool is_pt2_archive(std::span<const std::byte> bytes) {
  if (!looks_like_zip(bytes)) return false;
  try {
    return holds_program(ZipArchive::open(bytes, nullptr, "archive").entries());
  } catch (const Error&) {
    return false;
  }
}

bool is_pt2_file(const std::string& path) {
  try {
    return holds_program(zip_directory(path));  // the directory alone, not the weights
  } catch (const Error&) {
    return false;
  }
}

}  // namespace tracegraph
