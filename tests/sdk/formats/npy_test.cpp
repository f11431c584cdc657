#include "tracegraph/npy.h"

#include <cstring>

#include "test_util.h"

namespace tracegraph {
namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// A version 1.0 file with this header text (padded as np.save pads) and data.
std::vector<std::byte> npy_with(const std::string& dict, std::size_t data_bytes) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string s = std::string("\x93NUMPY\x01\x00", 8);
  s += static_cast<char>(header.size() & 0xff);
  s += static_cast<char>(header.size() >> 8);
  s += header;
  s.append(data_bytes, '\0');
  return bytes_of(s);
}

TEST(NpyTest, WriteThenParseGivesTheSameTensorForEveryDType) {
  const std::vector<Tensor> tensors = {
      Tensor::from_vector<float>({1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 9.5f}, {1, 2, 3}),
      Tensor::from_vector<double>({1.0, 2.0}, {2}),
      Tensor::from_vector<std::int64_t>({7, -8, 9}, {3, 1}),
      Tensor::from_vector<std::int32_t>({1}, {}),
      Tensor::from_vector<std::uint8_t>({1, 255}, {2}),
      Tensor::from_vector<bool>({true, false}, {2}),
      Tensor::zeros(DType::kFloat16, {0, 4}),
  };
  for (const Tensor& t : tensors) {
    const auto bytes = write_npy(t);
    EXPECT_EQ(bytes.size() - t.nbytes(), 64u * ((bytes.size() - t.nbytes()) / 64)) << "data starts at a multiple of 64";
    const Tensor got = parse_npy(bytes, "mem.npy");
    EXPECT_TRUE(got.equal(t)) << dtype_name(t.dtype()) << shape_str(t.shape());
  }
}

TEST(NpyTest, ReadsWhatNumPyWrites) {
  // np.save of np.arange(6, dtype='<f4').reshape(2, 3), byte for byte.
  const auto bytes = npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0);
  std::vector<std::byte> file = bytes;
  const float values[] = {0, 1, 2, 3, 4, 5};
  const auto* p = reinterpret_cast<const std::byte*>(values);
  file.insert(file.end(), p, p + sizeof values);
  const Tensor t = parse_npy(file, "arange.npy");
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.data_as<float>()[5], 5.0f);
  // Native order ('=') and the single-byte spelling ('<u1') read too.
  EXPECT_EQ(parse_npy(npy_with("{'descr': '=f8', 'fortran_order': False, 'shape': (1,), }", 8), "m").dtype(), DType::kFloat64);
  EXPECT_EQ(parse_npy(npy_with("{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }", 3), "m").dtype(), DType::kUInt8);
  // A 1-D Fortran-ordered array is the same bytes as a C-ordered one.
  EXPECT_EQ(parse_npy(npy_with("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8), "m").numel(), 2);
}

TEST(NpyTest, MalformedFilesAreTypedErrorsNamingTheFileAndOffset) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_TG_ERROR(parse_npy(bytes_of("PK\x03\x04 not numpy"), "x.npy"), ErrorCode::kParse, "x.npy: not a .npy file");
  EXPECT_TG_ERROR(parse_npy(bytes_of(std::string("\x93NUMPY\x04\x00", 8)), "x.npy"), ErrorCode::kUnsupported, "version 4.0");
  EXPECT_TG_ERROR(parse_npy(bytes_of(std::string("\x93NUMPY\x01\x00\xff", 9)), "x.npy"), ErrorCode::kTruncated, "header length");
  // A header length past the end of the file is refused before anything is read.
  EXPECT_TG_ERROR(parse_npy(bytes_of(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x00{", 13)), "x.npy"), ErrorCode::kTruncated,
                  "runs past the end of the file");
  EXPECT_TG_ERROR(parse_npy(bytes_of(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f{", 13)), "x.npy"), ErrorCode::kLimitExceeded,
                  "a header of 2147483647 bytes");
  EXPECT_TG_ERROR(parse_npy(npy_with(ok, 23), "x.npy"), ErrorCode::kTruncated, "needs 24 bytes after byte 128, the file has 23");
  EXPECT_TG_ERROR(parse_npy(npy_with(ok, 25), "x.npy"), ErrorCode::kParse, "1 bytes after the data");
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24), "x.npy"),
                  ErrorCode::kUnsupported, "element type '>f4'");
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16), "x.npy"),
                  ErrorCode::kUnsupported, "element type '|O'");
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24), "x.npy"),
                  ErrorCode::kUnsupported, "Fortran-ordered");
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '<f4', 'shape': (2, 3), }", 24), "x.npy"), ErrorCode::kParse, "lacks fortran_order");
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }", 24), "x.npy"), ErrorCode::kParse,
                  "x.npy: .npy header at byte 44: expected a string, True, False or a tuple");
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 24), "x.npy"), ErrorCode::kParse,
                  "expected a non-negative integer");
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0), "x.npy"),
                  ErrorCode::kParse, "past int64");
  // Sizes that overflow, or pass the limits, are refused before any allocation.
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0), "x.npy"),
                  ErrorCode::kBadShape, "overflows");
  // (4 GB: addressable in wasm's 32 bits too, past the 2 GiB tensor limit.)
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 1000, 1000), }", 0), "x.npy"),
                  ErrorCode::kLimitExceeded, "a tensor of 4000000000 bytes");
  EXPECT_TG_ERROR(parse_npy(npy_with("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", 4),
                            "x.npy"),
                  ErrorCode::kLimitExceeded, "rank 17");
}

}  // namespace
}  // namespace tracegraph
