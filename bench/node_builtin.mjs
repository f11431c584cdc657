// What tfjs-backend-wasm's browser bundle imports from Node's built-ins
// (fs, path, perf_hooks, os: Emscripten's Node branch, never taken in a page).
export default {};
