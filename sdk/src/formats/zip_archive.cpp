#include "tracegraph/zip_archive.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <unordered_set>

#include "support/message.h"
#include "tracegraph/error.h"

namespace tracegraph {
namespace {

using detail::cut_for_message;

constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint32_t kCentralHeader = 0x02014b50;
constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::size_t kEndOfDirectoryBytes = 22;
constexpr std::size_t kCentralHeaderBytes = 46;
constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::size_t kZip64LocatorBytes = 20;
constexpr std::size_t kZip64EndBytes = 56;
// DEFLATE's best ratio is a little under 1032:1; a directory that claims more
// output than that from its compressed bytes is lying, and is refused before
// anything is allocated.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

// Little-endian reads over a bounded span of the archive: all of it, or (for
// zip_directory()) the part that starts at file offset `base`. Offsets are the
// file's; `what` names the record for errors.
class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::string& source, std::uint64_t base = 0, std::uint64_t file_size = UINT64_MAX)
      : bytes_(bytes), source_(source), base_(base), file_size_(file_size == UINT64_MAX ? base + bytes.size() : file_size) {}

  void need(std::uint64_t offset, std::uint64_t n, const char* what) const {
    if (offset < base_ || offset - base_ > bytes_.size() || n > bytes_.size() - (offset - base_)) {
      fail(ErrorCode::kTruncated, source_ + ": the " + what + " at offset " + std::to_string(offset) + " runs past the end of the " +
                                      std::to_string(file_size_) + "-byte archive");
    }
  }
  std::uint64_t le(std::uint64_t offset, int n) const {
    const std::size_t at = static_cast<std::size_t>(offset - base_);
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint64_t>(bytes_[at + static_cast<std::size_t>(i)]);
    return v;
  }
  std::uint16_t u16(std::uint64_t o) const { return static_cast<std::uint16_t>(le(o, 2)); }
  std::uint32_t u32(std::uint64_t o) const { return static_cast<std::uint32_t>(le(o, 4)); }
  std::uint64_t u64(std::uint64_t o) const { return le(o, 8); }
  // Offsets and sizes are 64-bit in the file and checked against the bytes
  // (need()) before they index them, so they fit a size_t (32 bits in wasm).
  std::string_view text(std::uint64_t o, std::uint64_t n) const {
    return {reinterpret_cast<const char*>(bytes_.data() + static_cast<std::size_t>(o - base_)), static_cast<std::size_t>(n)};
  }
  std::uint64_t base() const { return base_; }
  std::uint64_t file_size() const { return file_size_; }

 private:
  std::span<const std::byte> bytes_;
  const std::string& source_;
  std::uint64_t base_, file_size_;
};

struct Directory {
  std::uint64_t entries = 0, size = 0, offset = 0;
};

// The end record sits at the end, after a comment of at most 65535 bytes
// (and the zip64 locator and record just before it): the bytes a reader of
// the directory alone needs from the file's end.
constexpr std::uint64_t kTailBytes = kEndOfDirectoryBytes + 65535 + kZip64LocatorBytes + kZip64EndBytes;

Directory find_directory(const Reader& r, const std::string& source) {
  if (r.file_size() < kEndOfDirectoryBytes) {
    fail(ErrorCode::kParse, source + ": " + std::to_string(r.file_size()) + " bytes, too short to be a zip archive");
  }
  const std::uint64_t last = r.file_size() - kEndOfDirectoryBytes;
  const std::uint64_t first = std::max(r.base(), last > 65535 ? last - 65535 : 0);
  std::uint64_t eocd = UINT64_MAX;
  for (std::uint64_t o = last + 1; o-- > first;) {
    if (r.u32(o) == kEndOfDirectory && o + kEndOfDirectoryBytes + r.u16(o + 20) == r.file_size()) {
      eocd = o;
      break;
    }
  }
  if (eocd == UINT64_MAX) {
    // A file that starts as a zip archive (a local header at byte 0) and has
    // no end record was cut short: kTruncated, as LibTorch's reader says it.
    if (r.base() == 0 && r.u32(0) == kLocalHeader) fail(ErrorCode::kTruncated, source + ": the zip archive ends early (no end-of-central-directory record)");
    fail(ErrorCode::kParse, source + ": not a zip archive (no end-of-central-directory record)");
  }
  if (r.u16(eocd + 4) != 0 || r.u16(eocd + 6) != 0) {
    fail(ErrorCode::kUnsupported, source + ": a multi-disk zip archive (end record at offset " + std::to_string(eocd) + ")");
  }
  Directory d{r.u16(eocd + 10), r.u32(eocd + 12), r.u32(eocd + 16)};
  if (eocd >= r.base() + kZip64LocatorBytes && r.u32(eocd - kZip64LocatorBytes) == kZip64Locator) {
    const std::uint64_t loc = eocd - kZip64LocatorBytes;
    const std::uint64_t z = r.u64(loc + 8);
    r.need(z, kZip64EndBytes, "zip64 end-of-central-directory record");
    if (r.u32(z) != kZip64EndOfDirectory) {
      fail(ErrorCode::kParse, source + ": the zip64 locator at offset " + std::to_string(loc) + " points at offset " + std::to_string(z) +
                                  ", which holds no zip64 end record");
    }
    d = {r.u64(z + 32), r.u64(z + 40), r.u64(z + 48)};
  }
  return d;
}

// The entries of directory `d`, whose bytes `r` holds.
std::vector<ZipEntry> read_directory(const Reader& r, const Directory& d, const std::string& src, const LoadLimits& limits) {
  if (d.entries > limits.max_archive_entries) {
    fail(ErrorCode::kLimitExceeded, src + ": " + std::to_string(d.entries) + " entries, over the limit of " +
                                        std::to_string(limits.max_archive_entries));
  }
  r.need(d.offset, d.size, "central directory");
  if (d.entries > d.size / kCentralHeaderBytes) {
    fail(ErrorCode::kParse, src + ": the central directory at offset " + std::to_string(d.offset) + " is " + std::to_string(d.size) +
                                " bytes, too small for " + std::to_string(d.entries) + " entries");
  }
  std::vector<ZipEntry> entries;
  entries.reserve(static_cast<std::size_t>(d.entries));
  std::unordered_set<std::string> names;
  std::uint64_t o = d.offset;
  const std::uint64_t end = d.offset + d.size;
  for (std::uint64_t i = 0; i < d.entries; ++i) {
    if (end - o < kCentralHeaderBytes) {
      fail(ErrorCode::kTruncated, src + ": central directory entry " + std::to_string(i) + " at offset " + std::to_string(o) +
                                      " runs past the directory's end at offset " + std::to_string(end));
    }
    if (r.u32(o) != kCentralHeader) {
      fail(ErrorCode::kParse, src + ": central directory entry " + std::to_string(i) + " at offset " + std::to_string(o) + " has no signature");
    }
    const std::uint16_t flags = r.u16(o + 8);
    ZipEntry e;
    e.method = r.u16(o + 10);
    e.crc32 = r.u32(o + 16);
    e.compressed_size = r.u32(o + 20);
    e.size = r.u32(o + 24);
    const std::uint16_t name_len = r.u16(o + 28), extra_len = r.u16(o + 30), comment_len = r.u16(o + 32);
    e.local_header_offset = r.u32(o + 42);
    const std::uint64_t record = kCentralHeaderBytes + name_len + extra_len + comment_len;
    if (end - o < record) {
      fail(ErrorCode::kTruncated, src + ": central directory entry " + std::to_string(i) + " at offset " + std::to_string(o) +
                                      " runs past the directory's end at offset " + std::to_string(end));
    }
    e.name = std::string(r.text(o + kCentralHeaderBytes, name_len));
    const std::string where = src + ": entry '" + cut_for_message(e.name) + "' (directory offset " + std::to_string(o) + ")";
    // zip64: the sizes and offset that do not fit 32 bits follow in an extra field, in this order.
    for (std::uint64_t x = o + kCentralHeaderBytes + name_len, xend = x + extra_len; xend - x >= 4;) {
      const std::uint16_t id = r.u16(x), len = r.u16(x + 2);
      if (xend - x - 4 < len) fail(ErrorCode::kParse, where + ": an extra field runs past the entry's record");
      if (id == 0x0001) {
        std::uint64_t f = x + 4, fend = f + len;
        auto field = [&](std::uint64_t& v) {
          if (v != 0xffffffffu) return;
          if (fend - f < 8) fail(ErrorCode::kParse, where + ": its zip64 extra field is too short");
          v = r.u64(f);
          f += 8;
        };
        field(e.size);
        field(e.compressed_size);
        field(e.local_header_offset);
      }
      x += 4 + static_cast<std::uint64_t>(len);
    }
    if (flags & 0x1u) fail(ErrorCode::kUnsupported, where + ": the entry is encrypted");
    if (e.method != 0 && e.method != 8) {
      fail(ErrorCode::kUnsupported, where + ": compression method " + std::to_string(e.method) + " (only stored and deflated are read)");
    }
    if (e.size > limits.max_file_bytes) {
      fail(ErrorCode::kLimitExceeded, where + ": " + std::to_string(e.size) + " bytes uncompressed, over the limit of " +
                                          std::to_string(limits.max_file_bytes));
    }
    if (e.method == 0 && e.size != e.compressed_size) {
      fail(ErrorCode::kBadShape, where + ": a stored entry of " + std::to_string(e.compressed_size) + " bytes that says it holds " +
                                     std::to_string(e.size));
    }
    if (e.method == 8 && e.size / kMaxDeflateRatio > e.compressed_size) {
      fail(ErrorCode::kBadShape, where + ": " + std::to_string(e.compressed_size) + " deflated bytes cannot hold the " +
                                     std::to_string(e.size) + " it says");
    }
    if (!names.insert(e.name).second) fail(ErrorCode::kDuplicateName, where + ": the name is used twice");
    entries.push_back(std::move(e));
    o += record;
  }
  return entries;
}


// Where entry `e`'s data starts: after its local header, which must be there
// and agree with the central directory's record (a reader that trusted one
// and a tool that trusted the other would read different bytes).
std::uint64_t data_start(const Reader& r, const ZipEntry& e, const std::string& where) {
  const std::uint64_t at = e.local_header_offset;
  r.need(at, kLocalHeaderBytes, "local header");
  if (r.u32(at) != kLocalHeader) fail(ErrorCode::kParse, where + ": no local header signature");
  const std::uint16_t flags = r.u16(at + 6), name_len = r.u16(at + 26), extra_len = r.u16(at + 28);
  r.need(at + kLocalHeaderBytes, name_len, "local header's name");
  if (r.text(at + kLocalHeaderBytes, name_len) != e.name) {
    fail(ErrorCode::kParse, where + ": the local header names '" + cut_for_message(r.text(at + kLocalHeaderBytes, name_len)) +
                                "', the central directory another");
  }
  if (r.u16(at + 8) != e.method) {
    fail(ErrorCode::kParse, where + ": the local header says method " + std::to_string(r.u16(at + 8)) + ", the central directory " +
                                std::to_string(e.method));
  }
  // With a data descriptor (flag bit 3) the local sizes and CRC are zero; in
  // zip64 the sizes are 0xffffffff here and the real ones in an extra field.
  if (!(flags & 0x8u)) {
    const std::uint32_t crc = r.u32(at + 14), csize = r.u32(at + 18), size = r.u32(at + 22);
    const bool zip64 = csize == 0xffffffffu || size == 0xffffffffu;
    if (crc != e.crc32 || (!zip64 && (csize != e.compressed_size || size != e.size))) {
      fail(ErrorCode::kParse, where + ": the local header says " + std::to_string(csize) + " bytes stored, " + std::to_string(size) +
                                  " uncompressed, CRC-32 " + std::to_string(crc) + "; the central directory says " +
                                  std::to_string(e.compressed_size) + ", " + std::to_string(e.size) + ", " + std::to_string(e.crc32));
    }
  }
  return at + kLocalHeaderBytes + name_len + extra_len;
}

// Every entry's bytes (local header to the end of its data) lie before the
// central directory and share no byte with another entry's.
void check_no_overlap(const Reader& r, const std::vector<ZipEntry>& entries, std::uint64_t directory, const std::string& src) {
  struct Span {
    std::uint64_t begin, end;
    const ZipEntry* e;
  };
  std::vector<Span> spans;
  spans.reserve(entries.size());
  for (const ZipEntry& e : entries) {
    const std::string where = src + ": entry '" + cut_for_message(e.name) + "' (local header at offset " + std::to_string(e.local_header_offset) + ")";
    const std::uint64_t start = data_start(r, e, where);
    r.need(start, e.compressed_size, "entry data");
    spans.push_back({e.local_header_offset, start + e.compressed_size, &e});
    if (spans.back().end > directory) {
      fail(ErrorCode::kOverlap, where + ": its data runs to offset " + std::to_string(spans.back().end) + ", into the central directory at offset " +
                                    std::to_string(directory));
    }
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].begin < spans[i - 1].end) {
      fail(ErrorCode::kOverlap, src + ": entries '" + cut_for_message(spans[i - 1].e->name) + "' (offsets " + std::to_string(spans[i - 1].begin) + " to " +
                                    std::to_string(spans[i - 1].end) + ") and '" + cut_for_message(spans[i].e->name) + "' (from offset " +
                                    std::to_string(spans[i].begin) + ") share bytes");
    }
  }
}

}  // namespace

std::string_view name_in_root(std::string_view entry) {
  const auto slash = entry.find('/');
  return slash == std::string_view::npos ? entry : entry.substr(slash + 1);
}

bool looks_like_zip(std::span<const std::byte> bytes) {
  return bytes.size() >= 4 && bytes[0] == std::byte{'P'} && bytes[1] == std::byte{'K'} && bytes[2] == std::byte{3} && bytes[3] == std::byte{4};
}

std::uint32_t crc32(std::span<const std::byte> bytes) {
  static const std::array<std::uint32_t, 256> kTable = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xffffffffu;
  for (std::byte b : bytes) c = kTable[(c ^ static_cast<std::uint32_t>(b)) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

ZipArchive ZipArchive::open(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, std::string source,
                            const LoadLimits& limits) {
  if (bytes.size() > limits.max_file_bytes) {
    fail(ErrorCode::kLimitExceeded, source + ": " + std::to_string(bytes.size()) + " bytes is over the limit of " +
                                        std::to_string(limits.max_file_bytes));
  }
  ZipArchive a;
  a.bytes_ = bytes;
  a.owner_ = std::move(owner);
  a.source_ = std::move(source);
  a.limits_ = limits;
  const std::string& src = a.source_;
  const Reader r(bytes, src);
  const Directory d = find_directory(r, src);
  a.entries_ = read_directory(r, d, src, limits);
  check_no_overlap(r, a.entries_, d.offset, src);
  return a;
}

std::vector<ZipEntry> zip_directory(const std::string& path, const LoadLimits& limits) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail(ErrorCode::kIo, path + ": cannot open");
  const std::uint64_t size = static_cast<std::uint64_t>(in.tellg());
  if (size > limits.max_file_bytes) {
    fail(ErrorCode::kLimitExceeded, path + ": " + std::to_string(size) + " bytes is over the limit of " + std::to_string(limits.max_file_bytes));
  }
  auto read_at = [&](std::uint64_t offset, std::uint64_t n) {
    std::vector<std::byte> out(static_cast<std::size_t>(n));
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n))) fail(ErrorCode::kIo, path + ": cannot read");
    return out;
  };
  const std::uint64_t tail_size = std::min(size, kTailBytes);
  const std::vector<std::byte> tail = read_at(size - tail_size, tail_size);
  const Directory d = find_directory(Reader(tail, path, size - tail_size, size), path);
  if (d.size > limits.max_header_bytes) {
    fail(ErrorCode::kLimitExceeded, path + ": a central directory of " + std::to_string(d.size) + " bytes, over the limit of " +
                                        std::to_string(limits.max_header_bytes));
  }
  if (d.offset > size || d.size > size - d.offset) {
    fail(ErrorCode::kTruncated, path + ": the central directory at offset " + std::to_string(d.offset) + " runs past the end of the " +
                                    std::to_string(size) + "-byte archive");
  }
  const std::vector<std::byte> directory = read_at(d.offset, d.size);
  return read_directory(Reader(directory, path, d.offset, size), d, path, limits);
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

ZipData ZipArchive::read(std::string_view name) const {
  const ZipEntry* e = find(name);
  if (!e) fail(ErrorCode::kNotFound, source_ + ": no entry '" + std::string(name) + "'");
  return read(*e);
}

ZipData ZipArchive::read(const ZipEntry& e) const {
  if (e.size > limits_.max_document_bytes) {
    fail(ErrorCode::kLimitExceeded, source_ + ": entry '" + cut_for_message(e.name) + "' says it holds " + std::to_string(e.size) +
                                        " bytes, over max_document_bytes (" + std::to_string(limits_.max_document_bytes) + ")");
  }
  return read_bytes(e, e.size);
}

ZipData ZipArchive::read_prefix(const ZipEntry& e, std::uint64_t need) const {
  if (need > e.size) {
    fail(ErrorCode::kOutOfRange, source_ + ": entry '" + cut_for_message(e.name) + "' holds " + std::to_string(e.size) + " bytes; " +
                                     std::to_string(need) + " are needed");
  }
  return read_bytes(e, need);
}

ZipData ZipArchive::read_bytes(const ZipEntry& e, std::uint64_t need) const {
  const Reader r(bytes_, source_);
  const std::string where = source_ + ": entry '" + cut_for_message(e.name) + "' (local header at offset " + std::to_string(e.local_header_offset) + ")";
  const std::uint64_t start = data_start(r, e, where);
  r.need(start, e.compressed_size, "entry data");
  const std::span<const std::byte> raw = bytes_.subspan(static_cast<std::size_t>(start), static_cast<std::size_t>(e.compressed_size));
  ZipData out;
  if (e.method == 0) {
    out = {raw, owner_};
  } else {
    // Charged before inflating: what this read may produce, at most.
    if (need > limits_.max_inflated_bytes - std::min(*inflated_, limits_.max_inflated_bytes)) {
      fail(ErrorCode::kLimitExceeded, where + ": inflating its " + std::to_string(need) + " bytes would take the archive past max_inflated_bytes (" +
                                          std::to_string(limits_.max_inflated_bytes) + "; " + std::to_string(*inflated_) + " inflated so far)");
    }
    *inflated_ += need;
    auto buffer = std::make_shared<std::vector<std::byte>>(inflate_raw(raw, e.size, where, need));
    out = {std::span<const std::byte>(buffer->data(), buffer->size()), buffer};
  }
  if (need < e.size) {
    out.bytes = out.bytes.first(static_cast<std::size_t>(need));  // a prefix: the CRC covers the whole entry only
    return out;
  }
  if (const std::uint32_t c = crc32(out.bytes); c != e.crc32) {
    fail(ErrorCode::kParse, where + ": CRC-32 " + std::to_string(c) + " of the data is not the directory's " + std::to_string(e.crc32));
  }
  return out;
}

}  // namespace tracegraph
