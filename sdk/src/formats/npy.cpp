#include "tracegraph/npy.h"

#include <cstring>
#include <limits>
#include <optional>

#include "tracegraph/error.h"
#include "tracegraph/file_io.h"

namespace tracegraph {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

// The descr of each dtype NumPy can hold ('<' little-endian, '|' one byte).
struct Descr {
  DType dtype;
  const char* text;
};
constexpr Descr kDescrs[] = {
    {DType::kFloat32, "<f4"}, {DType::kFloat64, "<f8"}, {DType::kFloat16, "<f2"}, {DType::kInt64, "<i8"},
    {DType::kInt32, "<i4"},   {DType::kInt16, "<i2"},   {DType::kInt8, "|i1"},    {DType::kUInt8, "|u1"},
    {DType::kBool, "|b1"},  {DType::kComplex64, "<c8"},
};

// A reader of the header's Python literal: a dict of string keys whose values
// are strings, True/False, or tuples of integers. Nothing else appears in a
// header np.save writes.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view source, std::size_t offset)
      : text_(text), source_(source), offset_(offset) {}

  struct Value {
    enum class Kind { kString, kBool, kTuple } kind = Kind::kString;
    std::string string;
    bool boolean = false;
    std::vector<std::int64_t> tuple;
  };

  std::vector<std::pair<std::string, Value>> dict() {
    std::vector<std::pair<std::string, Value>> out;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = string();
      expect(':');
      out.emplace_back(std::move(key), value());
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != '}') bad("expected ',' or '}'");
    }
    ++at_;
    skip_space();
    if (at_ != text_.size()) bad("text after the dict");
    return out;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail(ErrorCode::kParse, std::string(source_) + ": .npy header at byte " + std::to_string(offset_ + at_) + ": " + what);
  }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\t')) ++at_;
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void expect(char c) {
    skip_space();
    if (peek() != c) bad(std::string("expected '") + c + "'");
    ++at_;
  }
  std::string string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string");
    const std::size_t end = text_.find(quote, at_ + 1);
    if (end == std::string_view::npos) bad("an unterminated string");
    std::string s(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return s;
  }
  Value value() {
    skip_space();
    Value v;
    if (peek() == '\'' || peek() == '"') {
      v.string = string();
    } else if (text_.substr(at_, 4) == "True") {
      v.kind = Value::Kind::kBool;
      v.boolean = true;
      at_ += 4;
    } else if (text_.substr(at_, 5) == "False") {
      v.kind = Value::Kind::kBool;
      at_ += 5;
    } else if (peek() == '(') {
      v.kind = Value::Kind::kTuple;
      ++at_;
      while (true) {
        skip_space();
        if (peek() == ')') break;
        v.tuple.push_back(integer());
        skip_space();
        if (peek() == ',') ++at_;
        else if (peek() != ')') bad("expected ',' or ')' in a tuple");
      }
      ++at_;
    } else {
      bad("expected a string, True, False or a tuple");
    }
    return v;
  }
  std::int64_t integer() {
    const std::size_t start = at_;
    std::int64_t n = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int digit = peek() - '0';
      if (n > (std::numeric_limits<std::int64_t>::max() - digit) / 10) bad("a dim past int64");
      n = n * 10 + digit;
      ++at_;
    }
    if (peek() == 'L') ++at_;  // Python 2's long
    if (at_ == start) bad("expected a non-negative integer");
    return n;
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t offset_;
  std::size_t at_ = 0;
};

std::uint32_t read_le(const std::byte* p, std::size_t n) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

Tensor parse_npy(std::span<const std::byte> bytes, std::string_view source, const LoadLimits& limits) {
  const std::string src(source);
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    fail(ErrorCode::kParse, src + ": not a .npy file (no \\x93NUMPY magic at byte 0)");
  }
  const int major = static_cast<int>(bytes[6]);
  const int minor = static_cast<int>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    fail(ErrorCode::kUnsupported, src + ": .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                                      " at byte 6 (1.0, 2.0 and 3.0 are read)");
  }
  const std::size_t length_size = major == 1 ? 2 : 4;
  const std::size_t header_start = 8 + length_size;
  if (bytes.size() < header_start) fail(ErrorCode::kTruncated, src + ": the file ends in the header length at byte 8");
  const std::uint64_t header_len = read_le(bytes.data() + 8, length_size);
  if (header_len > limits.max_header_bytes) {
    fail(ErrorCode::kLimitExceeded, src + ": a header of " + std::to_string(header_len) + " bytes (limit " +
                                        std::to_string(limits.max_header_bytes) + ")");
  }
  if (header_len > bytes.size() - header_start) {
    fail(ErrorCode::kTruncated, src + ": the header of " + std::to_string(header_len) + " bytes at byte " +
                                    std::to_string(header_start) + " runs past the end of the file (" +
                                    std::to_string(bytes.size()) + " bytes)");
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  std::optional<DType> dtype;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  for (auto& [key, v] : HeaderParser(header, src, header_start).dict()) {
    using Kind = HeaderParser::Value::Kind;
    if (key == "descr") {
      if (v.kind != Kind::kString) fail(ErrorCode::kParse, src + ": .npy header: descr is not a string");
      std::string d = v.string;
      if (d.size() == 3 && d[0] == '=') d[0] = d[2] == '1' ? '|' : '<';  // native order: this host is little-endian
      if (d.size() == 3 && d[0] == '<' && d[2] == '1') d[0] = '|';
      for (const auto& e : kDescrs) {
        if (d == e.text) dtype = e.dtype;
      }
      if (!dtype) {
        fail(ErrorCode::kUnsupported, src + ": element type '" + v.string +
                                          "' (read: little-endian float16/32/64, int8/16/32/64, uint8, bool)");
      }
    } else if (key == "fortran_order") {
      if (v.kind != Kind::kBool) fail(ErrorCode::kParse, src + ": .npy header: fortran_order is not True or False");
      fortran = v.boolean;
    } else if (key == "shape") {
      if (v.kind != Kind::kTuple) fail(ErrorCode::kParse, src + ": .npy header: shape is not a tuple");
      if (v.tuple.size() > limits.max_rank) {
        fail(ErrorCode::kLimitExceeded, src + ": a shape of rank " + std::to_string(v.tuple.size()) + " (limit " +
                                            std::to_string(limits.max_rank) + ")");
      }
      shape = Shape(v.tuple.begin(), v.tuple.end());
    }
  }
  if (!dtype || !fortran || !shape) fail(ErrorCode::kParse, src + ": .npy header lacks " + std::string(!dtype ? "descr" : !fortran ? "fortran_order" : "shape"));
  std::size_t nbytes = 0;
  try {
    nbytes = checked_nbytes(*dtype, *shape);
  } catch (const Error& e) {
    fail(e.code(), src + ": " + e.message());
  }
  if (*fortran && shape->size() > 1) {
    fail(ErrorCode::kUnsupported, src + ": Fortran-ordered data (save np.ascontiguousarray(a) instead)");
  }
  if (nbytes > limits.max_tensor_bytes) {
    fail(ErrorCode::kLimitExceeded, src + ": a tensor of " + std::to_string(nbytes) + " bytes (limit " +
                                        std::to_string(limits.max_tensor_bytes) + ")");
  }
  const std::size_t data_start = header_start + header_len;
  const std::size_t available = bytes.size() - data_start;
  if (available < nbytes) {
    fail(ErrorCode::kTruncated, src + ": shape " + shape_str(*shape) + " of " + std::string(dtype_name(*dtype)) + " needs " +
                                    std::to_string(nbytes) + " bytes after byte " + std::to_string(data_start) + ", the file has " +
                                    std::to_string(available));
  }
  if (available > nbytes) {
    fail(ErrorCode::kParse, src + ": " + std::to_string(available - nbytes) + " bytes after the data of shape " + shape_str(*shape) +
                                " (at byte " + std::to_string(data_start + nbytes) + ")");
  }
  Tensor t = Tensor::zeros(*dtype, *shape);
  if (nbytes) std::memcpy(t.data(), bytes.data() + data_start, nbytes);
  return t;
}

Tensor read_npy(const std::string& path, const LoadLimits& limits) {
  const auto bytes = read_file_bytes(path, limits.max_file_bytes);
  return parse_npy(*bytes, path, limits);
}

std::vector<std::byte> write_npy(const Tensor& tensor) {
  if (tensor.device().type != DeviceType::kCPU) fail(ErrorCode::kInvalidArgument, "write_npy: the tensor is on " + tensor.device().str());
  const char* descr = nullptr;
  for (const auto& e : kDescrs) {
    if (e.dtype == tensor.dtype()) descr = e.text;
  }
  if (!descr) fail(ErrorCode::kUnsupported, "write_npy: NumPy has no " + std::string(dtype_name(tensor.dtype())));
  std::string shape = "(";
  for (std::size_t i = 0; i < tensor.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(tensor.shape()[i]);
  if (tensor.shape().size() == 1) shape += ",";
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const bool v2 = header.size() + 1 + 10 > 65535;
  const std::size_t prefix = v2 ? 12 : 10;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::vector<std::byte> out(prefix + header.size() + tensor.nbytes());
  std::memcpy(out.data(), kMagic, kMagicSize);
  out[6] = std::byte{static_cast<unsigned char>(v2 ? 2 : 1)};
  out[7] = std::byte{0};
  for (std::size_t i = 0; i < prefix - 8; ++i) out[8 + i] = std::byte{static_cast<unsigned char>((header.size() >> (8 * i)) & 0xff)};
  std::memcpy(out.data() + prefix, header.data(), header.size());
  if (tensor.nbytes()) std::memcpy(out.data() + prefix + header.size(), tensor.data(), tensor.nbytes());
  return out;
}

void save_npy(const Tensor& tensor, const std::string& path) { write_file_bytes(path, write_npy(tensor)); }

}  // namespace tracegraph
