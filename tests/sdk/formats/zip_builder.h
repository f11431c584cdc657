// Zip archives made in a test, record by record, so that a test can make one
// that lies: local headers and central directory records written apart
// (sizes, offsets and CRCs as given), and raw DEFLATE streams that inflate far
// past their own size. No Python-made files: the hostile bytes are in the test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/zip_archive.h"

namespace tracegraph::test {

inline std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

class ZipBuilder {
 public:
  struct Record {
    std::string name;
    std::uint16_t method = 0;
    std::uint32_t crc = 0;
    std::uint64_t compressed = 0, size = 0, offset = 0;
  };

  // A local header and its data; the record the central directory will hold
  // for it (to change before finish() for a lying one).
  Record& local(std::string name, std::uint16_t method, std::uint32_t crc, std::uint64_t compressed, std::uint64_t size,
                const std::vector<std::byte>& data) {
    Record r{std::move(name), method, crc, compressed, size, bytes_.size()};
    put(0x04034b50, 4);
    put(20, 2);
    put(0, 2);
    put(method, 2);
    put(0, 4);
    put(crc, 4);
    put(compressed, 4);
    put(size, 4);
    put(r.name.size(), 2);
    put(0, 2);
    for (char c : r.name) bytes_.push_back(static_cast<std::byte>(c));
    bytes_.insert(bytes_.end(), data.begin(), data.end());
    records_.push_back(r);
    return records_.back();
  }
  // A stored entry, as torch writes it.
  Record& stored(std::string name, std::string_view data) {
    const auto b = bytes_of(data);
    return local(std::move(name), 0, crc32(b), b.size(), b.size(), b);
  }
  std::vector<Record>& records() { return records_; }
  std::vector<std::byte>& bytes() { return bytes_; }

  // The central directory of records() and the end record.
  std::vector<std::byte> finish() {
    const std::size_t directory = bytes_.size();
    for (const Record& r : records_) {
      put(0x02014b50, 4);
      put(20, 2);
      put(20, 2);
      put(0, 2);
      put(r.method, 2);
      put(0, 4);
      put(r.crc, 4);
      put(r.compressed, 4);
      put(r.size, 4);
      put(r.name.size(), 2);
      for (int i = 0; i < 4; ++i) put(0, 2);
      put(0, 4);
      put(r.offset, 4);
      for (char c : r.name) bytes_.push_back(static_cast<std::byte>(c));
    }
    const std::size_t end = bytes_.size();
    put(0x06054b50, 4);
    put(0, 2);
    put(0, 2);
    put(records_.size(), 2);
    put(records_.size(), 2);
    put(end - directory, 4);
    put(directory, 4);
    put(0, 2);
    return bytes_;
  }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xffu));
  }
  std::vector<std::byte> bytes_;
  std::vector<Record> records_;
};

// A raw DEFLATE stream of one fixed-Huffman block that is not the last: the
// byte `fill`, then `matches` copies of 258 bytes at distance 1 (13 bits
// each). Decoded in full it is 1 + 258 * matches bytes of `fill`; a stream
// made of it and `junk` more bytes never ends, so only a reader that stops
// early reads it at all.
inline std::vector<std::byte> deflate_run(std::uint8_t fill, std::size_t matches, std::size_t junk) {
  std::vector<std::byte> out;
  std::uint32_t acc = 0;
  int n = 0;
  auto bit = [&](std::uint32_t b) {
    acc |= b << n;
    if (++n == 8) {
      out.push_back(static_cast<std::byte>(acc));
      acc = 0;
      n = 0;
    }
  };
  auto code = [&](std::uint32_t c, int len) {  // Huffman codes go most significant bit first
    for (int i = len - 1; i >= 0; --i) bit((c >> i) & 1u);
  };
  bit(0);  // not the last block
  bit(1);  // type 01: fixed Huffman, two bits least significant first
  bit(0);
  if (fill < 144) code(0x30u + fill, 8);
  else code(0x190u + (fill - 144u), 9);
  for (std::size_t m = 0; m < matches; ++m) {
    code(0xc5u, 8);  // length code 285: 258 bytes
    code(0, 5);      // distance code 0: 1 byte back
  }
  if (n) out.push_back(static_cast<std::byte>(acc));
  out.resize(out.size() + junk, std::byte{0xff});
  return out;
}

}  // namespace tracegraph::test
