#include "tracegraph/tensor.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "test_util.h"

namespace tracegraph {
namespace {

TEST(DTypeTest, NamesRoundTripForEveryDType) {
  for (DType d : kAllDTypes) {
    EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
    EXPECT_EQ(dtype_from_safetensors_name(dtype_safetensors_name(d)), d);
  }
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_FALSE(dtype_from_name("float128").has_value());
  EXPECT_FALSE(dtype_from_safetensors_name("F8_E4M3").has_value());
}

TEST(TensorTest, ZerosOwnsZeroedStorage) {
  Tensor t = Tensor::zeros(DType::kFloat32, {2, 3});
  EXPECT_TRUE(t.defined());
  EXPECT_TRUE(t.owns_data());
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data_as<float>()[i], 0.0f);
}

TEST(TensorTest, BorrowSeesTheCallersBufferWithoutCopy) {
  std::vector<std::int32_t> buffer = {1, 2, 3, 4};
  Tensor t = Tensor::borrow(buffer.data(), buffer.size() * 4, DType::kInt32, {2, 2});
  EXPECT_FALSE(t.owns_data());
  EXPECT_EQ(t.data(), buffer.data());
  buffer[3] = 40;
  EXPECT_EQ(t.data_as<std::int32_t>()[3], 40);
  Tensor copy = t.clone();
  EXPECT_TRUE(copy.owns_data());
  buffer[0] = 10;
  EXPECT_EQ(copy.data_as<std::int32_t>()[0], 1);
}

TEST(TensorTest, BorrowRefusesABufferTooSmallForTheShape) {
  float buffer[3] = {};
  EXPECT_TG_ERROR(Tensor::borrow(buffer, sizeof buffer, DType::kFloat32, {2, 2}), ErrorCode::kOutOfRange, "needs 16 bytes");
}

TEST(TensorTest, KeepAliveHoldsTheOwner) {
  auto owner = std::make_shared<std::vector<float>>(4, 1.5f);
  Tensor t = Tensor::borrow(owner->data(), 16, DType::kFloat32, {4}, Device::cpu(), owner);
  std::weak_ptr<std::vector<float>> weak = owner;
  owner.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(t.data_as<float>()[2], 1.5f);
  t = Tensor();
  EXPECT_TRUE(weak.expired());
}

TEST(TensorTest, ShapeArithmeticIsCheckedForOverflowAndNegatives) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2;
  EXPECT_TG_ERROR(checked_numel(Shape{big, 3}), ErrorCode::kBadShape, "overflows int64");
  EXPECT_TG_ERROR(checked_numel(Shape{2, -1}), ErrorCode::kBadShape, "dim 1 is negative");
  EXPECT_TG_ERROR(checked_nbytes(DType::kFloat64, Shape{std::int64_t{1} << 61}), ErrorCode::kBadShape, "overflows");
  EXPECT_EQ(checked_numel(Shape{}), 1);
  EXPECT_EQ(checked_numel(Shape{5, 0, 7}), 0);
  EXPECT_TG_ERROR(Tensor::zeros(DType::kFloat32, {-2}), ErrorCode::kBadShape, "negative");
}

TEST(TensorTest, TypedAccessChecksTheDType) {
  Tensor t = Tensor::from_vector<std::int64_t>({1, 2}, {2});
  EXPECT_EQ(t.data_as<std::int64_t>()[1], 2);
  EXPECT_TG_ERROR(t.data_as<float>(), ErrorCode::kDTypeMismatch, "int64");
  EXPECT_TG_ERROR(Tensor::from_vector<float>({1, 2, 3}, {2}), ErrorCode::kShapeMismatch, "holds 2 elements");
}

TEST(TensorTest, EqualComparesDTypeShapeAndBytes) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(a.equal(a.clone()));
  EXPECT_FALSE(a.equal(a.reshape({4})));
  Tensor b = a.clone();
  b.data_as<float>()[3] = 5;
  EXPECT_FALSE(a.equal(b));
  EXPECT_TG_ERROR(a.reshape({3}), ErrorCode::kShapeMismatch, "element counts differ");
}

TEST(DeviceTest, ParsesAndPrints) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda());
  EXPECT_EQ(Device::parse("cuda:1"), Device::cuda(1));
  EXPECT_EQ(Device::cuda(2).str(), "cuda:2");
  EXPECT_TG_ERROR(Device::parse("tpu"), ErrorCode::kInvalidArgument, "'tpu'");
  EXPECT_TG_ERROR(Device::parse("cuda:x"), ErrorCode::kInvalidArgument, "cuda:N");
}

}  // namespace
}  // namespace tracegraph

namespace tracegraph {
namespace {

TEST(TensorTest, AllcloseIsTorchsRule) {
  const Tensor a = Tensor::from_vector<float>({1.0f, 100.0f}, {2});
  EXPECT_TRUE(a.allclose(Tensor::from_vector<float>({1.0f, 100.0f}, {2})));
  EXPECT_TRUE(a.allclose(Tensor::from_vector<float>({1.0f, 100.009f}, {2}), 1e-4, 0));   // |d| <= rtol * |other|
  EXPECT_FALSE(a.allclose(Tensor::from_vector<float>({1.0f, 100.02f}, {2}), 1e-4, 0));
  EXPECT_TRUE(a.allclose(Tensor::from_vector<float>({1.05f, 100.0f}, {2}), 0, 0.1));      // |d| <= atol
  EXPECT_FALSE(a.allclose(Tensor::from_vector<float>({1.0f, 100.0f}, {1, 2})));           // shapes differ
  EXPECT_FALSE(a.allclose(Tensor::from_vector<float>({1.0f, std::nanf("")}, {2}), 1, 1));  // NaN is never close
  EXPECT_TRUE(Tensor::from_vector<double>({2.0}, {}).allclose(Tensor::from_vector<double>({2.0}, {})));
  EXPECT_TG_ERROR(a.allclose(Tensor::from_vector<double>({1.0, 100.0}, {2})), ErrorCode::kDTypeMismatch, "float32 against float64");
  EXPECT_TG_ERROR(Tensor::from_vector<std::int64_t>({1}, {1}).allclose(Tensor::from_vector<std::int64_t>({1}, {1})),
                  ErrorCode::kUnsupported, "not int64");
}

}  // namespace
}  // namespace tracegraph
