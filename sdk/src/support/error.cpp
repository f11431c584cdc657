#include "tracegraph/error.h"

#include "support/message.h"

namespace tracegraph {

std::string_view error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kTruncated: return "truncated";
    case ErrorCode::kParse: return "parse";
    case ErrorCode::kSchema: return "schema";
    case ErrorCode::kUnsupportedVersion: return "unsupported_version";
    case ErrorCode::kUnknownDType: return "unknown_dtype";
    case ErrorCode::kBadShape: return "bad_shape";
    case ErrorCode::kOutOfRange: return "out_of_range";
    case ErrorCode::kOverlap: return "overlap";
    case ErrorCode::kGap: return "gap";
    case ErrorCode::kDanglingId: return "dangling_id";
    case ErrorCode::kDuplicateId: return "duplicate_id";
    case ErrorCode::kDuplicateName: return "duplicate_name";
    case ErrorCode::kCycle: return "cycle";
    case ErrorCode::kMultipleProducers: return "multiple_producers";
    case ErrorCode::kUnproducedOutput: return "unproduced_output";
    case ErrorCode::kLimitExceeded: return "limit_exceeded";
    case ErrorCode::kTreeSpecMismatch: return "tree_spec_mismatch";
    case ErrorCode::kShapeMismatch: return "shape_mismatch";
    case ErrorCode::kDTypeMismatch: return "dtype_mismatch";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kNotFinalized: return "not_finalized";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kInternal: return "internal";
    case ErrorCode::kOutOfMemory: return "out_of_memory";
    case ErrorCode::kNeedsInputShapes: return "needs_input_shapes";
  }
  return "unknown";
}

namespace {
// The last guard against a message that quotes a hostile file whole (call
// sites cut what they quote; this bounds what one of them forgot).
constexpr std::size_t kMaxMessage = 4096;
std::string bounded(const std::string& message) {
  return message.size() <= kMaxMessage ? message : detail::cut_for_message(message, kMaxMessage);
}
}  // namespace

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string(error_code_name(code)) + ": " + bounded(message)),
      code_(code),
      message_(bounded(message)) {}

void fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

}  // namespace tracegraph
