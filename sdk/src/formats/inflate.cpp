// A DEFLATE decoder (RFC 1951), written for the zip reader: a canonical
// Huffman decoder that reads one bit at a time (like zlib's puff.c), whose
// every table, length and distance is checked before use. Speed matters
// little: torch's own archives store their entries; only a user's re-zipped
// archive comes deflated.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tracegraph/error.h"
#include "tracegraph/zip_archive.h"

namespace tracegraph {
namespace {

constexpr int kMaxBits = 15;
constexpr int kMaxLiteralCodes = 288;
constexpr int kMaxDistanceCodes = 30;

struct Huffman {
  std::array<std::uint16_t, kMaxBits + 1> count{};  // codes of each length
  std::array<std::uint16_t, kMaxLiteralCodes> symbol{};  // symbols by code
};

class Inflater {
 public:
  Inflater(std::span<const std::byte> in, std::uint64_t expected, const std::string& where, std::uint64_t stop_after)
      : in_(in), expected_(expected), stop_(std::min(expected, stop_after)), where_(where) {
    // Not the size the header declares: a bomb's header declares gigabytes.
    // What a stream can produce is bounded by its own length (DEFLATE's best
    // ratio is a little under 1032:1) and by what the caller needs.
    out_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(stop_, std::uint64_t{in.size()} * 4 + 4096)));
  }

  std::vector<std::byte> run() {
    bool last = false;
    while (!last && !done()) {
      last = bits(1) != 0;
      switch (bits(2)) {
        case 0: stored(); break;
        case 1: fixed(); break;
        case 2: dynamic(); break;
        default: bad("a block of the reserved type 3");
      }
    }
    if (done()) {
      out_.resize(static_cast<std::size_t>(stop_));  // a match may run past the prefix
      return std::move(out_);
    }
    if (out_.size() != expected_) {
      fail(ErrorCode::kBadShape, where_ + ": the deflated stream holds " + std::to_string(out_.size()) + " bytes, the directory says " +
                                     std::to_string(expected_));
    }
    return std::move(out_);
  }

 private:
  bool done() const { return stop_ < expected_ && out_.size() >= stop_; }

  [[noreturn]] void bad(const std::string& what) const {
    fail(ErrorCode::kParse, where_ + ": malformed deflated data at byte " + std::to_string(pos_) + " of the stream: " + what);
  }

  int bits(int need) {
    std::uint32_t v = bitbuf_;
    while (bitcnt_ < need) {
      if (pos_ >= in_.size()) {
        fail(ErrorCode::kTruncated, where_ + ": the deflated stream ends at byte " + std::to_string(in_.size()) + " before its last block");
      }
      v |= static_cast<std::uint32_t>(in_[pos_++]) << bitcnt_;
      bitcnt_ += 8;
    }
    bitbuf_ = v >> need;
    bitcnt_ -= need;
    return static_cast<int>(v & ((1u << need) - 1u));
  }

  void put(std::byte b) {
    if (out_.size() >= expected_) overflow();
    out_.push_back(b);
  }
  [[noreturn]] void overflow() const {
    fail(ErrorCode::kBadShape, where_ + ": the deflated stream holds more than the " + std::to_string(expected_) +
                                   " bytes the directory says");
  }

  void stored() {
    bitbuf_ = 0;
    bitcnt_ = 0;  // to the byte boundary
    if (in_.size() - pos_ < 4) fail(ErrorCode::kTruncated, where_ + ": a stored block's length runs past the end of the stream");
    const unsigned len = static_cast<unsigned>(in_[pos_]) | static_cast<unsigned>(in_[pos_ + 1]) << 8;
    const unsigned nlen = static_cast<unsigned>(in_[pos_ + 2]) | static_cast<unsigned>(in_[pos_ + 3]) << 8;
    if (len != (~nlen & 0xffffu)) bad("a stored block's length and its complement disagree");
    pos_ += 4;
    if (in_.size() - pos_ < len) fail(ErrorCode::kTruncated, where_ + ": a stored block of " + std::to_string(len) + " bytes runs past the end of the stream");
    if (expected_ - out_.size() < len) overflow();
    out_.insert(out_.end(), in_.begin() + static_cast<std::ptrdiff_t>(pos_), in_.begin() + static_cast<std::ptrdiff_t>(pos_ + len));
    pos_ += len;
  }

  // Canonical codes from code lengths; an over-subscribed set is malformed,
  // an incomplete one is allowed (decoding an unused code fails).
  void build(Huffman& h, const std::uint16_t* lengths, int n) {
    h.count.fill(0);
    for (int s = 0; s < n; ++s) ++h.count[lengths[s]];
    int left = 1;
    for (int len = 1; len <= kMaxBits; ++len) {
      left <<= 1;
      left -= h.count[len];
      if (left < 0) bad("an over-subscribed Huffman code");
    }
    std::array<std::uint16_t, kMaxBits + 1> offs{};
    for (int len = 1; len < kMaxBits; ++len) offs[len + 1] = static_cast<std::uint16_t>(offs[len] + h.count[len]);
    for (int s = 0; s < n; ++s) {
      if (lengths[s] != 0) h.symbol[offs[lengths[s]]++] = static_cast<std::uint16_t>(s);
    }
  }

  int decode(const Huffman& h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= kMaxBits; ++len) {
      code |= bits(1);
      const int count = h.count[len];
      if (code - count < first) return h.symbol[index + (code - first)];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    bad("a code that no symbol has");
  }

  void codes(const Huffman& lit, const Huffman& dist) {
    static constexpr std::array<std::uint16_t, 29> kLenBase = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
                                                               31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr std::array<std::uint8_t, 29> kLenExtra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                               2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static constexpr std::array<std::uint16_t, 30> kDistBase = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
                                                                193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
                                                                6145, 8193, 12289, 16385, 24577};
    static constexpr std::array<std::uint8_t, 30> kDistExtra = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                                                6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    for (;;) {
      if (done()) return;
      int sym = decode(lit);
      if (sym < 256) {
        put(static_cast<std::byte>(sym));
        continue;
      }
      if (sym == 256) return;
      sym -= 257;
      if (sym >= 29) bad("a length code past 285");
      const std::size_t len = kLenBase[sym] + static_cast<std::size_t>(bits(kLenExtra[sym]));
      const int dsym = decode(dist);
      if (dsym >= 30) bad("a distance code past 29");
      const std::size_t d = kDistBase[dsym] + static_cast<std::size_t>(bits(kDistExtra[dsym]));
      if (d > out_.size()) bad("a distance of " + std::to_string(d) + " bytes back, before the start of the output");
      if (expected_ - out_.size() < len) overflow();
      const std::size_t from = out_.size() - d;
      for (std::size_t k = 0; k < len; ++k) out_.push_back(out_[from + k]);  // overlapping copies repeat
    }
  }

  void fixed() {
    if (!fixed_built_) {
      std::array<std::uint16_t, kMaxLiteralCodes> l{};
      int s = 0;
      for (; s < 144; ++s) l[s] = 8;
      for (; s < 256; ++s) l[s] = 9;
      for (; s < 280; ++s) l[s] = 7;
      for (; s < kMaxLiteralCodes; ++s) l[s] = 8;
      build(fixed_lit_, l.data(), kMaxLiteralCodes);
      std::array<std::uint16_t, kMaxDistanceCodes> d{};
      d.fill(5);
      build(fixed_dist_, d.data(), kMaxDistanceCodes);
      fixed_built_ = true;
    }
    codes(fixed_lit_, fixed_dist_);
  }

  void dynamic() {
    static constexpr std::array<std::uint8_t, 19> kOrder = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    const int nlen = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
    if (nlen > 286 || ndist > kMaxDistanceCodes) bad("more length or distance codes than DEFLATE has");
    std::array<std::uint16_t, 320> lengths{};
    for (int i = 0; i < ncode; ++i) lengths[kOrder[i]] = static_cast<std::uint16_t>(bits(3));
    Huffman lencode;
    build(lencode, lengths.data(), 19);
    int index = 0;
    while (index < nlen + ndist) {
      int sym = decode(lencode);
      if (sym < 16) {
        lengths[index++] = static_cast<std::uint16_t>(sym);
        continue;
      }
      std::uint16_t len = 0;
      int repeat;
      if (sym == 16) {
        if (index == 0) bad("a repeat of the previous code length before the first");
        len = lengths[index - 1];
        repeat = 3 + bits(2);
      } else if (sym == 17) {
        repeat = 3 + bits(3);
      } else {
        repeat = 11 + bits(7);
      }
      if (index + repeat > nlen + ndist) bad("code lengths past the number of codes");
      while (repeat--) lengths[index++] = len;
    }
    if (lengths[256] == 0) bad("no end-of-block code");
    Huffman lit, dist;
    build(lit, lengths.data(), nlen);
    build(dist, lengths.data() + nlen, ndist);
    codes(lit, dist);
  }

  std::span<const std::byte> in_;
  std::uint64_t expected_, stop_;
  const std::string& where_;
  std::size_t pos_ = 0;
  std::uint32_t bitbuf_ = 0;
  int bitcnt_ = 0;
  std::vector<std::byte> out_;
  bool fixed_built_ = false;
  Huffman fixed_lit_, fixed_dist_;
};

}  // namespace

std::vector<std::byte> inflate_raw(std::span<const std::byte> compressed, std::uint64_t expected_size, const std::string& where,
                                   std::uint64_t stop_after) {
  return Inflater(compressed, expected_size, where, stop_after).run();
}

}  // namespace tracegraph
