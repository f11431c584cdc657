#include "formats/torchscript/reader.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "formats/storage.h"
#include "tracegraph/error.h"

namespace tracegraph::torchscript {

namespace {

// The dtype of a pickled storage type ("torch.FloatStorage"); nullopt for others.
std::optional<DType> storage_dtype(std::string_view type) {
  static const std::map<std::string, DType, std::less<>> kTypes = {
      {"torch.FloatStorage", DType::kFloat32}, {"torch.DoubleStorage", DType::kFloat64}, {"torch.HalfStorage", DType::kFloat16},
      {"torch.BFloat16Storage", DType::kBFloat16}, {"torch.LongStorage", DType::kInt64}, {"torch.IntStorage", DType::kInt32},
      {"torch.ShortStorage", DType::kInt16}, {"torch.CharStorage", DType::kInt8}, {"torch.ByteStorage", DType::kUInt8},
      {"torch.BoolStorage", DType::kBool}, {"torch.ComplexFloatStorage", DType::kComplex64}};
  auto it = kTypes.find(type);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

}  // namespace

Slot Reader::attribute(const PickleValue& module, const std::string& name, const Where& w) {
  const PickleValue* state = module.kind == PKind::kBuild && module.items.size() == 2 ? module.items[1].get() : nullptr;
  const PickleValue* v = state ? state->find(name) : nullptr;
  if (v) return from_pickle(*v, "data/", name, w);
  if (auto c = class_constant(std::string(module.callable()), name, w)) return *c;
  unsupported(w, "module " + std::string(module.callable()) + " has no attribute '" + name + "'");
}

Slot Reader::from_pickle(const PickleValue& v, const std::string& dir, const std::string& name, const Where& w) {
  Slot s;
  switch (v.kind) {
    case PKind::kNone: return s;
    case PKind::kBool: s.k = Slot::K::kBool; s.b = v.boolean; return s;
    case PKind::kInt: return constant_int(v.integer);
    case PKind::kFloat: s.k = Slot::K::kFloat; s.f = v.number; return s;
    case PKind::kString: s.k = Slot::K::kString; s.s = v.text; return s;
    case PKind::kList:
    case PKind::kTuple: {
      std::vector<Slot> items;
      for (const auto& item : v.items) items.push_back(from_pickle(*item, dir, name, w));
      return v.kind == PKind::kList ? make_list(std::move(items), w) : make_tuple(std::move(items), w);
    }
    case PKind::kBuild:
      if (v.callable().substr(0, 10) == "__torch__.") {
        s.k = Slot::K::kModule;
        s.module = &v;
        return s;
      }
      break;
    case PKind::kReduce:
      // torch.jit's typed lists: build_intlist([1, 2]), build_doublelist, build_boollist, build_tensorlist.
      if (v.callable().rfind("torch.jit._pickle.build_", 0) == 0 && v.callable().size() > 28 &&
          v.callable().substr(v.callable().size() - 4) == "list" && v.items[1]->items.size() == 1) {
        return from_pickle(*v.items[1]->items[0], dir, name, w);
      }
      if (v.callable() == "torch._utils._rebuild_tensor_v2" || v.callable() == "torch._utils._rebuild_parameter") {
        s.k = Slot::K::kTensor;
        s.v = tensor(v, dir, name, w);
        return s;
      }
      break;
    default: break;
  }
  unsupported(w, "attribute '" + name + "' is a " + std::string(v.callable().empty() ? "value" : v.callable()) + " the reader does not read");
}

ValueId Reader::tensor(const PickleValue& rebuild, const std::string& dir, const std::string& name, const Where& w) {
  if (auto it = tensors_.find(&rebuild); it != tensors_.end()) return it->second;
  const PickleValue* call = &rebuild;
  if (rebuild.callable() == "torch._utils._rebuild_parameter") {  // (tensor, requires_grad, hooks)
    const PickleValue& args = *rebuild.items[1];
    if (args.items.empty() || args.items[0]->callable() != "torch._utils._rebuild_tensor_v2") unsupported(w, "a parameter that is not a plain tensor");
    call = args.items[0].get();
  }
  const PickleValue& args = *call->items[1];
  auto bad = [&](const std::string& what) -> void { fail(ErrorCode::kSchema, zip_.source() + ":" + root_ + dir + " tensor '" + name + "': " + what); };
  if (args.items.size() < 4 || args.items[0]->kind != PKind::kPersistentId) bad("not (storage, offset, size, stride, ...)");
  const PickleValue& id = *args.items[0]->items[0];
  if (id.kind != PKind::kTuple || id.items.size() < 5 || id.items[2]->kind != PKind::kString) bad("its storage is not ('storage', type, key, location, numel)");
  const std::optional<DType> dtype = storage_dtype(id.items[1]->callable());
  if (!dtype) fail(ErrorCode::kUnknownDType, zip_.source() + ": tensor '" + name + "' is a " + std::string(id.items[1]->callable()));
  auto ints = [&](const PickleValue& t) {
    std::vector<std::int64_t> out;
    if (t.kind != PKind::kTuple || t.items.size() > limits_.max_rank) bad("a size or stride that is not a tuple of at most max_rank ints");
    for (const auto& x : t.items) {
      if (x->kind != PKind::kInt) bad("a size or stride that is not an int");
      out.push_back(x->integer);
    }
    return out;
  };
  if (args.items[1]->kind != PKind::kInt) bad("a storage offset that is not an int");
  const Shape shape = ints(*args.items[2]);
  const std::vector<std::int64_t> strides = ints(*args.items[3]);
  for (auto d : shape) {
    if (d < 0) bad("a negative size");
  }
  if (checked_nbytes(*dtype, shape) > limits_.max_tensor_bytes) {
    fail(ErrorCode::kLimitExceeded, zip_.source() + ": tensor '" + name + "' is over the limit of " + std::to_string(limits_.max_tensor_bytes) + " bytes");
  }
  const std::string entry = root_ + dir + id.items[2]->text;
  Tensor t;
  if (checked_numel(shape) == 0) {
    t = Tensor::zeros(*dtype, shape);
  } else {
    const ZipEntry* e = zip_.find(entry);
    if (!e) fail(ErrorCode::kNotFound, zip_.source() + ": tensor '" + name + "' names storage '" + entry + "', which is not in the archive");
    const std::string where = zip_.source() + ": tensor '" + name + "' (entry '" + entry + "')";
    // The storage's size is declared beside its key (numel elements, as
    // torch.jit.save writes it): its entry must hold exactly that, checked
    // before a byte is inflated, and only what the tensor reaches is read.
    if (id.items[4]->kind != PKind::kInt || id.items[4]->integer < 0 ||
        static_cast<std::uint64_t>(id.items[4]->integer) > limits_.max_tensor_bytes / dtype_size(*dtype) ||
        static_cast<std::uint64_t>(id.items[4]->integer) * dtype_size(*dtype) != e->size) {
      fail(ErrorCode::kBadShape, where + ": its storage says " + (id.items[4]->kind == PKind::kInt ? std::to_string(id.items[4]->integer) : std::string("?")) +
                                     " elements of " + std::to_string(dtype_size(*dtype)) + " bytes, its entry holds " + std::to_string(e->size) + " bytes");
    }
    const std::uint64_t need = detail::storage_bytes_needed(*dtype, shape, strides, args.items[1]->integer, limits_.max_tensor_bytes, where);
    if (need > e->size) {
      fail(ErrorCode::kOutOfRange, where + " needs " + std::to_string(need) + " bytes of its storage, which holds " + std::to_string(e->size));
    }
    t = detail::tensor_from_storage(*dtype, shape, strides, args.items[1]->integer, zip_.read_prefix(*e, need), where);
  }
  const ValueId v = graph().add_constant(graph().unique_value_name(name), std::move(t));
  tensors_.emplace(&rebuild, v);
  return v;
}

Slot Reader::constant(const std::string& cname, const Where& w) {
  std::int64_t index = -1;
  try {
    index = std::stoll(cname.substr(1));
  } catch (const std::exception&) {
    unsupported(w, "CONSTANTS." + cname);
  }
  if (!constants_ || constants_->kind != PKind::kTuple || index < 0 || static_cast<std::size_t>(index) >= constants_->items.size()) {
    unsupported(w, "CONSTANTS." + cname + " is not in constants.pkl");
  }
  return from_pickle(*constants_->items[static_cast<std::size_t>(index)], "constants/", "CONSTANTS." + cname, w);
}

}  // namespace tracegraph::torchscript
