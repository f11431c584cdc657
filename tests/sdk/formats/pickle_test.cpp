#include "tracegraph/pickle.h"

#include <string>
#include <vector>

#include "test_util.h"

namespace tracegraph {
namespace {

using Kind = PickleValue::Kind;

std::vector<std::byte> bytes(std::initializer_list<std::uint8_t> v) {
  std::vector<std::byte> out;
  for (auto x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}
std::vector<std::byte> bytes(const std::string& s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

// Python 3.11: pickle.dumps({'a': [1, 2.5, None, True, -300, 1 << 40], 'b': (b'x', 'é')}, 2)
const std::vector<std::byte> kPlain = bytes({
    0x80, 0x02, 0x7d, 0x71, 0x00, 0x28, 0x58, 0x01, 0x00, 0x00, 0x00, 0x61, 0x71, 0x01, 0x5d, 0x71, 0x02, 0x28, 0x4b, 0x01,
    0x47, 0x40, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4e, 0x88, 0x4a, 0xd4, 0xfe, 0xff, 0xff, 0x8a, 0x06, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x65, 0x58, 0x01, 0x00, 0x00, 0x00, 0x62, 0x71, 0x03, 0x63, 0x5f, 0x63, 0x6f, 0x64, 0x65, 0x63,
    0x73, 0x0a, 0x65, 0x6e, 0x63, 0x6f, 0x64, 0x65, 0x0a, 0x71, 0x04, 0x58, 0x01, 0x00, 0x00, 0x00, 0x78, 0x71, 0x05, 0x58,
    0x06, 0x00, 0x00, 0x00, 0x6c, 0x61, 0x74, 0x69, 0x6e, 0x31, 0x71, 0x06, 0x86, 0x71, 0x07, 0x52, 0x71, 0x08, 0x58, 0x02,
    0x00, 0x00, 0x00, 0xc3, 0xa9, 0x71, 0x09, 0x86, 0x71, 0x0a, 0x75, 0x2e});

// What torch.save writes for {'weight': t, 'bias': t2} (protocol 2, a
// persistent id per storage), made by Python's pickle with stand-ins for
// torch._utils._rebuild_tensor_v2 and torch.FloatStorage; the second
// tensor's size and stride come from the memo.
const std::vector<std::byte> kTensors = bytes({
    0x80, 0x02, 0x7d, 0x71, 0x00, 0x28, 0x58, 0x06, 0x00, 0x00, 0x00, 0x77, 0x65, 0x69, 0x67, 0x68, 0x74, 0x71, 0x01, 0x63,
    0x74, 0x6f, 0x72, 0x63, 0x68, 0x2e, 0x5f, 0x75, 0x74, 0x69, 0x6c, 0x73, 0x0a, 0x5f, 0x72, 0x65, 0x62, 0x75, 0x69, 0x6c,
    0x64, 0x5f, 0x74, 0x65, 0x6e, 0x73, 0x6f, 0x72, 0x5f, 0x76, 0x32, 0x0a, 0x71, 0x02, 0x28, 0x28, 0x58, 0x07, 0x00, 0x00,
    0x00, 0x73, 0x74, 0x6f, 0x72, 0x61, 0x67, 0x65, 0x71, 0x03, 0x63, 0x74, 0x6f, 0x72, 0x63, 0x68, 0x0a, 0x46, 0x6c, 0x6f,
    0x61, 0x74, 0x53, 0x74, 0x6f, 0x72, 0x61, 0x67, 0x65, 0x0a, 0x71, 0x04, 0x58, 0x01, 0x00, 0x00, 0x00, 0x30, 0x71, 0x05,
    0x58, 0x03, 0x00, 0x00, 0x00, 0x63, 0x70, 0x75, 0x71, 0x06, 0x4b, 0x06, 0x74, 0x71, 0x07, 0x51, 0x4b, 0x00, 0x4b, 0x02,
    0x4b, 0x03, 0x86, 0x71, 0x08, 0x4b, 0x03, 0x4b, 0x01, 0x86, 0x71, 0x09, 0x89, 0x63, 0x63, 0x6f, 0x6c, 0x6c, 0x65, 0x63,
    0x74, 0x69, 0x6f, 0x6e, 0x73, 0x0a, 0x4f, 0x72, 0x64, 0x65, 0x72, 0x65, 0x64, 0x44, 0x69, 0x63, 0x74, 0x0a, 0x71, 0x0a,
    0x29, 0x52, 0x71, 0x0b, 0x74, 0x71, 0x0c, 0x52, 0x71, 0x0d, 0x58, 0x04, 0x00, 0x00, 0x00, 0x62, 0x69, 0x61, 0x73, 0x71,
    0x0e, 0x68, 0x02, 0x28, 0x28, 0x68, 0x03, 0x68, 0x04, 0x68, 0x05, 0x68, 0x06, 0x4b, 0x06, 0x74, 0x71, 0x0f, 0x51, 0x4b,
    0x00, 0x68, 0x08, 0x68, 0x09, 0x89, 0x68, 0x0a, 0x29, 0x52, 0x71, 0x10, 0x74, 0x71, 0x11, 0x52, 0x71, 0x12, 0x75, 0x2e});

TEST(PickleTest, ReadsScalarsStringsListsTuplesAndDicts) {
  const PickleRef v = read_pickle(kPlain, "plain.pkl");
  ASSERT_EQ(v->kind, Kind::kDict);
  const PickleValue* a = v->find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->kind, Kind::kList);
  ASSERT_EQ(a->items.size(), 6u);
  EXPECT_EQ(a->items[0]->integer, 1);
  EXPECT_EQ(a->items[1]->number, 2.5);
  EXPECT_EQ(a->items[2]->kind, Kind::kNone);
  EXPECT_TRUE(a->items[3]->boolean);
  EXPECT_EQ(a->items[4]->integer, -300);
  EXPECT_EQ(a->items[5]->integer, std::int64_t{1} << 40);
  const PickleValue* b = v->find("b");
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->kind, Kind::kTuple);
  EXPECT_EQ(b->items[0]->callable(), "_codecs.encode");  // protocol 2's bytes: a call, kept as one
  EXPECT_EQ(b->items[1]->text, "\xc3\xa9");
  EXPECT_EQ(v->depth, 5u);  // dict > tuple > call > its arguments > a string
  EXPECT_EQ(v->find("c"), nullptr);
}

TEST(PickleTest, KeepsCallsAndPersistentIdsWithoutRunningThem) {
  const PickleRef v = read_pickle(kTensors, "data.pkl");
  for (const char* key : {"weight", "bias"}) {
    SCOPED_TRACE(key);
    const PickleValue* t = v->find(key);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->kind, Kind::kReduce);
    EXPECT_EQ(t->callable(), "torch._utils._rebuild_tensor_v2");
    const PickleValue& args = *t->items[1];
    ASSERT_EQ(args.items.size(), 6u);
    ASSERT_EQ(args.items[0]->kind, Kind::kPersistentId);
    const PickleValue& id = *args.items[0]->items[0];
    ASSERT_EQ(id.items.size(), 5u);
    EXPECT_EQ(id.items[0]->text, "storage");
    EXPECT_EQ(id.items[1]->text, "torch.FloatStorage");
    EXPECT_EQ(id.items[2]->text, "0");
    EXPECT_EQ(id.items[4]->integer, 6);
    EXPECT_EQ(args.items[2]->items.size(), 2u);  // size (2, 3)
    EXPECT_EQ(args.items[3]->items[0]->integer, 3);  // stride (3, 1)
  }
}

TEST(PickleTest, BuildSetsStateInPlaceSoTheMemoSeesIt) {
  // GLOBAL m.C, EMPTY_TUPLE, NEWOBJ, BINPUT 0, EMPTY_DICT, 'k' 1 SETITEM, BUILD, POP, BINGET 0, STOP
  static const char kRaw[] = "\x80\x02" "cm\nC\n" ")\x81q\x00}X\x01\x00\x00\x00kK\x01sb0h\x00.";
  const auto p = bytes(std::string(kRaw, sizeof kRaw - 1));
  const PickleRef v = read_pickle(p, "build.pkl");
  ASSERT_EQ(v->kind, Kind::kBuild);
  EXPECT_EQ(v->callable(), "m.C");
  EXPECT_EQ(v->items[1]->find("k")->integer, 1);
}

TEST(PickleTest, EveryPrefixIsATypedError) {
  for (const auto* p : {&kPlain, &kTensors}) {
    for (std::size_t n = 0; n < p->size(); ++n) {
      EXPECT_THROW(read_pickle(std::span(p->data(), n), "cut.pkl"), Error) << n;
    }
  }
  EXPECT_TG_ERROR(read_pickle(std::span(kPlain.data(), 8), "cut.pkl"), ErrorCode::kTruncated, "cut.pkl: pickle opcode at byte 6");
}

TEST(PickleTest, RefusesWhatItCannotReadSafely) {
  EXPECT_TG_ERROR(read_pickle(bytes({0x80, 0x02, 0xff}), "x.pkl"), ErrorCode::kParse, "byte 2: unknown or unsupported opcode 0xff");
  EXPECT_TG_ERROR(read_pickle(bytes({'a', '.'}), "x.pkl"), ErrorCode::kParse, "does not hold");
  EXPECT_TG_ERROR(read_pickle(bytes({'h', 0x07, '.'}), "x.pkl"), ErrorCode::kParse, "memo entry 7 was never stored");
  EXPECT_TG_ERROR(read_pickle(bytes({'N', 'N', '.'}), "x.pkl"), ErrorCode::kParse, "STOP with 2 values");
  // A list put inside itself, and one changed after it is inside another.
  EXPECT_TG_ERROR(read_pickle(bytes({']', 'q', 0, 'h', 0, 'a', '.'}), "x.pkl"), ErrorCode::kUnsupported, "inside itself");
  EXPECT_TG_ERROR(read_pickle(bytes({']', 'q', 0, ']', 'h', 0, 'a', '0', 'h', 0, 'K', 1, 'a', '.'}), "x.pkl"), ErrorCode::kUnsupported,
                  "already inside another");
  // 200 lists, each appended into the one before: deeper than the limit.
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += ']';
  for (int i = 0; i < 199; ++i) deep += 'a';
  deep += '.';
  EXPECT_TG_ERROR(read_pickle(bytes(deep), "deep.pkl"), ErrorCode::kLimitExceeded, "nest deeper than 128");
  LoadLimits limits;
  limits.max_pickle_ops = 10;
  EXPECT_TG_ERROR(read_pickle(kPlain, "x.pkl", limits), ErrorCode::kLimitExceeded, "more than 10 opcodes");
  // A length past the end is refused before anything is allocated.
  EXPECT_TG_ERROR(read_pickle(bytes({'X', 0xff, 0xff, 0xff, 0x7f}), "x.pkl"), ErrorCode::kTruncated, "needs 2147483647 bytes");
}

// Issue 50's hostile pickles: every length is checked against the bytes left
// before anything is allocated, and nesting is bounded.
TEST(PickleHostileTest, LengthsPastTheBytesLeftAreTruncatedBeforeAllocating) {
  // BINUNICODE of 2^32-1 with a 3-byte body.
  EXPECT_TG_ERROR(read_pickle(bytes({0x80, 0x02, 'X', 0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c', '.'}), "x.pkl"), ErrorCode::kTruncated,
                  "x.pkl: pickle opcode at byte 2 needs 4294967295 bytes, 4 are left");
  // BINBYTES8 and SHORT_BINUNICODE's 8-byte sibling of 2^63.
  for (std::uint8_t op : {std::uint8_t{0x8e}, std::uint8_t{0x8d}}) {
    EXPECT_TG_ERROR(read_pickle(bytes({op, 0, 0, 0, 0, 0, 0, 0, 0x80, 'x', '.'}), "x.pkl"), ErrorCode::kTruncated, "needs 9223372036854775808 bytes");
  }
  // BINBYTES of 2^31 and a FRAME that promises more than there is (a hint only: the read goes on, bounded by the bytes).
  EXPECT_TG_ERROR(read_pickle(bytes({'B', 0, 0, 0, 0x80, '.'}), "x.pkl"), ErrorCode::kTruncated, "needs 2147483648 bytes");
  const PickleRef framed = read_pickle(bytes({0x80, 0x04, 0x95, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 'N', '.'}), "x.pkl");
  EXPECT_EQ(framed->kind, Kind::kNone);
}

TEST(PickleHostileTest, NestingIsBoundedByTheDepthLimit) {
  // [] wrapped 10,000 times by TUPLE1.
  std::vector<std::byte> deep = bytes({0x80, 0x02, ']'});
  for (int i = 0; i < 10000; ++i) deep.push_back(std::byte{0x85});
  deep.push_back(std::byte{'.'});
  EXPECT_TG_ERROR(read_pickle(deep, "deep.pkl"), ErrorCode::kLimitExceeded, "values nest deeper than 128 levels");
  std::vector<std::byte> marks = bytes({0x80, 0x02});
  marks.insert(marks.end(), 10000, std::byte{'('});
  EXPECT_TG_ERROR(read_pickle(marks, "marks.pkl"), ErrorCode::kLimitExceeded, "MARKs nest deeper than 128");
}

TEST(PickleHostileTest, OpcodesAreBoundedInAll) {
  std::vector<std::byte> many = bytes({0x80, 0x02, 'N'});
  many.insert(many.end(), 2000, std::byte{'2'});  // DUP
  LoadLimits limits;
  limits.max_pickle_ops = 1000;
  EXPECT_TG_ERROR(read_pickle(many, "many.pkl", limits), ErrorCode::kLimitExceeded, "more than 1000 opcodes");
}

}  // namespace
}  // namespace tracegraph
