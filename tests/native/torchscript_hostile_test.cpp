// Hostile TorchScript files through the native reader: what LibTorch's own
// loader would crash, hang or balloon on is refused by the core's screen
// (screen_torchscript_archive) before torch::jit::load sees it, and what
// LibTorch's Inline would expand without end is counted first. Each file is a
// module LibTorch saved, rebuilt with one entry changed, so that a refusal is
// the screen's and not a broken archive's (AValidModuleRebuiltStillReads).
#include <torch/script.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "native/test_models.h"
#include "sdk/formats/zip_builder.h"
#include "test_util.h"
#include "tracegraph/file_io.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/native/torchscript.h"
#include "tracegraph/torchscript_archive.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph::native {
namespace {

using test::ZipBuilder;

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "tracegraph_hostile_ts";
  std::filesystem::create_directories(dir);
  return dir / name;
}

// The entries of a module LibTorch saved whose forward is `forward`, by name.
std::map<std::string, std::string> saved_entries(const std::string& forward) {
  torch::jit::Module m("M");
  m.define(forward);
  const auto path = scratch("saved.pt").string();
  m.save(path);
  const auto bytes = read_file_bytes(path, 1u << 26);
  const ZipArchive zip = ZipArchive::open(*bytes, bytes, path);
  std::map<std::string, std::string> entries;
  for (const ZipEntry& e : zip.entries()) entries[e.name] = std::string(zip.read(e).text());
  return entries;
}

std::string code_entry(const std::map<std::string, std::string>& entries) {
  for (const auto& [name, text] : entries) {
    if (name.find("/code/__torch__.py") != std::string::npos && name.ends_with(".py")) return name;
  }
  ADD_FAILURE() << "no code/__torch__.py in the saved module";
  return {};
}

// The entries written back as a zip (stored, in name order) at scratch(name).
std::string rebuilt(const std::map<std::string, std::string>& entries, const std::string& name) {
  ZipBuilder z;
  for (const auto& [entry, text] : entries) z.stored(entry, text);
  const auto path = scratch(name).string();
  write_file_bytes(path, z.finish());
  return path;
}

const std::string kIdentity = "def forward(self, x):\n    return x\n";

// A saved identity module whose `return x` returns `expression` instead.
std::string returning(const std::string& expression, const std::string& name) {
  auto entries = saved_entries(kIdentity);
  std::string& code = entries[code_entry(entries)];
  const auto at = code.find("return x");
  EXPECT_NE(at, std::string::npos) << code;
  code.replace(at, 8, "return " + expression);
  return rebuilt(entries, name);
}

TEST(TorchScriptHostileNativeTest, AValidModuleRebuiltStillReads) {
  const ExportedGraph g = read_torchscript(returning("torch.relu(((x)))", "valid.pt"));
  ASSERT_EQ(g.graph.num_nodes(), 1u);
  EXPECT_EQ(g.graph.node(g.graph.nodes().front()).op, "aten::relu");
}

TEST(TorchScriptHostileNativeTest, TenThousandNestedParenthesesAreALimitNotASignal) {
  const std::string path = returning(std::string(10000, '(') + "x" + std::string(10000, ')'), "parens.pt");
  EXPECT_TG_ERROR(load_torchscript_module(path), ErrorCode::kLimitExceeded, "code/__torch__.py line");
  EXPECT_TG_ERROR(load_torchscript_module(path), ErrorCode::kLimitExceeded, "nested deeper than max_expression_depth (200)");
}

TEST(TorchScriptHostileNativeTest, PostfixChainsAHundredThousandLongAreALimit) {
  std::string index = "x", attr = "x";
  for (int i = 0; i < 100000; ++i) {
    index += "[0]";
    attr += ".T";
  }
  EXPECT_TG_ERROR(load_torchscript_module(returning(index, "index_chain.pt")), ErrorCode::kLimitExceeded, "max_expression_depth");
  EXPECT_TG_ERROR(load_torchscript_module(returning(attr, "attr_chain.pt")), ErrorCode::kLimitExceeded, "max_expression_depth");
}

TEST(TorchScriptHostileNativeTest, ATenMegabyteLineIsALimitNotAHang) {
  std::string list = "[0";
  while (list.size() < (10u << 20)) list += ", 0";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TG_ERROR(load_torchscript_module(returning(list + "]", "long_line.pt")), ErrorCode::kLimitExceeded,
                  "bytes, more than max_code_line_bytes (1048576)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(TorchScriptHostileNativeTest, APickleStringLongerThanItsBytesIsTruncated) {
  auto entries = saved_entries(kIdentity);
  for (auto& [name, text] : entries) {
    if (name.ends_with("/data.pkl")) text = std::string("\x80\x02X\xff\xff\xff\xff", 7) + "abc.";
  }
  EXPECT_TG_ERROR(load_torchscript_module(rebuilt(entries, "binunicode.pt")), ErrorCode::kTruncated, "data.pkl");
}

TEST(TorchScriptHostileNativeTest, ADeflatedPickleThatInflatesToGigabytesIsRefusedBeforeInflating) {
  const auto entries = saved_entries(kIdentity);
  ZipBuilder z;
  for (const auto& [name, text] : entries) {
    if (!name.ends_with("/data.pkl")) {
      z.stored(name, text);
      continue;
    }
    // 258 MiB of 'x' in 1.6 MB of DEFLATE, as its directory says (more
    // than a pickle may be; LibTorch would inflate it whole).
    const std::size_t matches = 1u << 20;
    const auto bomb = test::deflate_run('x', matches, 0);
    z.local(name, 8, 0, bomb.size(), 1 + 258 * matches, bomb);
  }
  const auto path = scratch("bomb.pt").string();
  write_file_bytes(path, z.finish());
  EXPECT_TG_ERROR(load_torchscript_module(path), ErrorCode::kLimitExceeded, "max_document_bytes");
}

// forward calls f0; each f<k> calls f<k+1> twice; f<n-1> is a relu. LibTorch
// compiles each method once; only inlining them all is exponential.
std::string doubling_calls(int n) {
  std::string code = "def forward(self, x):\n    return self.f0(x)\n";
  for (int k = 0; k + 1 < n; ++k) {
    const std::string next = "self.f" + std::to_string(k + 1);
    code += "def f" + std::to_string(k) + "(self, x):\n    return " + next + "(" + next + "(x))\n";
  }
  return code + "def f" + std::to_string(n - 1) + "(self, x):\n    return torch.relu(x)\n";
}

std::string saved_module(const std::string& methods, const std::string& name) {
  torch::jit::Module m("M");
  m.define(methods);
  const auto path = scratch(name).string();
  m.save(path);
  return path;
}

TEST(TorchScriptHostileNativeTest, ExponentialInliningIsCountedBeforeInline) {
  // 5 levels inline 1 + 2 + 4 + 8 + 16 calls and read; 40 levels (2^40 calls)
  // are counted in linear time and refused before LibTorch's Inline runs.
  EXPECT_EQ(read_torchscript(saved_module(doubling_calls(5), "doubling5.pt")).graph.num_nodes(), 16u);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TG_ERROR(read_torchscript(saved_module(doubling_calls(40), "doubling40.pt")), ErrorCode::kLimitExceeded,
                  "forward would inline more than max_inlined_calls (65536) calls");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(TorchScriptHostileNativeTest, AnArchiveTheCoreRefusesSaysWhyNotThatItIsNoModule) {
  // What the core refuses as a .pt2 is not handed to LibTorch to be called
  // "not a TorchScript module": the screen says what is wrong with it.
  ZipBuilder z;
  for (int i = 0; i < 1000; ++i) z.stored("m/data/" + std::to_string(i), "");
  auto bytes = z.finish();
  const std::uint32_t past_the_end = static_cast<std::uint32_t>(bytes.size()) + 100;  // the end record's directory offset
  for (int k = 0; k < 4; ++k) bytes[bytes.size() - 6 + k] = static_cast<std::byte>((past_the_end >> (8 * k)) & 0xffu);
  const auto path = scratch("directory.pt2").string();
  write_file_bytes(path, bytes);
  try {
    read_model(path);
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(e.code(), ErrorCode::kSchema) << e.what();
    EXPECT_EQ(std::string(e.message()).find("not a TorchScript module"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.message()).find("directory"), std::string::npos) << e.what();
  }
}

TEST(TorchScriptHostileNativeTest, ACustomOpThisBuildLacksIsNamed) {
  // torchvision's nms, as a scripted detector's code calls it; LibTorch's
  // message starts with a newline, which once left the error empty.
  EXPECT_TG_ERROR(load_torchscript_module(returning("ops.torchvision.nms(x, x, 0.5)", "nms.pt")), ErrorCode::kUnsupported,
                  "calls torchvision::nms, an op LibTorch here does not have: it is registered by the library that defines it (torchvision)");
}

TEST(TorchScriptHostileNativeTest, EveryTestModelPassesTheScreen) {
  // The screen refuses no file torch wrote: every TorchScript test model.
  int screened = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TRACEGRAPH_MODELS_DIR)) {
    const auto ext = entry.path().extension();
    if ((ext != ".pt" && ext != ".ts") || entry.path().filename().string().starts_with("bad_")) continue;
    EXPECT_NO_THROW(screen_torchscript_archive(entry.path().string())) << entry.path();
    ++screened;
  }
  EXPECT_GT(screened, 20);
}

}  // namespace
}  // namespace tracegraph::native
