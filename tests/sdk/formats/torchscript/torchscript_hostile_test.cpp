// Hostile TorchScript archives (issue 50), made in the test: code nested
// 10,000 deep, postfix chains 100,000 long, methods that inline 2^40 calls,
// loops that unroll past the limits, a 10 MB line. Each is a typed error
// naming the limit, or a correct read; and one archive read twice gives the
// same graph, names and ids.
#include <string>
#include <vector>

#include "archive_builder.h"
#include "test_util.h"
#include "tracegraph/exported_graph.h"

namespace tracegraph {
namespace {

using test::archive;
using test::forward_returning;
using test::read;

TEST(TorchScriptHostileTest, AValidModuleReads) {
  const ExportedGraph g = read(archive(forward_returning("torch.relu(x)")));
  EXPECT_EQ(g.graph.num_nodes(), 1u);
}

TEST(TorchScriptHostileTest, TenThousandNestedParenthesesAreALimitNotAStackOverflow) {
  EXPECT_TG_ERROR(read(archive(forward_returning(std::string(10000, '(') + "x" + std::string(10000, ')')))), ErrorCode::kLimitExceeded,
                  "hostile.ts:m/code/__torch__.py line 7: an expression nested deeper than max_expression_depth (200)");
}

TEST(TorchScriptHostileTest, PostfixChainsAHundredThousandLongAreALimit) {
  std::string index = "x", attr = "x";
  for (int i = 0; i < 100000; ++i) {
    index += "[0]";
    attr += ".T";
  }
  EXPECT_TG_ERROR(read(archive(forward_returning(index))), ErrorCode::kLimitExceeded, "max_expression_depth");
  EXPECT_TG_ERROR(read(archive(forward_returning(attr))), ErrorCode::kLimitExceeded, "max_expression_depth");
}

// forward calls f0; each f<k> calls f<k+1> twice; f<n-1> is a relu.
std::string doubling_calls(int n) {
  std::string code = forward_returning("(self).f0(x, )");
  for (int k = 0; k + 1 < n; ++k) {
    code += "  def f" + std::to_string(k) + "(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    _0 = (self).f" + std::to_string(k + 1) +
            "(x, )\n    return (self).f" + std::to_string(k + 1) + "(_0, )\n";
  }
  code += "  def f" + std::to_string(n - 1) + "(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    return torch.relu(x)\n";
  return code;
}

TEST(TorchScriptHostileTest, ExponentialInliningStopsAtTheTotalOfCalls) {
  // 4 levels inline 1 + 2 + 4 + 8 + 16 calls and read; 40 levels (2^40 calls) stop at the limit.
  EXPECT_EQ(read(archive(doubling_calls(5))).graph.num_nodes(), 16u);
  LoadLimits limits;
  limits.max_inlined_calls = 10000;
  EXPECT_TG_ERROR(read(archive(doubling_calls(40)), limits), ErrorCode::kLimitExceeded, "more than max_inlined_calls (10000) calls inlined in all");
}

TEST(TorchScriptHostileTest, ALoopOf65535TripsReadsInLinearTime) {
  // Every trip names a node and a value "x0": names are made in constant time
  // (a probe from x0.1 each time made this quadratic: 8,000 trips took 9 s).
  const ExportedGraph g = read(archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n"
                                       "    for _0 in range(65535):\n      x0 = torch.relu(x0)\n    return x0\n"));
  EXPECT_EQ(g.graph.num_nodes(), 65535u);
  EXPECT_TRUE(g.graph.find_value("x0.65534"));
}

TEST(TorchScriptHostileTest, NestedLoopsStopAtTheTotalOfTrips) {
  LoadLimits limits;
  limits.max_loop_trips = 50000;
  EXPECT_TG_ERROR(read(archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n    for _0 in range(1000):\n"
                               "      for _1 in range(1000):\n        x0 = torch.relu(x0)\n    return x0\n"),
                       limits),
                  ErrorCode::kLimitExceeded, "line 9: loops run more than max_loop_trips (50000) trips in all");
  EXPECT_TG_ERROR(read(archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n    for _0 in range(70000):\n"
                               "      x0 = torch.relu(x0)\n    return x0\n")),
                  ErrorCode::kLimitExceeded, "a loop of more than max_trips_per_loop (65536) trips");
}

TEST(TorchScriptHostileTest, TripsTimesCallsStopAtTheTotalOfStatements) {
  // Two nested range(1000) loops are 10^6 trips, under max_loop_trips (2^20),
  // and a million statements took 14 s and 830 MB natively (fuzz_torchscript
  // found it); they stop at max_statements.
  EXPECT_TG_ERROR(read(archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n    for _0 in range(1000):\n"
                               "      for _1 in range(1000):\n        x0 = torch.relu(x0)\n    return x0\n")),
                  ErrorCode::kLimitExceeded, "line 10: more than max_statements (131072) statements run in all (loops unrolled, calls inlined)");
  // 10,000 trips each inlining a call of 20 statements: each cap alone
  // allows it (the statements' cap lowered here for the sanitizers' time).
  std::string g = "  def g(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n";
  for (int k = 0; k < 18; ++k) g += "    x0 = torch.relu(x0)\n";
  g += "    return x0\n";
  LoadLimits fewer;
  fewer.max_statements = 20000;
  EXPECT_TG_ERROR(read(archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n    for _0 in range(10000):\n"
                               "      x0 = (self).g(x0, )\n    return x0\n" + g), fewer),
                  ErrorCode::kLimitExceeded, "more than max_statements (20000) statements run in all");
  // A smaller product reads.
  LoadLimits limits;
  limits.max_statements = 2000;
  EXPECT_EQ(read(archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n    for _0 in range(30):\n"
                         "      for _1 in range(30):\n        x0 = torch.relu(x0)\n    return x0\n"),
                 limits).graph.num_nodes(), 900u);
}

TEST(TorchScriptHostileTest, DeeplyNestedBlocksStopAtMaxBlockDepth) {
  // 3,000 nested ifs took the reader's stack (fuzz_torchscript, from the
  // hostile generator's deep_indentation); 50 read.
  const auto nested = [](int levels) {
    std::string body = "  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n";
    for (int k = 0; k < levels; ++k) body += std::string(4 + 2 * k, ' ') + "if True:\n";
    return body + std::string(4 + 2 * levels, ' ') + "x = torch.relu(x)\n    return x\n";
  };
  EXPECT_TG_ERROR(read(archive(nested(3000))), ErrorCode::kLimitExceeded, "blocks nested deeper than max_block_depth (200)");
  EXPECT_EQ(read(archive(nested(50))).graph.num_nodes(), 1u);
}

TEST(TorchScriptHostileTest, ATenMegabyteListLiteralIsRefusedAtOnce) {
  // Its tokens and expressions took 1.8 GB before the line limit.
  std::string list = "[";
  while (list.size() < (10u << 20)) list += "1, ";
  list += "1]";
  EXPECT_TG_ERROR(read(archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    _0 = " + list + "\n    return x\n")),
                  ErrorCode::kLimitExceeded, "__torch__.py line 7: a line of more than max_code_line_bytes (1048576) bytes");
  // The same list over many physical lines is one logical line, and as long.
  std::string lines = "[";
  while (lines.size() < (4u << 20)) lines += "1,\n      ";  // 3 bytes of line per 9 of file
  lines += "1]";
  EXPECT_TG_ERROR(read(archive("  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    _0 = " + lines + "\n    return x\n")),
                  ErrorCode::kLimitExceeded, "max_code_line_bytes (1048576)");
}

TEST(TorchScriptHostileTest, AHugeCallTargetIsQuotedCut) {
  // A megabyte of name (under the line limit) in a call the reader refuses.
  try {
    read(archive(forward_returning("torch." + std::string(1000000, 'f') + "(x)")));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_LT(e.message().size(), 5000u) << e.message().substr(0, 300);
  }
}

TEST(TorchScriptHostileTest, OneArchiveReadTwiceGivesTheSameGraph) {
  const auto bytes = archive(
      "  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n    for _0 in range(50):\n"
      "      x0 = (self).block(x0, )\n    return (self).block(x0, )\n"
      "  def block(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    _1 = torch.relu(x)\n    _2 = torch.sigmoid(x)\n    return torch.mul(_1, _2)\n");
  const std::string first = graph_json(read(bytes));
  EXPECT_EQ(graph_json(read(bytes)), first);
  EXPECT_NE(first.find("\"_1.50\""), std::string::npos) << first.substr(0, 2000);
}

}  // namespace
}  // namespace tracegraph

namespace tracegraph {
namespace {

// The screen before LibTorch's loader (screen_torchscript_archive): brackets
// inside strings and comments do not count, and the line it names is the
// physical line, after triple-quoted strings that span several.
TEST(TorchScriptScreenTest, CountsBracketsOutsideStringsAndCommentsAndNamesTheLine) {
  const std::string opened(10000, '(');
  const std::string code = "class M(Module):\n"
                           "  \"\"\"a docstring\n  over lines " + opened + "\n  \"\"\"\n"
                           "  s = \"" + opened + "\"  # " + opened + "\n"
                           "  t = '\\'' + \"\\\"\"\n";
  const auto ok = test::scripted_archive(test::module_object("__torch__.M"), {{"__torch__.py", code}});
  EXPECT_NO_THROW(screen_torchscript_archive(ok, "strings.pt"));
  const auto deep = test::scripted_archive(test::module_object("__torch__.M"),
                                           {{"__torch__.py", code + "  u = " + std::string(300, '[') + std::string(300, ']') + "\n"}});
  EXPECT_TG_ERROR(screen_torchscript_archive(deep, "deep.pt"), ErrorCode::kLimitExceeded,
                  "deep.pt:m/code/__torch__.py line 7 (byte ");
  std::string chain = "  v = x";
  for (int i = 0; i < 150; ++i) chain += ".T[0]";
  const auto linked = test::scripted_archive(test::module_object("__torch__.M"), {{"__torch__.py", code + chain + "\n"}});
  EXPECT_TG_ERROR(screen_torchscript_archive(linked, "chain.pt"), ErrorCode::kLimitExceeded, "line 7 (byte ");
  // LibTorch's parser recurses per prefix operator, per binary operator of a
  // chain and per right-associative link (100,000 minuses, a sum of 10,000
  // terms took its stack); a binary operator ends a prefix's operand, and
  // what torch writes (negative literals, a - -b, 1e-05, ->) passes.
  const auto line = [&](const std::string& text) {
    return test::scripted_archive(test::module_object("__torch__.M"), {{"__torch__.py", code + "  w = " + text + "\n"}});
  };
  const auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  for (const std::string& hostile : std::vector<std::string>{std::string(100000, '-') + "x", std::string(300, '~') + "x", repeat("not ", 300) + "x",
                                                             "x" + repeat(" ** x", 300), "x" + repeat(" if c else x", 300),
                                                             repeat("-(", 150) + "x" + repeat(")", 150), "x" + repeat(" + x", 300),
                                                             "x" + repeat(" - -x", 250), repeat("not x and ", 300) + "y"}) {
    SCOPED_TRACE(hostile.substr(0, 40));
    EXPECT_TG_ERROR(screen_torchscript_archive(line(hostile), "prefix.pt"), ErrorCode::kLimitExceeded, "line 7 (byte ");
  }
  const auto returned = test::scripted_archive(test::module_object("__torch__.M"),
                                               {{"__torch__.py", code + "  def f(self):\n    return " + repeat("not ", 300) + "x\n"}});
  EXPECT_TG_ERROR(screen_torchscript_archive(returned, "return.pt"), ErrorCode::kLimitExceeded, "line 8 (byte ");
  for (const std::string& fine : std::vector<std::string>{"[" + repeat("-1, ", 1000) + "-1]", "x" + repeat(" - -x", 90), "torch.mul(x, 1e-05) - -2.5",
                                                          repeat("not x and ", 90) + "y", repeat("x ** 2 + ", 90) + "y", "a if c else b",
                                                          "torch.add(" + repeat("x + x, ", 500) + "x)", "x == -1 and y >= 2 or z != 3"}) {
    EXPECT_NO_THROW(screen_torchscript_archive(line(fine), "fine.pt")) << fine.substr(0, 40);
  }
  // Not a zip archive: nothing to screen; LibTorch's own error says what it is.
  const std::string text = "not a zip";
  EXPECT_NO_THROW(screen_torchscript_archive(std::as_bytes(std::span(text.data(), text.size())), "text.pt"));
}

}  // namespace
}  // namespace tracegraph
