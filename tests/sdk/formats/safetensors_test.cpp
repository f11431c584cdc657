#include "tracegraph/safetensors.h"

#include <cstring>

#include "test_util.h"

namespace tracegraph {
namespace {

std::vector<std::pair<std::string, Tensor>> sample() {
  return {{"b", Tensor::from_vector<float>({1.5f, -2.0f, 3.25f}, {3})},
          {"a", Tensor::from_vector<std::int64_t>({7, 8}, {1, 2})},
          {"flag", Tensor::from_vector<bool>({true}, {})},
          {"empty", Tensor::zeros(DType::kFloat16, {0, 4})}};
}

TEST(SafetensorsTest, WriteThenParseGivesTheSameTensors) {
  auto bytes = std::make_shared<std::vector<std::byte>>(write_safetensors(sample(), {{"k", "v"}}));
  Safetensors st = parse_safetensors(*bytes, bytes, "mem");
  ASSERT_EQ(st.tensors.size(), 4u);
  for (const auto& [name, t] : sample()) {
    const Tensor* got = st.find(name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_TRUE(got->equal(t)) << name;
  }
  EXPECT_EQ(st.metadata.at("k"), "v");
  // In data-offset order, which is the order written.
  EXPECT_EQ(st.tensors[0].first, "b");
}

TEST(SafetensorsTest, HeaderIsPaddedAndLayoutIsExact) {
  auto bytes = write_safetensors(sample());
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + n + 12 + 16 + 1 + 0);
  EXPECT_EQ(write_safetensors(sample()), bytes);  // deterministic
}

TEST(SafetensorsTest, AlignedTensorsAreViewsIntoTheBuffer) {
  auto bytes = std::make_shared<std::vector<std::byte>>(write_safetensors(sample()));
  Safetensors st = parse_safetensors(*bytes, bytes, "mem");
  const Tensor* b = st.find("b");
  EXPECT_FALSE(b->owns_data());
  EXPECT_GE(static_cast<const std::byte*>(b->data()), bytes->data());
  EXPECT_LT(static_cast<const std::byte*>(b->data()), bytes->data() + bytes->size());
  // The int64 tensor starts at data offset 12: not 8-aligned, so it is copied.
  const Tensor* a = st.find("a");
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a->data()) % 8, 0u);
  EXPECT_EQ(a->data_as<std::int64_t>()[1], 8);
}

TEST(SafetensorsTest, DuplicateAndReservedNamesAreRefused) {
  auto dup = sample();
  dup.push_back(dup[0]);
  EXPECT_TG_ERROR(write_safetensors(dup), ErrorCode::kDuplicateName, "'b'");
  EXPECT_TG_ERROR(write_safetensors({{"__metadata__", Tensor::zeros(DType::kUInt8, {1})}}), ErrorCode::kDuplicateName, "reserved");
}

TEST(SafetensorsTest, ReadsAFileWrittenByPythonSafetensorsLayout) {
  // Header written the way the Python package writes it (keys sorted, spaces to pad).
  const std::string header = R"({"__metadata__":{"format":"pt"},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string padded = header + std::string((8 - header.size() % 8) % 8, ' ');
  std::vector<std::byte> file(8 + padded.size() + 8);
  const std::uint64_t n = padded.size();
  std::memcpy(file.data(), &n, 8);
  std::memcpy(file.data() + 8, padded.data(), padded.size());
  const float values[2] = {0.25f, 4.0f};
  std::memcpy(file.data() + 8 + padded.size(), values, 8);
  Safetensors st = parse_safetensors(file, nullptr, "py.safetensors");
  EXPECT_EQ(st.metadata.at("format"), "pt");
  EXPECT_EQ(st.find("x")->data_as<float>()[1], 4.0f);
}

}  // namespace
}  // namespace tracegraph
