// Limits the loaders enforce before they trust anything a file says. Every
// size, count and depth read from a file is checked against these before it
// is used to allocate or index; going past one is kLimitExceeded.
#pragma once

#include <cstdint>

namespace tracegraph {

struct LoadLimits {
  std::uint64_t max_file_bytes = 4ull << 30;        // any one file read whole
  std::uint64_t max_header_bytes = 100ull << 20;    // a safetensors JSON header
  std::uint64_t max_tensor_bytes = 2ull << 30;      // one tensor's data
  std::uint64_t max_tensors = 1u << 20;             // tensors in one weights file
  std::uint64_t max_nodes = 1u << 20;               // nodes in one graph
  std::uint64_t max_values = 4u << 20;              // values in one graph
  std::uint64_t max_rank = 16;                      // dims of one shape
  std::uint64_t max_json_depth = 128;               // nesting of any JSON document
  // One string or key of any JSON document: a name, a target, a stack trace
  // (a 50 MB node target took 1.1 GB in copies of it).
  std::uint64_t max_json_string_bytes = 1u << 20;
  // The parsed form of one JSON document, counted as it is built: 3-5 times
  // a .pt2 model JSON's bytes (a 24-block ViT's 2.3 MB took 8.2 MB), 9 times a
  // graph JSON's; a 25,000-node .pt2 fits.
  std::uint64_t max_json_memory_bytes = 256ull << 20;
  std::uint64_t max_archive_entries = 1u << 16;     // entries of one zip archive
  std::uint64_t max_pickle_ops = 1u << 24;          // opcodes one pickle may run
  // One JSON, pickle or code entry of an archive (a .pt2's model JSON, a
  // TorchScript archive's data.pkl or code/*.py), inflated or stored.
  std::uint64_t max_document_bytes = 256ull << 20;
  // All the bytes one archive's deflated entries may inflate to, in all
  // reads together (a stored entry is a view and costs nothing).
  std::uint64_t max_inflated_bytes = 8ull << 30;
  // The TorchScript reader: methods and functions inlined in all (each call
  // is one, however deep), loop trips unrolled in all, trips of one loop,
  // and nesting of one expression (parentheses, brackets, and postfix chains
  // such as x[0][0]... or x.T.T...).
  // 65,536 inlined calls: a model makes one per module call and function
  // call (hundreds to a few thousand); a hostile file's then cost about a
  // second in wasm, where 2^20 took twenty.
  std::uint64_t max_inlined_calls = 1u << 16;
  std::uint64_t max_loop_trips = 1u << 20;
  // Statements the TorchScript reader runs in all: each line of a body once
  // per loop trip and per inlined call. The calls and trips caps bound each
  // alone, not their product (65,536 calls of a function of 16 lines); a
  // statement costs about 10 us natively (two nested range(1000) loops took
  // 14 s and 830 MB), and the largest models run a few thousand.
  std::uint64_t max_statements = 1u << 17;
  std::uint64_t max_trips_per_loop = 1u << 16;
  std::uint64_t max_call_depth = 64;
  // Blocks (if, for) open at once in the TorchScript reader, across inlined
  // calls: each is a level of its recursion (3,000 nested ifs took the
  // stack). Python itself stops at 100 levels of indentation in a function;
  // torch's printer nests a few per function.
  std::uint64_t max_block_depth = 200;
  std::uint64_t max_expression_depth = 200;
  // One line of a code file: physical, checked before LibTorch's parser sees
  // it (screen_torchscript_archive), and logical (physical lines a bracket
  // joins) in the core's reader. Torch's printer writes short lines;
  // LibTorch's parser slows past linear on a line of megabytes, and the core's
  // tokens of a 10 MB line took 1.8 GB.
  std::uint64_t max_code_line_bytes = 1u << 20;
};

}  // namespace tracegraph
