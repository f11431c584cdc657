#include "errors.h"

#include <map>
#include <new>
#include <string>

#include "tracegraph/error.h"

namespace nb = nanobind;

namespace tracegraph::python {
namespace {

// The class for each code, made once at import (kept alive by the module).
std::map<ErrorCode, PyObject*>& classes() {
  static std::map<ErrorCode, PyObject*> by_code;
  return by_code;
}
PyObject* g_base = nullptr;

// "dangling_id" -> "DanglingIdError"
std::string class_name(std::string_view code) {
  std::string out;
  bool upper = true;
  for (char c : code) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out + "Error";
}

PyObject* builtin_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return PyExc_ValueError;
    case ErrorCode::kNotFound: return PyExc_LookupError;
    case ErrorCode::kIo: return PyExc_OSError;
    case ErrorCode::kOutOfMemory: return PyExc_MemoryError;
    case ErrorCode::kUnsupported: return PyExc_NotImplementedError;
    default: return nullptr;
  }
}

void raise(ErrorCode code, const std::string& message) {
  auto it = classes().find(code);
  PyObject* cls = it != classes().end() ? it->second : g_base;
  PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "replace");
  if (!text) return;  // the call set its own error
  PyObject* exc = PyObject_CallOneArg(cls, text);
  Py_DECREF(text);
  if (!exc) return;
  const std::string name(error_code_name(code));
  PyObject* py_name = PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
  if (py_name) {
    PyObject_SetAttrString(exc, "code", py_name);
    Py_DECREF(py_name);
  }
  PyErr_SetObject(cls, exc);
  Py_DECREF(exc);
}

}  // namespace

void register_errors(nb::module_& m) {
  g_base = PyErr_NewExceptionWithDoc("tracegraph.Error",
                                     "An error of the tracegraph core: .code is its name (\"parse\", \"not_finalized\", ...), "
                                     "the message names the file, offset, node or op.",
                                     PyExc_Exception, nullptr);
  PyObject_SetAttrString(g_base, "code", Py_None);
  m.attr("Error") = nb::handle(g_base);
  nb::dict codes;
  for (int c = static_cast<int>(ErrorCode::kInvalidArgument); c <= static_cast<int>(ErrorCode::kNeedsInputShapes); ++c) {
    const auto code = static_cast<ErrorCode>(c);
    const std::string name(error_code_name(code));
    const std::string qualified = "tracegraph." + class_name(name);
    PyObject* bases = builtin_for(code) ? PyTuple_Pack(2, g_base, builtin_for(code)) : PyTuple_Pack(1, g_base);
    PyObject* cls = PyErr_NewException(qualified.c_str(), bases, nullptr);
    Py_DECREF(bases);
    PyObject* py_name = PyUnicode_FromString(name.c_str());
    PyObject_SetAttrString(cls, "code", py_name);
    Py_DECREF(py_name);
    classes()[code] = cls;
    m.attr(class_name(name).c_str()) = nb::handle(cls);
    codes[name.c_str()] = nb::handle(cls);
  }
  m.attr("error_classes") = codes;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      raise(e.code(), e.message());
    } catch (const std::bad_alloc&) {
      raise(ErrorCode::kOutOfMemory, "out of memory: an allocation failed");
    }
  });
}

}  // namespace tracegraph::python
