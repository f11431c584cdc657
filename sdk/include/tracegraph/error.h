// The one error model of the tracegraph core.
//
// Every failure the SDK reports is a tracegraph::Error: a machine-readable
// ErrorCode plus a message that names what a person can find (the file, the
// byte offset or JSON pointer, the node and its op). The core throws it; the
// native edge translates LibTorch's exceptions into it and the wasm edge turns
// it into a JavaScript Error carrying the same code and message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tracegraph {

enum class ErrorCode : std::uint16_t {
  kInvalidArgument = 1,  // a caller passed something the API does not accept
  kIo,                   // a file could not be opened, read or written
  kTruncated,            // the input ends before what its header promises
  kParse,                // not well-formed JSON (or another syntax)
  kSchema,               // well-formed, but a key is missing or has the wrong type
  kUnsupportedVersion,   // a format or protocol version this build does not read
  kUnknownDType,         // a dtype name no table here knows
  kBadShape,             // negative or overflowing dims, or a size that disagrees with the data
  kOutOfRange,           // an offset or index past the end of what it indexes
  kOverlap,              // two byte ranges that share bytes
  kGap,                  // bytes of a buffer that no tensor covers
  kDanglingId,           // an id that names nothing
  kDuplicateId,          // an id defined twice
  kDuplicateName,        // a name used twice where names must be unique
  kCycle,                // a node that (transitively) reads its own output
  kMultipleProducers,    // a value written by more than one node
  kUnproducedOutput,     // a value read (or returned) that nothing produces
  kLimitExceeded,        // a configured limit (file size, tensor size, node count, depth) was hit
  kTreeSpecMismatch,     // a structured value does not match its tree spec
  kShapeMismatch,        // a tensor's shape disagrees with what is expected
  kDTypeMismatch,        // a tensor's dtype disagrees with what is expected
  kNotFound,             // a name looked up is not there
  kNotFinalized,         // the graph must be finalized first
  kUnsupported,          // a valid construct this build cannot handle (yet)
  kInternal,             // a broken invariant inside tracegraph itself
  kOutOfMemory,          // a run needs more memory than the budget allows, or an allocation failed
  kNeedsInputShapes,     // reading this model needs its input shapes (scripted code that branches on them)
};

// Stable snake_case name of a code ("dangling_id"); used in messages, JSON and JS.
std::string_view error_code_name(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);

  ErrorCode code() const noexcept { return code_; }
  // The message without the "code: " prefix that what() carries.
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

// Throws Error(code, message). A function so call sites stay one line.
[[noreturn]] void fail(ErrorCode code, const std::string& message);

}  // namespace tracegraph
