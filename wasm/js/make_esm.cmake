# Turns Emscripten 3.1.6's MODULARIZE output into an ES module that runs in
# browsers, workers and Node 20: its Node branch calls require() and reads
# __dirname, which an ES module lacks, so they are made from import.meta.url
# (Node only, by a top-level await); the factory becomes the default export.
# Usage: cmake -DIN=raw.js -DOUT=core.mjs -DEXPORT=factoryName -P make_esm.cmake
file(READ "${IN}" body)
set(prologue "// Generated from Emscripten's output by wasm/js/make_esm.cmake; do not edit.
const __tg_node = typeof process !== 'undefined' && !!(process.versions && process.versions.node);
const require = __tg_node ? (await import('node:module')).createRequire(import.meta.url) : undefined;
const __dirname = __tg_node ? (await import('node:path')).dirname((await import('node:url')).fileURLToPath(import.meta.url)) : '';
const __filename = __tg_node ? (await import('node:url')).fileURLToPath(import.meta.url) : '';
")
file(WRITE "${OUT}" "${prologue}${body}\nexport default ${EXPORT};\n")
