// tracegraph._libtorch: the LibTorch backend (CPU and CUDA) for the Python
// package, built where the build sees a torch and against that torch alone
// (tracegraph/_libtorch_backend.py refuses another torch version by name).
//
// A graph reaches it in the exported format (the JSON document and its
// safetensors weights, from _core's Model.serialize()): this extension links
// its own copy of the core, so graphs cross as bytes, not as objects. Tensors
// cross as DLPack capsules, torch's own (torch.utils.dlpack): no copies, on
// whatever device they live. Errors are _core's tracegraph.Error classes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <ATen/DLConvertor.h>
#include <ATen/core/Tensor.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bytes.h"
#include "tracegraph/error.h"
#include "tracegraph/exported_graph.h"
#include "tracegraph/native/libtorch_backend.h"
#include "tracegraph/traced_graph.h"

namespace nb = nanobind;
namespace tg = tracegraph;
using namespace nb::literals;

namespace {

// A graph on the LibTorch backend; runs take turns (the backend's plan is the graph's own).
struct Runner {
  tg::TracedGraph graph;
  std::mutex run_mutex;
  Runner(const std::string& json, nb::bytes weights, const std::string& name)
      : graph(read(json, weights, name)) {}

  static tg::TracedGraph read(const std::string& json, nb::bytes weights, const std::string& name) {
    auto bytes = tracegraph::python::copy_bytes(weights);
    tg::ExportedGraph eg = tg::deserialize_graph(json, {bytes->data(), bytes->size()}, bytes, name, name + ".safetensors");
    return tg::TracedGraph::from_exported(std::move(eg), tg::native::make_libtorch_backend());
  }
};

at::Tensor from_capsule(nb::handle capsule, std::size_t index) {
  PyObject* p = capsule.ptr();
  if (!PyCapsule_IsValid(p, "dltensor")) {
    tg::fail(tg::ErrorCode::kInvalidArgument, "input " + std::to_string(index) + ": not an unused DLPack capsule");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(p, "dltensor"));
  PyCapsule_SetName(p, "used_dltensor");  // the at::Tensor owns it now
  return at::fromDLPack(managed);
}

nb::object to_capsule(const at::Tensor& t) {
  DLManagedTensor* managed = at::toDLPack(t);
  PyObject* capsule = PyCapsule_New(managed, "dltensor", [](PyObject* c) {
    if (PyCapsule_IsValid(c, "dltensor")) {  // never consumed: ours to free
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
  if (!capsule) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

nb::list run(Runner& r, const nb::list& capsules) {
  std::vector<at::Tensor> inputs;
  for (std::size_t i = 0; i < capsules.size(); ++i) inputs.push_back(from_capsule(capsules[i], i));
  std::vector<at::Tensor> outputs;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(r.run_mutex);
    outputs = tg::native::run(r.graph, inputs);
  }
  nb::list out;
  for (const auto& t : outputs) out.append(to_capsule(t));
  return out;
}

}  // namespace

NB_MODULE(_libtorch, m) {
  m.doc() = "tracegraph's LibTorch backend (use tracegraph.TracedGraph.set_backend('libtorch'), not this module)";
  m.attr("torch_version") = TRACEGRAPH_TORCH_VERSION;
  // _core made the exception classes: the same ones are raised here.
  // Held for the process (never released: the interpreter may be gone at exit).
  static PyObject* classes = nb::object(nb::module_::import_("tracegraph._core").attr("error_classes")).release().ptr();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tg::Error& e) {
      const std::string code(tg::error_code_name(e.code()));
      PyObject* cls = PyDict_GetItemString(classes, code.c_str());  // borrowed
      const std::string& message = e.message();
      PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "replace");
      if (!text) return;
      PyErr_SetObject(cls ? cls : PyExc_RuntimeError, text);
      Py_DECREF(text);
    }
  });

  nb::class_<Runner>(m, "Runner", "A graph on the LibTorch backend")
      .def(nb::init<const std::string&, nb::bytes, const std::string&>(), "json"_a, "weights"_a, "name"_a)
      .def("to", [](Runner& r, const std::string& where) { r.graph.to(where); })
      .def_prop_ro("device", [](const Runner& r) { return r.graph.device().str(); })
      .def("finalize", [](Runner& r) {
        nb::gil_scoped_release release;
        r.graph.finalize();
      })
      .def("is_finalized", [](const Runner& r) { return r.graph.is_finalized(); })
      .def("run", &run);
  m.def("cuda_available", &tg::native::cuda_available);
}
