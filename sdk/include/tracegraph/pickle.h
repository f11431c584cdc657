// A bounded reader of Python pickles (protocols 2 to 5), for what torch.jit.save
// and torch.save write: a TorchScript archive's data.pkl and constants.pkl.
//
// Nothing is executed: GLOBAL names a class or function ("torch._utils
// _rebuild_tensor_v2") and is kept as a name; REDUCE, NEWOBJ and BUILD keep
// what was called with what, and a persistent id (torch's storages) is kept
// as the value it carries. The caller reads meaning into those.
//
// Bounded: every length against the bytes left, the opcodes run against
// LoadLimits::max_pickle_ops, the nesting of values against
// LoadLimits::max_json_depth. A value already inside another is never
// changed afterwards (torch's pickles never do; refusing it keeps values
// acyclic, so their depth is known when they are built). Values may be
// shared (the memo hands one value out many times): a walk over them keeps
// a set of the values it has seen, or a small hostile pickle costs it
// exponential time. Errors are typed and name the source and the byte
// offset of the opcode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracegraph/load_limits.h"

namespace tracegraph {

struct PickleValue;
using PickleRef = std::shared_ptr<const PickleValue>;

struct PickleValue {
  enum class Kind : std::uint8_t {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,        // text (str)
    kBytes,         // bytes
    kTuple,         // items
    kList,          // items
    kDict,          // items: key, value, key, value, ...
    kGlobal,        // text: "module.name" (a class or function, not resolved)
    kReduce,        // items: [callable, args tuple]: REDUCE and NEWOBJ
    kBuild,         // items: [object, state]: BUILD
    kPersistentId,  // items: [the id's value]
  };
  Kind kind = Kind::kNone;
  bool boolean = false;
  std::int64_t integer = 0;
  double number = 0;
  std::string text;
  std::vector<PickleRef> items;
  std::uint32_t depth = 1;  // 1 for a leaf, 1 + the deepest item otherwise

  // "module.name" of a kGlobal, of the callable of a kReduce, or of the object of a kBuild; empty otherwise.
  std::string_view callable() const;
  // A kDict's value for a string key; nullptr when absent.
  const PickleValue* find(std::string_view key) const;
};

// Reads one pickle (up to its STOP). `source` names it in errors: kParse for
// an unknown opcode or a malformed stream, kTruncated when the bytes end
// first, kLimitExceeded past a limit, kUnsupported for what torch never
// writes (a value changed after it is inside another).
PickleRef read_pickle(std::span<const std::byte> bytes, std::string_view source, const LoadLimits& limits = {});

}  // namespace tracegraph
