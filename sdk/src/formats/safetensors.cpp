#include "tracegraph/safetensors.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "formats/json_limits.h"
#include "support/json_util.h"

namespace tracegraph {

using detail::Json;
using detail::JsonPlace;

const Tensor* Safetensors::find(std::string_view name) const {
  for (const auto& [n, t] : tensors) {
    if (n == name) return &t;
  }
  return nullptr;
}

namespace {

constexpr std::size_t kLengthBytes = 8;

std::uint64_t read_u64_le(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint64_t>(p[i]);
  return v;
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  std::uint64_t begin;
  std::uint64_t end;
};

}  // namespace

Safetensors parse_safetensors(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                              std::string_view source, const LoadLimits& limits) {
  const std::string src(source);
  if (bytes.size() > limits.max_file_bytes) {
    fail(ErrorCode::kLimitExceeded, src + ": " + std::to_string(bytes.size()) + " bytes is over the limit of " +
                                        std::to_string(limits.max_file_bytes));
  }
  if (bytes.size() < kLengthBytes) {
    fail(ErrorCode::kTruncated, src + ": " + std::to_string(bytes.size()) +
                                    " bytes, too short for the 8-byte header length at offset 0");
  }
  const std::uint64_t header_len = read_u64_le(bytes.data());
  if (header_len > limits.max_header_bytes) {
    fail(ErrorCode::kLimitExceeded, src + ": header length " + std::to_string(header_len) + " at offset 0 is over the limit of " +
                                        std::to_string(limits.max_header_bytes) + " bytes");
  }
  if (header_len > bytes.size() - kLengthBytes) {
    fail(ErrorCode::kTruncated, src + ": header length " + std::to_string(header_len) + " at offset 0 runs past the end of the " +
                                    std::to_string(bytes.size()) + "-byte file");
  }
  const std::string_view header_text(reinterpret_cast<const char*>(bytes.data() + kLengthBytes), header_len);
  const Json header = detail::parse_json(header_text, src + " header (from byte 8)", detail::json_limits(limits));
  const JsonPlace place{src, ""};
  detail::expect_object(header, place);

  const std::uint64_t data_start = kLengthBytes + header_len;
  const std::uint64_t data_len = bytes.size() - data_start;
  Safetensors out;
  std::vector<Entry> entries;
  if (header.size() > limits.max_tensors + 1) {
    fail(ErrorCode::kLimitExceeded, src + ": " + std::to_string(header.size()) + " header entries, over the limit of " +
                                        std::to_string(limits.max_tensors) + " tensors");
  }
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const JsonPlace at = place.at(name);
    if (name == "__metadata__") {
      detail::expect_object(it.value(), at);
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        out.metadata[m.key()] = detail::expect_string(m.value(), at.at(m.key()));
      }
      continue;
    }
    detail::expect_object(it.value(), at);
    const std::string dtype_text = detail::expect_string(detail::member(it.value(), "dtype", at), at.at("dtype"));
    const auto dtype = dtype_from_safetensors_name(dtype_text);
    if (!dtype) at.at("dtype").fail_with(ErrorCode::kUnknownDType, "tensor '" + name + "' has unknown dtype '" + dtype_text + "'");
    const JsonPlace shape_at = at.at("shape");
    const Json& shape_json = detail::expect_array(detail::member(it.value(), "shape", at), shape_at);
    if (shape_json.size() > limits.max_rank) {
      shape_at.fail_with(ErrorCode::kLimitExceeded, "tensor '" + name + "' has rank " + std::to_string(shape_json.size()) +
                                                        ", over the limit of " + std::to_string(limits.max_rank));
    }
    Shape shape;
    for (std::size_t i = 0; i < shape_json.size(); ++i) {
      const std::int64_t d = detail::expect_int(shape_json[i], shape_at.at(i));
      if (d < 0) shape_at.at(i).fail_with(ErrorCode::kBadShape, "tensor '" + name + "' has negative dim " + std::to_string(d));
      shape.push_back(d);
    }
    std::size_t nbytes = 0;
    try {
      nbytes = checked_nbytes(*dtype, shape);
    } catch (const Error& e) {
      shape_at.fail_with(e.code(), "tensor '" + name + "': " + e.message());
    }
    if (nbytes > limits.max_tensor_bytes) {
      shape_at.fail_with(ErrorCode::kLimitExceeded, "tensor '" + name + "' needs " + std::to_string(nbytes) +
                                                        " bytes, over the limit of " + std::to_string(limits.max_tensor_bytes));
    }
    const JsonPlace off_at = at.at("data_offsets");
    const Json& offsets = detail::expect_array(detail::member(it.value(), "data_offsets", at), off_at);
    if (offsets.size() != 2) off_at.fail_with(ErrorCode::kSchema, "expected [begin, end], found " + std::to_string(offsets.size()) + " numbers");
    const std::uint64_t begin = detail::expect_index(offsets[0], off_at.at(0), UINT64_MAX);
    const std::uint64_t end = detail::expect_index(offsets[1], off_at.at(1), UINT64_MAX);
    if (begin > end) off_at.fail_with(ErrorCode::kOutOfRange, "tensor '" + name + "' begins at " + std::to_string(begin) + " after its end " + std::to_string(end));
    if (end > data_len) {
      off_at.fail_with(ErrorCode::kOutOfRange, "tensor '" + name + "' ends at data offset " + std::to_string(end) + " (file offset " +
                                                   std::to_string(data_start + end) + "), past the end of the " +
                                                   std::to_string(data_len) + "-byte data section");
    }
    if (end - begin != nbytes) {
      off_at.fail_with(ErrorCode::kBadShape, "tensor '" + name + "': shape " + shape_str(shape) + " of " + dtype_text + " needs " +
                                                 std::to_string(nbytes) + " bytes, its offsets span " + std::to_string(end - begin));
    }
    entries.push_back({name, *dtype, std::move(shape), begin, end});
  }
  // The data section is covered exactly: sorted by begin, each tensor starts where the last ended.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  for (const Entry& e : entries) {
    if (e.begin < covered) {
      fail(ErrorCode::kOverlap, src + ": tensor '" + e.name + "' at data offsets [" + std::to_string(e.begin) + ", " +
                                    std::to_string(e.end) + ") overlaps the tensor before it (which ends at " + std::to_string(covered) + ")");
    }
    if (e.begin > covered) {
      fail(ErrorCode::kGap, src + ": data bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                                ") belong to no tensor (before tensor '" + e.name + "')");
    }
    covered = e.end;
  }
  if (covered != data_len) {
    fail(ErrorCode::kGap, src + ": data bytes [" + std::to_string(covered) + ", " + std::to_string(data_len) + ") belong to no tensor");
  }
  for (Entry& e : entries) {
    const std::byte* p = bytes.data() + data_start + e.begin;
    const std::size_t n = static_cast<std::size_t>(e.end - e.begin);
    Tensor t;
    if (reinterpret_cast<std::uintptr_t>(p) % dtype_size(e.dtype) == 0) {
      t = Tensor::borrow(const_cast<std::byte*>(p), n, e.dtype, std::move(e.shape), Device::cpu(), owner);
    } else {
      t = Tensor::zeros(e.dtype, std::move(e.shape));
      if (n) std::memcpy(t.data(), p, n);
    }
    out.tensors.emplace_back(std::move(e.name), std::move(t));
  }
  return out;
}

std::vector<std::byte> write_safetensors(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                         const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json m = Json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = std::move(m);
  }
  std::set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || !names.insert(name).second) {
      fail(ErrorCode::kDuplicateName, "write_safetensors: tensor name '" + name + "' is reserved or given twice");
    }
    if (!t.defined() || t.device().type != DeviceType::kCPU) {
      fail(ErrorCode::kInvalidArgument, "write_safetensors: tensor '" + name + "' is undefined or not on the CPU");
    }
    Json entry = Json::object();
    entry["dtype"] = std::string(dtype_safetensors_name(t.dtype()));
    entry["shape"] = t.shape();
    entry["data_offsets"] = {offset, offset + t.nbytes()};
    header[name] = std::move(entry);
    offset += t.nbytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<std::byte> out(kLengthBytes + text.size() + offset);
  std::uint64_t n = text.size();
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + kLengthBytes, text.data(), text.size());
  std::byte* data = out.data() + kLengthBytes + text.size();
  for (const auto& [name, t] : tensors) {
    if (t.nbytes()) std::memcpy(data, t.data(), t.nbytes());
    data += t.nbytes();
  }
  return out;
}

}  // namespace tracegraph
