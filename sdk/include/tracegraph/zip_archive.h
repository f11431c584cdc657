// Reading zip archives held in memory: what torch.save, torch.jit.save and
// torch.export.save write (stored entries, data descriptors, zip64 records),
// and what a user's own zip tool makes of them (deflated entries).
//
// Nothing a header says is trusted before it is checked: every offset and
// size against the archive's bytes, the entry count and each entry's size
// against the LoadLimits, a deflated stream's output against the size the
// central directory declares, and every entry's CRC-32. Each entry's local
// header must agree with its central directory record (name, method, sizes,
// CRC) and no two entries' bytes may overlap (nor the directory's): an
// archive whose entries share bytes would multiply what it can inflate.
// Errors name the archive, the entry and the byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/load_limits.h"

namespace tracegraph {

struct ZipEntry {
  std::string name;
  std::uint16_t method = 0;              // 0 stored, 8 deflated
  std::uint32_t crc32 = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;                // uncompressed
  std::uint64_t local_header_offset = 0;
};

// An entry's bytes and what keeps them alive: the archive itself for a stored
// entry (a view, no copy), a buffer of its own for a deflated one.
struct ZipData {
  std::span<const std::byte> bytes;
  std::shared_ptr<const void> owner;

  std::string_view text() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
};

class ZipArchive {
 public:
  // Reads the central directory. `owner` keeps `bytes` alive as long as the
  // archive or any ZipData taken from it lives; `source` names the archive in
  // errors. kParse when it is not a zip archive, kTruncated when a record runs
  // past the end, kUnsupported for encrypted or multi-disk archives and for
  // methods other than stored and deflated, kDuplicateName for a name twice.
  static ZipArchive open(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, std::string source,
                         const LoadLimits& limits = {});

  const std::string& source() const { return source_; }
  // In central-directory order.
  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view name) const;
  // A document entry's uncompressed bytes (JSON, pickle, code), CRC-checked.
  // kNotFound for a name that is not there; kLimitExceeded, naming the entry,
  // when the directory says it holds more than limits.max_document_bytes
  // (checked before anything is inflated).
  ZipData read(std::string_view name) const;
  ZipData read(const ZipEntry& entry) const;
  // The first `need` bytes of a storage entry (a tensor's bytes, from its
  // shape and dtype): a deflated entry is inflated only that far, whatever its
  // directory says (the CRC is checked when that is the whole entry).
  // kOutOfRange, naming the entry, when it holds fewer than `need` bytes.
  ZipData read_prefix(const ZipEntry& entry, std::uint64_t need) const;
  // Bytes inflated by this archive's reads so far (all reads together are
  // held to limits.max_inflated_bytes): the work a hostile entry cost.
  std::uint64_t inflated_bytes() const { return *inflated_; }

 private:
  std::span<const std::byte> bytes_;
  std::shared_ptr<const void> owner_;
  std::string source_;
  LoadLimits limits_;
  std::vector<ZipEntry> entries_;
  // Shared by copies of the archive, as its bytes are; reads are not
  // expected to run concurrently on one archive.
  std::shared_ptr<std::uint64_t> inflated_ = std::make_shared<std::uint64_t>(0);
  ZipData read_bytes(const ZipEntry& entry, std::uint64_t need) const;
};

// The entries of the zip archive at `path`, read from its end record and
// central directory alone (at most 64 KiB and the directory, not the
// entries' data): what telling a file's kind needs. Errors as open()'s, and
// kIo when the file cannot be read.
std::vector<ZipEntry> zip_directory(const std::string& path, const LoadLimits& limits = {});

// An entry's name below the one root folder torch's writers put every entry
// under ("model/archive_format" -> "archive_format"); a name without a folder as it is.
std::string_view name_in_root(std::string_view entry);

// True when `bytes` start like a zip archive (a local file header).
bool looks_like_zip(std::span<const std::byte> bytes);

// The zlib CRC-32 (the one zip uses) of `bytes`.
std::uint32_t crc32(std::span<const std::byte> bytes);

// Decodes a raw DEFLATE stream (RFC 1951) that must produce exactly
// `expected_size` bytes. `where` names the stream in errors (kParse for a
// malformed stream, naming the input offset; kTruncated when it ends early;
// kBadShape when it produces more or fewer bytes than expected).
// With `stop_after` below expected_size, decoding stops once that many bytes
// are out (the prefix a caller needs) and they alone are returned.
std::vector<std::byte> inflate_raw(std::span<const std::byte> compressed, std::uint64_t expected_size,
                                   const std::string& where, std::uint64_t stop_after = UINT64_MAX);

}  // namespace tracegraph
