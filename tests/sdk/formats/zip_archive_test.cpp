#include "tracegraph/zip_archive.h"

#include <cstring>
#include <string>

#include "test_util.h"
#include "tracegraph/file_io.h"

namespace tracegraph {
namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// A stored zip archive as torch's writer lays it out (local headers, data,
// central directory, end record), with offsets to corrupt it by.
struct Built {
  std::vector<std::byte> bytes;
  std::vector<std::size_t> local_offsets, central_offsets;
  std::size_t end_record = 0;
};

void put(std::vector<std::byte>& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xffu));
}
void patch(std::vector<std::byte>& b, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xffu);
}

// Entries (name, data, method, the data as stored) written as given.
struct In {
  In(std::string n, std::string d, std::uint16_t m = 0, std::vector<std::byte> s = {})
      : name(std::move(n)), data(std::move(d)), method(m), stored(std::move(s)) {}
  std::string name;
  std::string data;               // uncompressed
  std::uint16_t method;
  std::vector<std::byte> stored;  // what the archive holds; empty: `data` itself
};

Built build(const std::vector<In>& entries) {
  Built z;
  auto& b = z.bytes;
  std::vector<std::uint32_t> crcs;
  for (const In& e : entries) {
    const auto data = bytes_of(e.data);
    const auto& stored = e.stored.empty() ? data : e.stored;
    crcs.push_back(crc32(data));
    z.local_offsets.push_back(b.size());
    put(b, 0x04034b50, 4);
    put(b, 20, 2);
    put(b, 0, 2);
    put(b, e.method, 2);
    put(b, 0, 4);
    put(b, crcs.back(), 4);
    put(b, stored.size(), 4);
    put(b, data.size(), 4);
    put(b, e.name.size(), 2);
    put(b, 0, 2);
    for (char c : e.name) b.push_back(static_cast<std::byte>(c));
    b.insert(b.end(), stored.begin(), stored.end());
  }
  const std::size_t directory = b.size();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const In& e = entries[i];
    const std::size_t stored = e.stored.empty() ? e.data.size() : e.stored.size();
    z.central_offsets.push_back(b.size());
    put(b, 0x02014b50, 4);
    put(b, 20, 2);
    put(b, 20, 2);
    put(b, 0, 2);
    put(b, e.method, 2);
    put(b, 0, 4);
    put(b, crcs[i], 4);
    put(b, stored, 4);
    put(b, e.data.size(), 4);
    put(b, e.name.size(), 2);
    put(b, 0, 2);
    put(b, 0, 2);
    put(b, 0, 2);
    put(b, 0, 2);
    put(b, 0, 4);
    put(b, z.local_offsets[i], 4);
    for (char c : e.name) b.push_back(static_cast<std::byte>(c));
  }
  z.end_record = b.size();
  put(b, 0x06054b50, 4);
  put(b, 0, 2);
  put(b, 0, 2);
  put(b, entries.size(), 2);
  put(b, entries.size(), 2);
  put(b, z.end_record - directory, 4);
  put(b, directory, 4);
  put(b, 0, 2);
  return z;
}

ZipArchive open_zip(const std::vector<std::byte>& b, const LoadLimits& limits = {}) {
  auto owner = std::make_shared<std::vector<std::byte>>(b);
  return ZipArchive::open(*owner, owner, "test.zip", limits);
}

// Raw DEFLATE streams made by Python's zlib (compressobj(level, DEFLATED, -15)):
// "hello hello hello tracegraph " * 20 at level 9 (one fixed-Huffman block
// with back references), and its first 60 bytes at level 0 (a stored block).
const std::vector<std::uint8_t> kFixed = {0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8, 0x40, 0x22, 0x4b, 0x8a, 0x12, 0x93, 0x53, 0xd3,
                                          0x8b, 0x12, 0x0b, 0x32, 0x50, 0x84, 0x47, 0x25, 0x47, 0x25, 0x71, 0x48, 0x02, 0x00};
std::string repeated() {
  std::string s;
  for (int i = 0; i < 20; ++i) s += "hello hello hello tracegraph ";
  return s;
}
std::vector<std::byte> as_bytes(const std::vector<std::uint8_t>& v) {
  std::vector<std::byte> out;
  for (auto x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}
std::string text(const std::vector<std::byte>& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }
std::vector<std::byte> stored_block(std::string_view data) {
  std::vector<std::byte> b;
  put(b, 1, 1);  // final, stored
  put(b, data.size(), 2);
  put(b, ~data.size() & 0xffffu, 2);
  for (char c : data) b.push_back(static_cast<std::byte>(c));
  return b;
}

TEST(Crc32Test, MatchesZlibsCheckValue) {
  EXPECT_EQ(crc32(bytes_of("123456789")), 0xcbf43926u);
  EXPECT_EQ(crc32(bytes_of(repeated())), 2928512846u);  // Python: zlib.crc32
  EXPECT_EQ(crc32({}), 0u);
}

TEST(InflateTest, DecodesFixedHuffmanWithBackReferences) {
  EXPECT_EQ(text(inflate_raw(as_bytes(kFixed), 580, "s")), repeated());
}

TEST(InflateTest, DecodesStoredBlocks) {
  const std::string data = repeated().substr(0, 60);
  EXPECT_EQ(text(inflate_raw(stored_block(data), 60, "s")), data);
  EXPECT_EQ(text(inflate_raw(stored_block(""), 0, "s")), "");
}

TEST(InflateTest, RefusesMoreOutputThanDeclaredBeforeWritingIt) {
  EXPECT_TG_ERROR(inflate_raw(as_bytes(kFixed), 579, "entry 'x'"), ErrorCode::kBadShape, "more than the 579 bytes");
  EXPECT_TG_ERROR(inflate_raw(as_bytes(kFixed), 581, "entry 'x'"), ErrorCode::kBadShape, "holds 580 bytes, the directory says 581");
}

TEST(InflateTest, RefusesTruncatedAndMalformedStreams) {
  auto cut = as_bytes(kFixed);
  cut.resize(10);
  EXPECT_TG_ERROR(inflate_raw(cut, 580, "entry 'x'"), ErrorCode::kTruncated, "entry 'x': the deflated stream ends");
  EXPECT_TG_ERROR(inflate_raw(as_bytes({0x07}), 10, "s"), ErrorCode::kParse, "reserved type 3");
  auto bad_len = stored_block("abc");
  bad_len[3] = std::byte{0};  // NLEN no longer the complement of LEN
  EXPECT_TG_ERROR(inflate_raw(bad_len, 3, "s"), ErrorCode::kParse, "complement");
  // A fixed block whose first code is a length/distance pair: nothing to copy from yet.
  // (bits: final=1, type=01, then length code 257 = 0000001, distance code 0 = 00000)
  EXPECT_TG_ERROR(inflate_raw(as_bytes({0x03, 0x02, 0x00}), 10, "s"), ErrorCode::kParse, "before the start of the output");
  EXPECT_TG_ERROR(inflate_raw({}, 0, "s"), ErrorCode::kTruncated, "ends");
}

TEST(ZipArchiveTest, ReadsStoredAndDeflatedEntriesByName) {
  const Built z = build({{"a/archive_format", "pt2"}, {"a/data.bin", repeated(), 8, as_bytes(kFixed)}, {"a/empty", ""}});
  const ZipArchive zip = open_zip(z.bytes);
  ASSERT_EQ(zip.entries().size(), 3u);
  EXPECT_EQ(zip.entries()[1].name, "a/data.bin");
  EXPECT_EQ(zip.entries()[1].method, 8);
  EXPECT_EQ(zip.entries()[1].size, 580u);
  EXPECT_EQ(zip.read("a/archive_format").text(), "pt2");
  EXPECT_EQ(zip.read("a/data.bin").text(), repeated());
  EXPECT_EQ(zip.read("a/empty").text(), "");
  EXPECT_EQ(zip.find("nope"), nullptr);
  EXPECT_TG_ERROR(zip.read("nope"), ErrorCode::kNotFound, "no entry 'nope'");
  EXPECT_TRUE(looks_like_zip(z.bytes));
}

TEST(ZipArchiveTest, StoredEntriesAreViewsThatKeepTheArchiveAlive) {
  ZipData data;
  {
    const Built z = build({{"w", "weights!"}});
    const ZipArchive zip = open_zip(z.bytes);
    data = zip.read("w");
  }
  EXPECT_EQ(data.text(), "weights!");  // the archive's bytes live on in data.owner
}

TEST(ZipArchiveTest, RefusesWhatIsNotAZipArchive) {
  EXPECT_TG_ERROR(open_zip(bytes_of("short")), ErrorCode::kParse, "too short to be a zip archive");
  EXPECT_TG_ERROR(open_zip(bytes_of(std::string(100, 'x'))), ErrorCode::kParse, "no end-of-central-directory record");
  EXPECT_FALSE(looks_like_zip(bytes_of("{\"format\": \"tracegraph\"}")));
}

TEST(ZipArchiveTest, ADirectoryPastTheEndIsTruncatedNamingTheOffset) {
  Built z = build({{"x", "abc"}});
  patch(z.bytes, z.end_record + 16, 1u << 30, 4);  // directory offset
  EXPECT_TG_ERROR(open_zip(z.bytes), ErrorCode::kTruncated, "central directory at offset 1073741824 runs past the end");
}

TEST(ZipArchiveTest, AnEntryCountOverTheLimitIsRefusedBeforeReading) {
  const Built z = build({{"x", "a"}, {"y", "b"}, {"z", "c"}});
  LoadLimits limits;
  limits.max_archive_entries = 2;
  EXPECT_TG_ERROR(open_zip(z.bytes, limits), ErrorCode::kLimitExceeded, "3 entries, over the limit of 2");
  Built lying = build({{"x", "a"}});
  patch(lying.bytes, lying.end_record + 10, 60000, 2);  // more entries than the directory's bytes hold
  EXPECT_TG_ERROR(open_zip(lying.bytes), ErrorCode::kParse, "too small for 60000 entries");
}

TEST(ZipArchiveTest, SizesTheDataCannotHoldAreRefusedBeforeAllocating) {
  Built z = build({{"big", repeated(), 8, as_bytes(kFixed)}});
  patch(z.bytes, z.central_offsets[0] + 24, 0xfffffff0u, 4);  // 4 GiB from 29 bytes
  EXPECT_TG_ERROR(open_zip(z.bytes), ErrorCode::kBadShape, "29 deflated bytes cannot hold the 4294967280");
  Built stored = build({{"s", "abc"}});
  patch(stored.bytes, stored.central_offsets[0] + 24, 4, 4);
  EXPECT_TG_ERROR(open_zip(stored.bytes), ErrorCode::kBadShape, "stored entry of 3 bytes that says it holds 4");
  // An entry larger uncompressed than the limit on any one file, in an archive within it.
  const Built large = build({{"l", repeated(), 8, as_bytes(kFixed)}});
  LoadLimits limits;
  limits.max_file_bytes = large.bytes.size();
  ASSERT_LT(limits.max_file_bytes, 580u);
  EXPECT_TG_ERROR(open_zip(large.bytes, limits), ErrorCode::kLimitExceeded, "entry 'l'");
}

TEST(ZipArchiveTest, DataPastTheEndAndBadChecksumsNameTheEntry) {
  Built z = build({{"x", "abcdef"}});
  patch(z.bytes, z.central_offsets[0] + 42, z.central_offsets[0] - 2, 4);  // local header moved onto the directory
  EXPECT_TG_ERROR(open_zip(z.bytes).read("x"), ErrorCode::kParse, "entry 'x' (local header at offset");
  Built crc = build({{"x", "abcdef"}});
  crc.bytes[crc.local_offsets[0] + 30 + 1] = std::byte{'Z'};
  EXPECT_TG_ERROR(open_zip(crc.bytes).read("x"), ErrorCode::kParse, "CRC-32");
}

TEST(ZipArchiveTest, RefusesDuplicateNamesEncryptionAndOtherMethods) {
  EXPECT_TG_ERROR(open_zip(build({{"x", "a"}, {"x", "b"}}).bytes), ErrorCode::kDuplicateName, "entry 'x'");
  Built enc = build({{"x", "a"}});
  patch(enc.bytes, enc.central_offsets[0] + 8, 1, 2);
  EXPECT_TG_ERROR(open_zip(enc.bytes), ErrorCode::kUnsupported, "encrypted");
  Built bz = build({{"x", "a"}});
  patch(bz.bytes, bz.central_offsets[0] + 10, 12, 2);
  EXPECT_TG_ERROR(open_zip(bz.bytes), ErrorCode::kUnsupported, "compression method 12");
}

TEST(ZipArchiveTest, TheDirectoryOfAFileIsReadFromItsEndAlone) {
  const std::string path = test_data("valid/dynamic_batch.deflated.pt2");
  const auto bytes = read_file_bytes(path, 1 << 24);
  const ZipArchive zip = ZipArchive::open(*bytes, bytes, path);
  const std::vector<ZipEntry> directory = zip_directory(path);
  ASSERT_EQ(directory.size(), zip.entries().size());
  for (std::size_t i = 0; i < directory.size(); ++i) {
    EXPECT_EQ(directory[i].name, zip.entries()[i].name);
    EXPECT_EQ(directory[i].local_header_offset, zip.entries()[i].local_header_offset);
  }
  EXPECT_EQ(name_in_root(directory[0].name), directory[0].name.substr(directory[0].name.find('/') + 1));
  EXPECT_TG_ERROR(zip_directory(test_data("valid/small.json")), ErrorCode::kParse, "not a zip archive");
  EXPECT_TG_ERROR(zip_directory(test_data("valid/no_such_file")), ErrorCode::kIo, "no_such_file");
}

}  // namespace
}  // namespace tracegraph
