// Hostile zip archives (issue 50): a deflate bomb behind a small consumer,
// entries that share bytes, local headers that disagree with the directory,
// names quoted whole. Each is a typed error naming the entry, or a correct
// read that inflated only what its consumer needed; inflated_bytes() shows
// the work done, so no test leans on wall time.
#include <string>

#include "zip_builder.h"
#include "test_util.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph {
namespace {

using test::ZipBuilder;

ZipArchive open_zip(const std::vector<std::byte>& b, const LoadLimits& limits = {}) {
  auto owner = std::make_shared<std::vector<std::byte>>(b);
  return ZipArchive::open(*owner, owner, "bomb.zip", limits);
}

// 4 GiB declared by 4.2 MB of deflated bytes: within DEFLATE's best ratio, so
// only the consumer's need can refuse it.
constexpr std::uint64_t kBombSize = 0xfffffffeu;  // 4 GiB less 2 (0xffffffff would say zip64)
constexpr std::size_t kBombBytes = (4ull << 30) / 1032 + 4096;

ZipArchive bomb(const std::string& name) {
  ZipBuilder z;
  const auto stream = test::deflate_run('a', 4096, kBombBytes - 4096 * 13 / 8 - 1);
  z.local(name, 8, 0x12345678u, stream.size(), kBombSize, stream);
  return open_zip(z.finish());
}

TEST(ZipHostileTest, ADocumentBombIsRefusedBeforeAByteIsInflated) {
  const ZipArchive a = bomb("m/data.pkl");
  EXPECT_TG_ERROR(a.read("m/data.pkl"), ErrorCode::kLimitExceeded, "entry 'm/data.pkl' says it holds 4294967294 bytes, over max_document_bytes");
  EXPECT_EQ(a.inflated_bytes(), 0u);
}

TEST(ZipHostileTest, AStorageBombIsInflatedOnlyAsFarAsItsTensorNeeds) {
  const ZipArchive a = bomb("m/data/0");
  const ZipData d = a.read_prefix(*a.find("m/data/0"), 72);  // 18 float32s
  ASSERT_EQ(d.bytes.size(), 72u);
  EXPECT_EQ(d.text(), std::string(72, 'a'));
  EXPECT_EQ(a.inflated_bytes(), 72u);
  EXPECT_TG_ERROR(a.read_prefix(*a.find("m/data/0"), kBombSize + 1), ErrorCode::kOutOfRange, "entry 'm/data/0' holds 4294967294 bytes");
}

TEST(ZipHostileTest, InflatingPastTheArchivesTotalIsRefused) {
  ZipBuilder z;
  const auto stream = test::deflate_run('b', 100, 0);
  z.local("w", 8, 0, stream.size(), 1 + 258 * 100, stream);
  LoadLimits limits;
  limits.max_inflated_bytes = 100;
  const ZipArchive a = open_zip(z.finish(), limits);
  EXPECT_EQ(a.read_prefix(*a.find("w"), 60).bytes.size(), 60u);
  EXPECT_TG_ERROR(a.read_prefix(*a.find("w"), 60), ErrorCode::kLimitExceeded, "entry 'w' (local header at offset 0): inflating its 60 bytes would take the archive past max_inflated_bytes");
  EXPECT_EQ(a.inflated_bytes(), 60u);
}

TEST(ZipHostileTest, TwoEntriesSharingBytesAreRefused) {
  // 'outer' is stored and its data holds the whole of 'inner' (local header
  // and data): a directory listing both reads the same bytes twice.
  ZipBuilder inner;
  inner.stored("inner", "payload");
  const std::vector<std::byte> inner_bytes = inner.bytes();
  ZipBuilder z;
  std::vector<std::byte> outer_data = test::bytes_of("head");
  outer_data.insert(outer_data.end(), inner_bytes.begin(), inner_bytes.end());
  z.local("outer", 0, crc32(outer_data), outer_data.size(), outer_data.size(), outer_data);
  ZipBuilder::Record r = inner.records()[0];
  r.offset = z.records()[0].offset + 30 + 5 + 4;  // inside outer's data
  z.records().push_back(r);
  EXPECT_TG_ERROR(open_zip(z.finish()), ErrorCode::kOverlap, "entries 'outer' (offsets 0 to ");
}

TEST(ZipHostileTest, TwoDirectoryRecordsOfOneLocalHeaderAreRefused) {
  ZipBuilder z;
  z.stored("a", "some bytes");
  z.records().push_back(z.records()[0]);
  z.records().back().name = "b";  // its local header says 'a'
  EXPECT_TG_ERROR(open_zip(z.finish()), ErrorCode::kParse, "entry 'b' (local header at offset 0): the local header names 'a'");
}

TEST(ZipHostileTest, ALocalHeaderThatDisagreesWithTheDirectoryIsRefused) {
  ZipBuilder z;
  z.stored("a", "some bytes");
  z.records()[0].size = z.records()[0].compressed = 4;  // the directory says 4, the local header 10
  EXPECT_TG_ERROR(open_zip(z.finish()), ErrorCode::kParse, "entry 'a' (local header at offset 0): the local header says 10 bytes stored");
}

TEST(ZipHostileTest, AnEntryRunningIntoTheDirectoryIsRefused) {
  ZipBuilder z;
  z.stored("a", "some bytes");
  auto bytes = z.finish();
  // Both headers say 40 bytes: the data runs into the central directory.
  for (std::size_t at : {std::size_t{18}, std::size_t{22}}) bytes[at] = std::byte{40};
  const std::size_t central = 30 + 1 + 10;
  for (std::size_t at : {central + 20, central + 24}) bytes[at] = std::byte{40};
  EXPECT_TG_ERROR(open_zip(bytes), ErrorCode::kOverlap, "entry 'a' (local header at offset 0): its data runs to offset 71, into the central directory");
}

TEST(ZipHostileTest, AHugeNameIsQuotedCut) {
  ZipBuilder z;
  const std::string name(60000, 'n');
  z.stored(name, "x");
  z.records()[0].size = z.records()[0].compressed = 2;
  try {
    open_zip(z.finish());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParse);
    EXPECT_LT(e.message().size(), 1000u) << e.message().size();
    EXPECT_NE(e.message().find("...(60000 bytes)..."), std::string::npos) << e.message().substr(0, 400);
  }
}

}  // namespace
}  // namespace tracegraph
