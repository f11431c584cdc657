// Fuzzes TreeSpec::from_json: any text must give a spec or a tracegraph::Error,
// and a spec that loads must dump and load back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tracegraph/tree_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    auto spec = tracegraph::TreeSpec::from_json({reinterpret_cast<const char*>(data), size});
    if (!(tracegraph::TreeSpec::from_json(spec.to_json()) == spec)) std::abort();
  } catch (const tracegraph::Error&) {
  }
  return 0;
}
