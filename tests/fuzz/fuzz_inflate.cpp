// Fuzzes the DEFLATE decoder (inflate_raw) on raw streams, which fuzz_zip
// reaches only through an archive whose headers and CRC the mutator must keep
// right. The first 4 bytes say what the caller declares and needs; the rest
// is the stream:
//
//   bytes 0-2  expected_size, little-endian, below 2^20 (a bounded output)
//   byte  3    stop_after: 255 for none, else expected_size * byte / 254
//   bytes 4-   the raw DEFLATE stream
//
// Any input must give exactly min(expected_size, stop_after) bytes or a
// tracegraph::Error, never more output than asked for. zlib is the oracle:
// a stream zlib inflates to exactly expected_size bytes must give the same
// bytes here (or their prefix). The converse is not checked: ours accepts
// incomplete Huffman codes that zlib refuses, so a stream only we read is
// not a finding.
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tracegraph/error.h"
#include "tracegraph/zip_archive.h"

namespace {

// zlib's raw inflate into at most `expected` + 1 bytes: the output when the
// stream ends with exactly `expected` bytes, else nothing.
bool zlib_inflate(const std::uint8_t* in, std::size_t size, std::size_t expected, std::vector<std::uint8_t>& out) {
  z_stream s;
  std::memset(&s, 0, sizeof s);
  if (inflateInit2(&s, -15) != Z_OK) return false;
  out.assign(expected + 1, 0);
  s.next_in = const_cast<Bytef*>(in);
  s.avail_in = static_cast<uInt>(size);
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&s, Z_FINISH);
  const std::size_t produced = out.size() - s.avail_out;
  inflateEnd(&s);
  if (rc != Z_STREAM_END || produced != expected) return false;
  out.resize(produced);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::uint64_t expected = (data[0] | (data[1] << 8) | (data[2] << 16)) & ((1u << 20) - 1);
  const std::uint64_t stop = data[3] == 255 ? UINT64_MAX : expected * data[3] / 254;
  const std::uint64_t want = std::min(expected, stop);
  const std::uint8_t* stream = data + 4;
  const std::size_t stream_size = size - 4;

  std::vector<std::uint8_t> reference;
  const bool zlib_ok = zlib_inflate(stream, stream_size, static_cast<std::size_t>(expected), reference);
  try {
    const std::vector<std::byte> out =
        tracegraph::inflate_raw({reinterpret_cast<const std::byte*>(stream), stream_size}, expected, "fuzz.deflate", stop);
    if (out.size() != want) __builtin_trap();
    if (zlib_ok && !out.empty() && std::memcmp(out.data(), reference.data(), out.size()) != 0) __builtin_trap();
  } catch (const tracegraph::Error&) {
    // zlib read the whole stream to the declared size: so must we, unless
    // we stopped early (a prefix needs fewer blocks, never more).
    if (zlib_ok) __builtin_trap();
  }
  return 0;
}
