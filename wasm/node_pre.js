// Emscripten 3.1.6's generated loader prefers fetch() when it exists; under
// Node 20 fetch exists but cannot read a file path. Hide it from the module
// so the loader reads the .wasm with fs instead.
var fetch = undefined;
