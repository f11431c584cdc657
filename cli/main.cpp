// tracegraph: the command-line tool.
//
//   tracegraph inspect MODEL [--input-shape 1,3,224,224]... [--json]
//   tracegraph export MODEL -o DIR [--input-shape ...]...
//   tracegraph ops [--markdown]
//   tracegraph check MODEL --input-shape ... [--threads N] [--tolerance X]
//   tracegraph run MODEL -i INPUT... [-o OUTPUT]... [--dump-nodes FILE.safetensors] [--reader libtorch|core] [--backend NAME] [--threads N] [--device cpu|cuda]
//
// MODEL is a TorchScript file (.ts, .pt), a torch.export archive (.pt2) or an exported graph (.json).
// Errors are one line on stderr and a non-zero exit: 1 for a model that
// cannot be read, 2 for a command line that cannot be understood.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backends.h"
#include "bench.h"
#include "check.h"
#include "inspect.h"
#include "ops.h"
#include "run.h"
#include "tracegraph/activation.h"
#include "tracegraph/dtype.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/geometry.h"
#include "tracegraph/module_graph.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/op_table.h"

namespace tg = tracegraph;

namespace {

// The backends are the ones this build registered (backends.h).
std::string usage() {
  std::string backends;
  for (const auto& b : tg::cli::backends()) backends += (backends.empty() ? "" : "|") + b.name;
  return "usage: tracegraph inspect MODEL [--input-shape D,D,...]... [--json]\n"
    "       tracegraph export MODEL -o DIR [--input-shape D,D,...]...\n"
    "       tracegraph optimize MODEL [--input-shape D,D,...]... [--json] [-o DIR] [--disable NAME]...\n"
    "       tracegraph ops [--markdown]\n"
    "       tracegraph check MODEL --input-shape D,D,... [--threads N] [--tolerance X]\n"
    "       tracegraph bench MODEL --input-shape D,D,... [--runs N] [--warmup N] [--threads N] [--device cpu|cuda]\n"
    "       tracegraph run MODEL (-i INPUT | --random D,D,...)... [-o OUTPUT]... [--backend " + backends + "]\n"
    "                      [--threads N] [--device cpu|cuda] [--dump-nodes FILE.safetensors] [--reader libtorch|core]\n"
    "INPUT: FILE.npy (inputs in order), NAME=FILE.npy, or FILE.safetensors (inputs by name).\n"
    "OUTPUT: FILE.npy per output, in order, or one FILE.safetensors (outputs by name).\n"
    "--dump-nodes: every node's value too, by node name (with @input.N, @output.N); --reader core:\n"
    "       a TorchScript file read by the core's reader, as the web page reads it (its node names).\n"
    "MODEL: a TorchScript file (.ts/.pt), a torch.export archive (.pt2, told by its content)\n"
    "       or an exported graph (.json).\n"
    "--input-shape: the shape of one forward input (repeat for each, in order);\n"
    "               with it, every value gets its dtype and shape. A dtype may come\n"
    "               first (int64:1,77 for token ids; float32 when none is named),\n"
    "               as in --random.\n";
}

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::string command;
  std::string model;
  std::string out_dir;
  bool json = false;
  std::vector<tg::Shape> shapes;
  std::vector<std::optional<tg::DType>> dtypes;  // per --input-shape: the dtype it names, if any
  tg::cli::BenchOptions bench;
  double tolerance = 1e-4;
  bool markdown = false;
  std::set<std::string> disabled;
  tg::cli::RunOptions run;
};

int parse_count(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    const int n = std::stoi(text, &used);
    if (used == text.size() && n >= 0) return n;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + " '" + text + "': expected a non-negative integer");
}

tg::Shape parse_shape(const std::string& text, const std::string& flag) {
  tg::Shape shape;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    long long d = -1;
    try {
      d = std::stoll(item, &used);
    } catch (const std::exception&) {
    }
    if (used != item.size() || d < 0) throw UsageError(flag + " '" + text + "': expected non-negative integers separated by commas");
    shape.push_back(d);
  }
  if (shape.empty()) throw UsageError(flag + " needs at least one dim");
  return shape;
}

// [DTYPE:]D,D,...: an input's dtype (a name dtype_name() gives: int64,
// float32, bool, ...) if one is named, and its shape.
std::pair<std::optional<tg::DType>, tg::Shape> parse_input(const std::string& text, const std::string& flag) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return {std::nullopt, parse_shape(text, flag)};
  const std::string name = text.substr(0, colon);
  const std::optional<tg::DType> dtype = tg::dtype_from_name(name);
  if (!dtype) throw UsageError(flag + " '" + text + "': '" + name + "' is not a dtype (int64, int32, float32, float16, bool, ...)");
  return {dtype, parse_shape(text.substr(colon + 1), flag)};
}

Args parse_args(int argc, char** argv) {
  Args a;
  if (argc < 2) throw UsageError("missing command");
  a.command = argv[1];
  if (a.command == "-h" || a.command == "--help") {
    std::cout << usage();
    std::exit(0);
  }
  if (a.command != "inspect" && a.command != "export" && a.command != "bench" && a.command != "optimize" && a.command != "check" && a.command != "ops" && a.command != "run") throw UsageError("unknown command '" + a.command + "'");
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--json") a.json = true;
    else if (arg == "--markdown") a.markdown = true;
    else if (arg == "--input-shape") {
      auto [dtype, shape] = parse_input(value(), arg);
      a.dtypes.push_back(dtype);
      a.shapes.push_back(std::move(shape));
    }
    else if (arg == "-o" || arg == "--output") {
      a.out_dir = value();
      a.run.outputs.push_back(a.out_dir);
    }
    else if (arg == "-i" || arg == "--input") a.run.inputs.push_back(value());
    else if (arg == "--random") {
      auto [dtype, shape] = parse_input(value(), arg);
      a.run.random_dtypes.push_back(dtype);
      a.run.random.push_back(std::move(shape));
    }
    else if (arg == "--backend") a.run.backend = value();
    else if (arg == "--dump-nodes") a.run.dump_nodes = value();
    else if (arg == "--reader") a.run.reader = value();
    else if (arg == "--runs") a.bench.runs = std::max(1, parse_count(arg, value()));
    else if (arg == "--warmup") a.bench.warmup = parse_count(arg, value());
    else if (arg == "--threads") a.bench.threads = parse_count(arg, value());
    else if (arg == "--device") a.bench.device = value();
    else if (arg == "--disable") a.disabled.insert(value());
    else if (arg == "--tolerance") {
      const std::string text = value();
      try {
        std::size_t used = 0;
        a.tolerance = std::stod(text, &used);
        if (used != text.size() || !(a.tolerance >= 0)) throw std::invalid_argument(text);
      } catch (const std::exception&) {
        throw UsageError("--tolerance '" + text + "': expected a non-negative number");
      }
    }
    else if (!arg.empty() && arg[0] == '-') throw UsageError("unknown option '" + arg + "'");
    else if (a.model.empty()) a.model = arg;
    else throw UsageError("unexpected argument '" + arg + "'");
  }
  if (a.model.empty() && a.command != "ops") throw UsageError("missing MODEL");
  if (a.command == "export" && a.out_dir.empty()) throw UsageError("export needs -o DIR");
  if (a.command == "bench" && a.shapes.empty()) throw UsageError("bench needs --input-shape for each input");
  if (a.command != "run" && (!a.run.inputs.empty() || !a.run.random.empty())) throw UsageError("-i and --random are for run");
  if (a.command != "run" && !a.run.dump_nodes.empty()) throw UsageError("--dump-nodes is for run");
  if (a.run.reader != "libtorch" && a.run.reader != "core") throw UsageError("--reader '" + a.run.reader + "': expected libtorch or core");
  if (a.command != "run" && a.run.reader != "libtorch") throw UsageError("--reader is for run");
  if (!a.run.dump_nodes.empty() && !a.run.dump_nodes.ends_with(".safetensors")) throw UsageError("--dump-nodes " + a.run.dump_nodes + ": expected FILE.safetensors");
  if (a.command == "run") {
    bool known = false;
    for (const auto& b : tg::cli::backends()) known = known || b.name == a.run.backend;
    if (!known) throw UsageError("--backend '" + a.run.backend + "': expected " + tg::cli::backend_names());
  }
  return a;
}

tg::ExportedGraph read_model(const Args& a) {
  tg::native::TorchScriptOptions options;
  for (std::size_t i = 0; i < a.shapes.size(); ++i) options.signature.push_back({a.dtypes[i].value_or(tg::DType::kFloat32), a.shapes[i]});
  return tg::native::read_model(a.model, options);
}

int run(const Args& a) {
  if (a.command == "ops") return tg::cli::list_ops(a.markdown);
  if (a.command == "bench") {
    tg::cli::BenchOptions options = a.bench;
    options.model = a.model;
    options.input_shapes = a.shapes;
    options.input_dtypes = a.dtypes;
    return tg::cli::bench(options);
  }
  if (a.command == "run") {
    tg::cli::RunOptions options = a.run;
    options.model = a.model;
    options.threads = a.bench.threads;
    options.device = a.bench.device;
    return tg::cli::run_model(options);
  }
  if (a.command == "check") {
    tg::cli::CheckOptions options;
    options.model = a.model;
    options.input_shapes = a.shapes;
    options.input_dtypes = a.dtypes;
    options.threads = a.bench.threads == 0 ? 1 : a.bench.threads;
    options.tolerance = a.tolerance;
    return tg::cli::check(options);
  }
  tg::ExportedGraph eg = read_model(a);
  if (a.command == "optimize") {
    // The LibTorch backend evaluates constant folding.
    auto backend = tg::native::make_libtorch_backend();
    tg::DefaultsOptions defaults;
    defaults.disabled = a.disabled;
    const tg::OptimizeReport report = tg::optimize(eg.graph, std::nullopt, std::nullopt, defaults, backend->evaluator());
    std::cout << (a.json ? report.json(1) + "\n" : report.table());
    if (a.out_dir.empty()) return 0;
  }
  if (a.command == "export" || a.command == "optimize") {
    std::filesystem::create_directories(a.out_dir);
    const std::string stem = std::filesystem::path(a.model).stem().string();
    const std::string json = (std::filesystem::path(a.out_dir) / (stem + ".json")).string();
    tg::save_graph(eg, json);
    std::cout << "wrote " << json << " and " << (std::filesystem::path(a.out_dir) / (stem + ".safetensors")).string() << " ("
              << eg.graph.num_nodes() << " nodes, " << eg.graph.constants().size() << " constants)\n";
    return 0;
  }
  if (a.json) {
    std::string view = tg::module_graph_json(tg::module_graph(eg.graph), 1);
    // The seed's view, plus the activation per output and the geometry.
    view.pop_back();  // closing brace
    while (!view.empty() && (view.back() == '\n' || view.back() == ' ')) view.pop_back();
    std::cout << view << ",\n \"activation\": " << tg::output_activation_json(tg::output_activation(eg.graph))
              << ",\n \"geometry\": " << tg::geometry_json(tg::network_geometry(eg.graph)) << "\n}\n";
    return 0;
  }
  tg::cli::inspect_text(eg, a.model);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const UsageError& e) {
    std::cerr << "tracegraph: " << e.what() << "\n" << usage();
    return 2;
  } catch (const tg::Error& e) {
    std::cerr << "tracegraph: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "tracegraph: error: " << tg::error_code_name(tg::ErrorCode::kOutOfMemory)
              << ": an allocation failed (the process ran out of memory or past its limit)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tracegraph: error: internal: " << e.what() << "\n";
    return 1;
  }
}
