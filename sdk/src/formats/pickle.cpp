#include "tracegraph/pickle.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "tracegraph/error.h"

namespace tracegraph {

std::string_view PickleValue::callable() const {
  if (kind == Kind::kGlobal) return text;
  if ((kind == Kind::kReduce || kind == Kind::kBuild) && !items.empty()) return items[0]->callable();
  return {};
}

const PickleValue* PickleValue::find(std::string_view key) const {
  if (kind != Kind::kDict) return nullptr;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    if (items[i]->kind == Kind::kString && items[i]->text == key) return items[i + 1].get();
  }
  return nullptr;
}

namespace {

using Kind = PickleValue::Kind;
using Mutable = std::shared_ptr<PickleValue>;

class Unpickler {
 public:
  Unpickler(std::span<const std::byte> bytes, std::string_view source, const LoadLimits& limits)
      : in_(bytes), source_(source), limits_(limits) {}

  PickleRef run() {
    for (std::uint64_t ops = 0;; ++ops) {
      if (ops >= limits_.max_pickle_ops) fail_at(ErrorCode::kLimitExceeded, "more than " + std::to_string(limits_.max_pickle_ops) + " opcodes");
      op_at_ = pos_;
      const std::uint8_t op = u8();
      if (op == '.') {  // STOP
        if (stack_.size() != 1 || !marks_.empty()) fail_at(ErrorCode::kParse, "STOP with " + std::to_string(stack_.size()) + " values on the stack");
        return stack_.back();
      }
      step(op);
    }
  }

 private:
  [[noreturn]] void fail_at(ErrorCode code, const std::string& what) const {
    fail(code, std::string(source_) + ": pickle opcode at byte " + std::to_string(op_at_) + ": " + what);
  }

  const std::byte* take(std::uint64_t n) {
    if (n > in_.size() - pos_) {
      fail(ErrorCode::kTruncated, std::string(source_) + ": pickle opcode at byte " + std::to_string(op_at_) + " needs " + std::to_string(n) +
                                      " bytes, " + std::to_string(in_.size() - pos_) + " are left");
    }
    const std::byte* p = in_.data() + pos_;
    pos_ += static_cast<std::size_t>(n);
    return p;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(*take(1)); }
  std::uint64_t le(int n) {
    const std::byte* p = take(static_cast<std::uint64_t>(n));
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint64_t>(p[i]);
    return v;
  }
  std::string text(std::uint64_t n) {
    const std::byte* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  }
  std::string line() {
    const std::size_t start = pos_;
    while (pos_ < in_.size() && in_[pos_] != std::byte{'\n'}) ++pos_;
    if (pos_ >= in_.size()) fail(ErrorCode::kTruncated, std::string(source_) + ": pickle opcode at byte " + std::to_string(op_at_) + ": a line without its end");
    std::string s(reinterpret_cast<const char*>(in_.data() + start), pos_ - start);
    ++pos_;
    return s;
  }

  static Mutable leaf(Kind kind) {
    auto v = std::make_shared<PickleValue>();
    v->kind = kind;
    return v;
  }
  void push(Mutable v) { stack_.push_back(std::move(v)); }
  Mutable pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail_at(ErrorCode::kParse, "pops a value the stack does not hold");
    Mutable v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  Mutable& top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail_at(ErrorCode::kParse, "reads a value the stack does not hold");
    return stack_.back();
  }
  // The values since the last MARK, which goes.
  std::vector<Mutable> pop_mark() {
    if (marks_.empty()) fail_at(ErrorCode::kParse, "no MARK to pop to");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Mutable> out(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)), std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return out;
  }

  // `child` goes inside `parent`: neither changes after that, so depths hold.
  void contain(PickleValue& parent, const Mutable& child) {
    if (child.get() == &parent) fail_at(ErrorCode::kUnsupported, "a value put inside itself");
    if (child->depth + 1 > limits_.max_json_depth) {
      fail_at(ErrorCode::kLimitExceeded, "values nest deeper than " + std::to_string(limits_.max_json_depth) + " levels");
    }
    parent.depth = std::max(parent.depth, child->depth + 1);
    contained_.insert(child.get());
    parent.items.push_back(child);
  }
  void mutate(const Mutable& v, Kind expected, const char* what) {
    if (v->kind != expected) fail_at(ErrorCode::kParse, std::string(what) + " on a value that is not one");
    if (contained_.count(v.get())) fail_at(ErrorCode::kUnsupported, std::string(what) + " changes a value already inside another");
  }
  Mutable make(Kind kind, const std::vector<Mutable>& items) {
    Mutable v = leaf(kind);
    for (const auto& x : items) contain(*v, x);
    return v;
  }

  void memo_put(std::uint64_t index) {
    if (memo_.size() >= limits_.max_pickle_ops) fail_at(ErrorCode::kLimitExceeded, "too many memo entries");
    memo_[index] = top();
  }
  void memo_get(std::uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail_at(ErrorCode::kParse, "memo entry " + std::to_string(index) + " was never stored");
    push(it->second);
  }

  void step(std::uint8_t op) {
    switch (op) {
      case 0x80: u8(); return;      // PROTO
      case 0x95: le(8); return;     // FRAME: a length hint
      case 'N': return push(leaf(Kind::kNone));
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        Mutable v = leaf(Kind::kBool);
        v->boolean = op == 0x88;
        return push(v);
      }
      case 'J': return push_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(le(4))));
      case 'K': return push_int(u8());
      case 'M': return push_int(static_cast<std::int64_t>(le(2)));
      case 0x8a: {  // LONG1: little-endian two's complement
        const std::uint8_t n = u8();
        if (n > 8) fail_at(ErrorCode::kUnsupported, "an integer of " + std::to_string(n) + " bytes (over 64 bits)");
        std::uint64_t v = n ? le(n) : 0;
        if (n && n < 8 && (v >> (8 * n - 1)) & 1u) v |= ~std::uint64_t{0} << (8 * n);
        return push_int(static_cast<std::int64_t>(v));
      }
      case 'I': {  // INT: text; "01"/"00" are True/False
        const std::string s = line();
        if (s == "01" || s == "00") {
          Mutable v = leaf(Kind::kBool);
          v->boolean = s == "01";
          return push(v);
        }
        try {
          std::size_t used = 0;
          const long long x = std::stoll(s, &used);
          if (used != s.size()) throw std::invalid_argument(s);
          return push_int(x);
        } catch (const std::exception&) {
          fail_at(ErrorCode::kParse, "INT '" + s + "' is not an integer");
        }
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        const std::byte* p = take(8);
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<std::uint64_t>(p[i]);
        Mutable v = leaf(Kind::kFloat);
        std::memcpy(&v->number, &bits, sizeof bits);  // (libc++ 14 has no std::bit_cast)
        return push(v);
      }
      case 'X': return push_text(Kind::kString, le(4));
      case 0x8c: return push_text(Kind::kString, u8());
      case 0x8d: return push_text(Kind::kString, le(8));
      case 'T': return push_text(Kind::kBytes, le(4));  // BINSTRING (Python 2 str): its bytes
      case 'U': return push_text(Kind::kBytes, u8());
      case 'B': return push_text(Kind::kBytes, le(4));
      case 'C': return push_text(Kind::kBytes, u8());
      case 0x8e: return push_text(Kind::kBytes, le(8));
      case ')': return push(leaf(Kind::kTuple));
      case ']': return push(leaf(Kind::kList));
      case '}': return push(leaf(Kind::kDict));
      case 't': return push(make(Kind::kTuple, pop_mark()));
      case 'l': return push(make(Kind::kList, pop_mark()));
      case 'd': {
        std::vector<Mutable> kv = pop_mark();
        if (kv.size() % 2) fail_at(ErrorCode::kParse, "DICT with an odd number of values");
        return push(make(Kind::kDict, kv));
      }
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        std::vector<Mutable> items(static_cast<std::size_t>(op - 0x84));
        for (std::size_t i = items.size(); i-- > 0;) items[i] = pop();
        return push(make(Kind::kTuple, items));
      }
      case 'a': {  // APPEND
        Mutable x = pop();
        Mutable& list = top();
        mutate(list, Kind::kList, "APPEND");
        return contain(*list, x);
      }
      case 'e': {  // APPENDS
        std::vector<Mutable> xs = pop_mark();
        Mutable& list = top();
        mutate(list, Kind::kList, "APPENDS");
        for (const auto& x : xs) contain(*list, x);
        return;
      }
      case 's': {  // SETITEM
        Mutable value = pop();
        Mutable key = pop();
        Mutable& dict = top();
        mutate(dict, Kind::kDict, "SETITEM");
        contain(*dict, key);
        return contain(*dict, value);
      }
      case 'u': {  // SETITEMS
        std::vector<Mutable> kv = pop_mark();
        if (kv.size() % 2) fail_at(ErrorCode::kParse, "SETITEMS with an odd number of values");
        Mutable& dict = top();
        mutate(dict, Kind::kDict, "SETITEMS");
        for (const auto& x : kv) contain(*dict, x);
        return;
      }
      case '(':
        if (marks_.size() >= limits_.max_json_depth) fail_at(ErrorCode::kLimitExceeded, "MARKs nest deeper than " + std::to_string(limits_.max_json_depth));
        marks_.push_back(stack_.size());
        return;
      case '0': pop(); return;
      case '1': pop_mark(); return;
      case '2': return push(top());
      case 'q': return memo_put(u8());
      case 'r': return memo_put(le(4));
      case 0x94: return memo_put(memo_.size());  // MEMOIZE
      case 'h': return memo_get(u8());
      case 'j': return memo_get(le(4));
      case 'c': {  // GLOBAL module\nname\n
        std::string module = line();
        std::string name = line();
        Mutable v = leaf(Kind::kGlobal);
        v->text = module + "." + name;
        return push(v);
      }
      case 0x93: {  // STACK_GLOBAL
        Mutable name = pop();
        Mutable module = pop();
        if (name->kind != Kind::kString || module->kind != Kind::kString) fail_at(ErrorCode::kParse, "STACK_GLOBAL of values that are not strings");
        Mutable v = leaf(Kind::kGlobal);
        v->text = module->text + "." + name->text;
        return push(v);
      }
      case 'R':
      case 0x81: {  // REDUCE, NEWOBJ: callable(*args)
        Mutable args = pop();
        Mutable callable = pop();
        if (args->kind != Kind::kTuple) fail_at(ErrorCode::kParse, "the arguments of a call are not a tuple");
        return push(make(Kind::kReduce, {callable, args}));
      }
      case 'b': {  // BUILD: object.__setstate__(state), in place: memo entries of the object see its state
        Mutable state = pop();
        Mutable& object = top();
        if (contained_.count(object.get())) fail_at(ErrorCode::kUnsupported, "BUILD changes a value already inside another");
        auto made = std::make_shared<PickleValue>(std::move(*object));
        *object = PickleValue{};
        object->kind = Kind::kBuild;
        contain(*object, made);
        return contain(*object, state);
      }
      case 'Q': return push(make(Kind::kPersistentId, {pop()}));  // BINPERSID
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail_at(ErrorCode::kParse, std::string("unknown or unsupported opcode ") + hex);
      }
    }
  }

  void push_int(std::int64_t x) {
    Mutable v = leaf(Kind::kInt);
    v->integer = x;
    push(v);
  }
  void push_text(Kind kind, std::uint64_t n) {
    Mutable v = leaf(kind);
    v->text = text(n);
    push(v);
  }

  std::span<const std::byte> in_;
  std::string_view source_;
  const LoadLimits& limits_;
  std::size_t pos_ = 0, op_at_ = 0;
  std::vector<Mutable> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Mutable> memo_;
  std::unordered_set<const PickleValue*> contained_;
};

}  // namespace

PickleRef read_pickle(std::span<const std::byte> bytes, std::string_view source, const LoadLimits& limits) {
  return Unpickler(bytes, source, limits).run();
}

}  // namespace tracegraph
