// tracegraph in JavaScript: read a model (a torch.export .pt2 archive, or an
// exported graph: JSON + safetensors weights), look at it, optimize it, and
// run it with XNNPACK in WebAssembly.
// Mirrors the C++ TracedGraph (sdk/include/tracegraph/traced_graph.h):
//
//   import { loadModel } from './tracegraph.mjs';
//   const g = await loadModel('unet.pt2');   // or 'unet.json' (its weights beside it), a File, bytes
//   g.outputActivation();            // [{ kind: 'sigmoid', node: ..., op: ... }]
//   g.geometry()[0].axes[0];         // { valid: '44 + 8k', offset: '20', stride: '1', outputSize(n), ... }
//   g.moduleTree().groups;           // the module hierarchy: node counts, parameters, FLOPs, repeats
//   g.optimize();                    // the default pipeline's report
//   g.finalize({ threads: 1 });
//   const [y] = g.run([{ data: x, shape: [1, 1, 44, 44, 44] }]);
//   g.dispose();                     // frees the wasm memory it holds
//
// Errors are TracegraphError (an Error) with the core's code ("schema",
// "shape_mismatch", ...) and message.
export class TracegraphError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'TracegraphError';
    this.code = code;
  }
}

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);

// A stream's bytes, read chunk by chunk with onProgress(loaded, total) after
// each (total: undefined when not known), into one buffer.
async function readStream(stream, total, onProgress) {
  const reader = stream.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    onProgress?.(loaded, total);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.byteLength; }
  return out;
}

async function readBytes(source, what, onProgress) {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  if (typeof Blob !== 'undefined' && source instanceof Blob) {  // a File from a picker or a drop
    if (!onProgress || !source.stream) return new Uint8Array(await source.arrayBuffer());
    return readStream(source.stream(), source.size, onProgress);
  }
  if (typeof source === 'string' || source instanceof URL) {
    const url = source instanceof URL ? source : new URL(source, isNode ? `file://${process.cwd()}/` : globalThis.location?.href);
    if (url.protocol === 'file:') {
      const { readFile } = await import('node:fs/promises');
      try {
        const b = await readFile(url);
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      } catch (e) {
        throw new TracegraphError('io', `${what}: cannot read ${url.pathname}: ${e.message}`);
      }
    }
    const response = await fetch(url);
    if (!response.ok) throw new TracegraphError('io', `${what}: ${url} answered ${response.status}`);
    if (!onProgress || !response.body) return new Uint8Array(await response.arrayBuffer());
    const length = Number(response.headers.get('content-length'));
    return readStream(response.body, Number.isFinite(length) && length > 0 ? length : undefined, onProgress);
  }
  throw new TracegraphError('invalid_argument', `${what}: expected a URL, a path, an ArrayBuffer or a typed array`);
}

// finalize()'s convAlgorithm values, in xnnpack::ConvAlgorithm's order.
const CONV_ALGORITHMS = ['fastest', 'direct', 'winograd', 'winograd4'];

const cores = new Map();  // 'single' | 'threads' -> Promise of the Emscripten module

// Whether the threaded build can run here: Node, or a cross-origin isolated
// page or worker (SharedArrayBuffer needs COOP/COEP headers).
export function threadsAvailable() {
  return isNode || (typeof SharedArrayBuffer !== 'undefined' && globalThis.crossOriginIsolated === true);
}

// Loads a wasm module once per build: the single-threaded one, or with
// `threads: true` the threaded one (the tracegraph_threads_* files).
// `wasmBinary` (bytes) or `wasmUrl` override where the .wasm comes from.
export function init(options = {}) {
  const variant = options.threads ? 'threads' : 'single';
  if (!cores.has(variant)) {
    const promise = (async () => {
      if (variant === 'threads' && !threadsAvailable())
        throw new TracegraphError('unsupported', 'the threaded build needs SharedArrayBuffer: serve the page cross-origin isolated (COOP/COEP headers)');
      const file = variant === 'threads' ? './tracegraph_threads_raw.wasm' : './tracegraph.wasm';
      const wasmBinary = options.wasmBinary
        ? await readBytes(options.wasmBinary, 'wasm')
        : await readBytes(options.wasmUrl ?? new URL(file, import.meta.url), file);
      const settings = { wasmBinary, print: () => {}, printErr: (s) => console.error(s) };
      if (variant === 'single') return (await import('./tracegraph_core.mjs')).default(settings);
      // The pool's workers load the classic script and find their own file beside it.
      const here = (name) => {
        const url = new URL(name, import.meta.url);
        return isNode ? decodeURIComponent(url.pathname) : url.href;
      };
      settings.mainScriptUrlOrBlob = here('./tracegraph_threads_raw.js');
      settings.locateFile = (path) => here(`./${path}`);
      const m = await (await import('./tracegraph_threads_core.mjs')).default(settings);
      unrefWorkers(m);
      return m;
    })();
    promise.catch(() => cores.delete(variant));
    cores.set(variant, promise);
  }
  return cores.get(variant);
}

// Node keeps a process alive while a worker is referenced; the pool's workers
// wait for work forever, so they must not hold the process (after finalize
// too: a larger pool adds workers).
function unrefWorkers(m) {
  if (!isNode || !m.PThread) return;
  for (const w of [...m.PThread.unusedWorkers, ...m.PThread.runningWorkers]) w.unref?.();
}

class Core {
  constructor(m) { this.m = m; }
  // The heap views: with threads, memory growth can happen where the views
  // are not renewed; they are made again from the memory when stale.
  view(name, Type) {
    const memory = this.m.wasmMemory;
    if (memory && this.m[name].buffer !== memory.buffer) this.m[name] = new Type(memory.buffer);
    return this.m[name];
  }
  get u8() { return this.view('HEAPU8', Uint8Array); }
  get i32() { return this.view('HEAP32', Int32Array); }
  get u32() { return this.view('HEAPU32', Uint32Array); }
  get f32() { return this.view('HEAPF32', Float32Array); }
  check(result) {
    if (result === 0 || result === -1) {
      const code = this.m.UTF8ToString(this.m._tg_error_code_name() >>> 0);
      const message = this.m.UTF8ToString(this.m._tg_error_message() >>> 0);
      if (this.m._tg_error_code() !== 0) throw new TracegraphError(code, message);
    }
    return result;
  }
  // A C string the core malloc'd, read and freed. Wasm returns pointers as
  // signed 32-bit numbers: one past 2 GiB is negative until made unsigned
  // (>>> 0), as every pointer and heap index here is.
  take(ptr) {
    this.check(ptr);
    try { return this.m.UTF8ToString(ptr >>> 0); } finally { this.m._tg_free(ptr); }
  }
  // Wasm memory for `bytes` bytes (free with m._tg_free), or an
  // out_of_memory error naming `what`; never a null pointer written through.
  alloc(bytes, what) {
    const p = bytes <= 0xffffffff ? this.m._tg_alloc(bytes) >>> 0 : 0;
    if (!p) throw new TracegraphError('out_of_memory', `${what}: cannot allocate ${bytes} bytes in wasm memory`);
    return p;
  }
  copyIn(bytes, what) {
    const p = this.alloc(bytes.byteLength, what);
    this.u8.set(bytes, p);
    return p;
  }
  cString(s) {
    const n = this.m.lengthBytesUTF8(s) + 1;
    const p = this.alloc(n, 'a string');
    this.m.stringToUTF8(s, p, n);
    return p;
  }
}

// Reads an exported graph: `json` and `weights` are URLs, paths (Node), or
// bytes (ArrayBuffer / typed array); `json` may also be the document's text.
// `threads: true` puts it on the threaded build (then finalize({ threads: N })).
export async function loadGraph(json, weights, options = {}) {
  const core = new Core(await init(options));
  let jsonBytes;
  if (typeof json === 'string' && json.trimStart().startsWith('{')) jsonBytes = new TextEncoder().encode(json);
  else jsonBytes = await readBytes(json, 'graph JSON');
  const weightBytes = await readBytes(weights, 'weights');
  const jsonName = options.jsonName ?? (typeof json === 'string' && !json.trimStart().startsWith('{') ? json : 'graph.json');
  const weightsName = options.weightsName ?? (typeof weights === 'string' ? weights : 'weights.safetensors');
  const m = core.m;
  let jp = 0, wp = 0, jn = 0, wn = 0;
  let handle;
  try {
    jp = core.copyIn(jsonBytes, String(jsonName));
    wp = core.copyIn(weightBytes, String(weightsName));
    jn = core.cString(String(jsonName));
    wn = core.cString(String(weightsName));
    const weightsPtr = wp;
    wp = 0;  // _tg_load owns the weights from here on, also when it fails
    handle = m._tg_load(jp, jsonBytes.byteLength, weightsPtr, weightBytes.byteLength, jn, wn);
  } finally {
    for (const p of [jp, wp, jn, wn]) if (p) m._tg_free(p);
  }
  core.check(handle);
  return new TracedGraph(core, handle);
}

function sourceName(source, fallback) {
  if (typeof source === 'string') return source;
  if (source instanceof URL) return source.href;
  if (typeof Blob !== 'undefined' && source instanceof Blob && source.name) return source.name;
  return fallback;
}

// What a file's first bytes say it is: 'zip' (a .pt2, or a TorchScript
// archive), 'json' (an exported graph's document), or null.
function sniff(bytes) {
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 3 && bytes[3] === 4) return 'zip';
  for (let i = 0; i < Math.min(bytes.length, 64); ++i) {
    const c = bytes[i];
    if (c === 0x7b) return 'json';  // '{'
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0xef && c !== 0xbb && c !== 0xbf) return null;
  }
  return null;
}

// Reads any model file tracegraph opens, told by its content, not its name:
// a torch.export archive (.pt2), a TorchScript archive (.ts/.pt from
// torch.jit.save: traced modules, and scripted ones whose branches are known
// while reading; a loop or a branch on the input is refused naming the code's
// line), or an exported graph's JSON
// document with its safetensors weights (`options.weights`; for a URL or path
// without it, the file the document names, beside it). `source` is a URL, a
// path (Node), a File or Blob, or bytes. `options.onProgress(loaded, total)`
// follows the reading of a large file; `threads` as loadGraph's.
export async function loadModel(source, options = {}) {
  const name = options.name ?? sourceName(source, 'model');
  const bytes = await readBytes(source, name, options.onProgress);
  const kind = sniff(bytes);
  if (kind === 'json') {
    let weights = options.weights;
    if (weights === undefined) {
      if (typeof source !== 'string' && !(source instanceof URL)) {
        throw new TracegraphError('invalid_argument', `${name}: an exported graph's document needs its weights (options.weights)`);
      }
      let doc;
      try { doc = JSON.parse(new TextDecoder().decode(bytes)); } catch (e) {
        throw new TracegraphError('parse', `${name}: ${e.message}`);
      }
      if (typeof doc.weights !== 'string' || !doc.weights || /[\\/]/.test(doc.weights)) {
        throw new TracegraphError('schema', `${name} at /weights: expected a plain file name beside the document`);
      }
      const base = source instanceof URL ? source : new URL(source, isNode ? `file://${process.cwd()}/` : globalThis.location?.href);
      weights = new URL(doc.weights, base);
    }
    return loadGraph(bytes, weights, { ...options, jsonName: name, weightsName: options.weightsName ?? sourceName(weights, 'weights.safetensors') });
  }
  if (kind !== 'zip') throw new TracegraphError('parse', `${name}: neither a .pt2 archive nor an exported graph's JSON document`);
  const shapes = options.inputShapes ?? [];
  if (!Array.isArray(shapes) || !shapes.every((s) => Array.isArray(s) && s.every((d) => Number.isInteger(d) && d >= 0)))
    throw new TracegraphError('bad_shape', `${name}: inputShapes: expected an array of shapes (arrays of non-negative integers)`);
  const core = new Core(await init(options));
  const m = core.m;
  let p = 0, n = 0, rp = 0, dp = 0;
  let handle;
  try {
    const dims = shapes.flat();
    rp = core.alloc(4 * Math.max(shapes.length, 1), 'loadModel');
    dp = core.alloc(4 * Math.max(dims.length, 1), 'loadModel');
    shapes.forEach((s, i) => { core.i32[(rp >>> 2) + i] = s.length; });
    dims.forEach((d, i) => { core.i32[(dp >>> 2) + i] = d; });
    p = core.copyIn(bytes, name);
    n = core.cString(String(name));
    const owned = p;
    p = 0;  // _tg_load_archive owns the bytes from here on, also when it fails
    handle = m._tg_load_archive(owned, bytes.byteLength, n, shapes.length, rp, dp);
  } finally {
    for (const q of [p, n, rp, dp]) if (q) m._tg_free(q);
  }
  try {
    core.check(handle);
  } catch (e) {
    if (e instanceof TracegraphError && e.code === 'unsupported' && /\.py line \d+/.test(e.message)) {
      e.message += '. Open its .pt2 (torch.export.save), or run `tracegraph export` on it (LibTorch reads any TorchScript)';
    }
    throw e;
  }
  return new TracedGraph(core, handle);
}

function product(shape) { return shape.reduce((a, b) => a * b, 1); }

// The dtypes a tensor may come in, in the order of C++'s DType (their codes
// for tg_run), and the typed array of each.
// complex64 comes as a Float32Array of (real, imaginary) pairs, twice the elements.
const DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool', 'complex64'];
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array, int16: Int16Array, int8: Int8Array,
  uint8: Uint8Array, bool: Uint8Array, complex64: Float32Array,
};

// The dtype a typed array holds (a Uint8Array is bool where the tensor or the graph says so), or null for a plain array.
function dtypeOfArray(data, said, want) {
  if (data instanceof Float32Array && (said === 'complex64' || (said === undefined && want === 'complex64'))) return 'complex64';
  if (data instanceof Uint8Array) return said === 'bool' || (said === undefined && want === 'bool') ? 'bool' : 'uint8';
  for (const [name, type] of Object.entries(ARRAYS)) if (name !== 'bool' && name !== 'complex64' && data instanceof type) return name;
  return null;
}

// { data, shape, dtype } of a tensor given as { data, shape, dtype? }: a
// typed array of `want` (the graph input's dtype) as it is; plain numbers, or
// a typed array of another dtype, made into `want`'s (integers must be whole,
// bool is nonzero). A dtype the tensor names is kept (run() checks it).
function asTensor(t, what, want = 'float32') {
  if (!t || !Array.isArray(t.shape)) throw new TracegraphError('invalid_argument', `${what}: expected { data: Float32Array, shape: number[] }`);
  if (!t.shape.every((d) => Number.isInteger(d) && d >= 0)) throw new TracegraphError('bad_shape', `${what}: shape [${t.shape}] has a dim that is not a non-negative integer`);
  if (t.dtype !== undefined && !(t.dtype in ARRAYS)) throw new TracegraphError('dtype_mismatch', `${what}: dtype '${t.dtype}' (one of ${Object.keys(ARRAYS).join(', ')})`);
  const raw = t.data ?? [];
  let dtype = ArrayBuffer.isView(raw) ? dtypeOfArray(raw, t.dtype, want) : null;
  // A typed array of another dtype than the graph's, where the tensor names none: converted as plain numbers are.
  if (dtype !== null && dtype !== want && t.dtype === undefined && want in ARRAYS) dtype = null;
  let data = raw;
  if (dtype === null) {
    dtype = t.dtype ?? want ?? 'float32';
    if (!(dtype in ARRAYS)) throw new TracegraphError('dtype_mismatch', `${what}: the graph takes ${dtype}, which a plain array cannot give`);
    const values = Array.from(raw, Number);
    if (dtype !== 'float32' && dtype !== 'float64' && dtype !== 'complex64' && !values.every(Number.isInteger))
      throw new TracegraphError('invalid_argument', `${what}: ${dtype} values must be whole numbers`);
    data = dtype === 'int64' ? BigInt64Array.from(values, (v) => BigInt(v)) : dtype === 'bool' ? Uint8Array.from(values, (v) => (v ? 1 : 0)) : ARRAYS[dtype].from(values);
  } else if (t.dtype !== undefined && t.dtype !== dtype) {
    throw new TracegraphError('dtype_mismatch', `${what}: dtype '${t.dtype}' given with a ${raw.constructor.name}`);
  }
  const elements = product(t.shape) * (dtype === 'complex64' ? 2 : 1);  // complex64: (real, imaginary) pairs
  if (data.length !== elements) throw new TracegraphError('shape_mismatch', `${what}: shape [${t.shape}] holds ${elements} ${dtype === 'complex64' ? 'floats (real, imaginary pairs)' : 'elements'}, given ${data.length}`);
  return { data, shape: t.shape, dtype };
}

// Flattening and rebuilding structures by a PyTorch tree spec (protocol 1 JSON).
function flattenBySpec(value, spec, path, out) {
  if (spec.type === null) { out.push(value); return; }
  const children = spec.children_spec;
  switch (spec.type) {
    case 'builtins.NoneType':
      if (value !== null && value !== undefined) throw new TracegraphError('tree_spec_mismatch', `${path}: expected null`);
      return;
    case 'builtins.tuple':
    case 'builtins.list':
      if (!Array.isArray(value) || value.length !== children.length)
        throw new TracegraphError('tree_spec_mismatch', `${path || '(root)'}: expected an array of ${children.length}`);
      children.forEach((c, i) => flattenBySpec(value[i], c, `${path}[${i}]`, out));
      return;
    case 'builtins.dict':
    case 'collections.OrderedDict': {
      const keys = JSON.parse(spec.context);
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw new TracegraphError('tree_spec_mismatch', `${path || '(root)'}: expected an object with keys ${keys.join(', ')}`);
      keys.forEach((k, i) => {
        if (!(k in value)) throw new TracegraphError('tree_spec_mismatch', `${path}['${k}']: missing`);
        flattenBySpec(value[k], children[i], `${path}['${k}']`, out);
      });
      const extra = Object.keys(value).filter((k) => !keys.includes(k));
      if (extra.length) throw new TracegraphError('tree_spec_mismatch', `${path || '(root)'}: unexpected key '${extra[0]}'`);
      return;
    }
    default:
      throw new TracegraphError('unsupported', `tree spec type ${spec.type} is not supported in JavaScript`);
  }
}

function unflattenBySpec(spec, leaves) {
  if (spec.type === null) return leaves.shift();
  const children = spec.children_spec;
  switch (spec.type) {
    case 'builtins.NoneType': return null;
    case 'builtins.tuple':
    case 'builtins.list': return children.map((c) => unflattenBySpec(c, leaves));
    case 'builtins.dict':
    case 'collections.OrderedDict': {
      const keys = JSON.parse(spec.context);
      const out = {};
      keys.forEach((k, i) => { out[k] = unflattenBySpec(children[i], leaves); });
      return out;
    }
    default: throw new TracegraphError('unsupported', `tree spec type ${spec.type} is not supported in JavaScript`);
  }
}

export class TracedGraph {
  constructor(core, handle) {
    this._core = core;
    this._handle = handle;
    this._described = null;
    this._version = 0;  // counts the changes to the graph: geometry()'s answers are for one version
  }

  _live() {
    if (!this._handle) throw new TracegraphError('invalid_argument', 'this graph was disposed');
    return this._handle;
  }

  _describe() {
    if (!this._described) this._described = JSON.parse(this._core.take(this._core.m._tg_describe(this._live())));
    return this._described;
  }

  // The exported format's document of the graph as it is now (no weights).
  get document() { return this._describe().graph; }

  // Values by file id: { id, name, dtype?, shape?, constant? }.
  get values() { return this.document.graph.values; }

  // Nodes in order: { id, name, op, canonical, inputs: [value names], outputs: [value names], attributes,
  // module, modulePath, flops }; `canonical` is the op's meaning across spellings ("conv", "clip", ...), or null;
  // `module` the path of the innermost module whose forward made the node ("encoder.blocks.0.attn"), null
  // for the root's own nodes or where the file says none; `modulePath` its frames from the outermost,
  // [{ path, type }] (the document's modules table, each module's parent before it); `flops` the core's
  // node_flops at the graph's shapes (what moduleTree() sums), null where it counts none.
  get nodes() {
    const values = this.values;
    const canonical = this._describe().canonical;
    const flops = this._describe().flops;
    const modules = this.document.graph.modules ?? [];
    const paths = [];
    modules.forEach((m, i) => {
      const frame = { path: m.path, type: m.type };
      paths[i] = m.parent === null || m.parent === undefined ? [frame] : [...paths[m.parent], frame];
    });
    return this.document.graph.nodes.map((n, i) => ({
      id: n.id,
      name: n.name,
      op: n.op,
      canonical: canonical[i],
      inputs: n.inputs.map((i) => values[i].name),
      outputs: n.outputs.map((i) => values[i].name),
      attributes: Object.fromEntries(Object.entries(n.attributes).map(([k, a]) => [k, a.value])),
      module: n.module === undefined ? null : modules[n.module].path,
      modulePath: n.module === undefined ? [] : paths[n.module].map((f) => ({ ...f })),
      flops: flops[i],
    }));
  }

  get inputNames() { const v = this.values; return this.document.graph.inputs.map((i) => v[i].name); }
  // Each input's dtype ('float32' where the file gives none): what run() takes.
  get inputDtypes() { const v = this.values; return this.document.graph.inputs.map((i) => v[i].dtype ?? 'float32'); }
  get outputNames() { const v = this.values; return this.document.graph.outputs.map((i) => v[i].name); }
  // PyTorch tree specs (protocol 1 JSON, parsed), or null.
  get inSpec() { return this.document.in_spec; }
  get outSpec() { return this.document.out_spec; }

  // [{ kind, node, op, ... }] per output: what the model ends in.
  outputActivation() { return this._describe().activation; }
  // { nodes: [{ op, inputs, outputs, min?, max? }], output, outputs }
  moduleGraph() { return this._describe().module_graph; }
  // The network's geometry (the core's network_geometry), per graph output and
  // spatial input (N, C, [D,] H, W): [{ output, input, axes }], one axis per
  // spatial dim, each
  //   { dim, known: true, valid, lattice, smallest, offset, stride, contextBefore, nonlocal,
  //     outputSize(n), contextAfter(n), accepts(n) }
  // or { dim, known: false, unknown: { node, op, reason } } where the analysis
  // lost the axis (it never guesses). `valid` describes the accepted input
  // sizes ("44 + 8k", "16k, k >= 1", "44 or 45", "none"); `lattice` is
  // { first, step } when they are exactly first + step * k (else null);
  // `smallest` the smallest accepted size (null: none). Output voxel i's
  // centre lies at input coordinate offset + stride * i: `offset`, `stride`
  // and the contexts are exact fractions as strings ("8", "-1/4"); `reach`
  // likewise (an output voxel depends on the input voxels within it of its
  // centre: the receptive field's radius), and `halo` the input voxels a
  // block reads beyond its context per side for outputs equal to the whole
  // run's (0 for a valid network; the core's AxisGeometry::halo()).
  // `outputSize(n)` is the output size for input size n, null where n is
  // refused; `contextAfter(n)` the input voxels after the output's last, null
  // likewise. Those ask the core, for this graph as it was when geometry()
  // was called: after optimize(), setInputShapes() or finalize() they are
  // 'invalid_argument' (call geometry() again).
  geometry() {
    const core = this._core;
    const handle = this._live();
    const version = this._version;
    const list = JSON.parse(core.take(core.m._tg_geometry(handle)));
    const at = (o, a, n, what) => {
      if (!Number.isSafeInteger(n) || n < 0)
        throw new TracegraphError('invalid_argument', `geometry: ${what}(n): n is a non-negative integer, not ${n}`);
      if (this._version !== version)
        throw new TracegraphError('invalid_argument', `geometry: the graph changed since geometry() was called; call it again`);
      return JSON.parse(core.take(core.m._tg_geometry_at(this._live(), o, a, n)));
    };
    return list.map((o, oi) => ({
      output: o.output,
      input: o.input,
      axes: o.axes.map((a, ai) => {
        if (a.unknown) return { dim: a.dim, known: false, unknown: { ...a.unknown } };
        return {
          dim: a.dim,
          known: true,
          valid: a.valid,
          lattice: a.lattice ? { first: a.lattice.first, step: a.lattice.step } : null,
          smallest: a.smallest ?? null,
          offset: a.offset,
          stride: a.stride,
          contextBefore: a.context ? a.context[0] : null,
          reach: a.reach,
          edgeEffects: a.edge_effects,
          halo: a.halo,
          nonlocal: a.nonlocal ?? [],
          outputSize: (n) => at(oi, ai, n, 'outputSize')?.output_size ?? null,
          contextAfter: (n) => at(oi, ai, n, 'contextAfter')?.context_after ?? null,
          accepts: (n) => at(oi, ai, n, 'accepts') !== null,
        };
      }),
    }));
  }

  // The module tree (the core's module_tree): the nodes grouped by the module
  // whose forward made them, { groups }, groups[0] the root (the whole graph,
  // path ''). Each group: { index, path, type, parent, children, nodes,
  // nodeCount, parameters, flops, signature, repeatOf, repeats }: `parent`
  // and `children` are indexes into groups (parent null for the root),
  // `nodes` the names of the nodes whose innermost module it is, `nodeCount`,
  // `parameters` (elements of the constants read) and `flops` count it and
  // every group below; `signature` (16 hex digits) hashes its computation;
  // `repeatOf` is the first earlier sibling it repeats (null: none), and
  // `repeats` on a group that repeats none how many siblings share its
  // signature, itself included.
  moduleTree() {
    const doc = JSON.parse(this._core.take(this._core.m._tg_module_tree(this._live())));
    return {
      groups: doc.groups.map((g, index) => ({
        index,
        path: g.path,
        type: g.type,
        parent: g.parent,
        children: g.children,
        nodes: g.nodes,
        nodeCount: g.node_count,
        parameters: g.parameters,
        flops: g.flops,
        signature: g.signature,
        repeatOf: g.repeat_of,
        repeats: g.repeats,
      })),
    };
  }

  // { name: { count, min, max, mean } } for every float32 weight.
  weightStats() { return JSON.parse(this._core.take(this._core.m._tg_weight_stats(this._live()))); }

  // Runs the optimizer, as C++'s TracedGraph::optimize does, and returns its
  // report ({ sweeps, converged, budget_exhausted, nodes_before, nodes_after,
  // values_before, values_after, total_rewrites, transforms: [{ name, runs,
  // rewrites, milliseconds }] }). Options, each as in C++:
  //   transforms: names to run instead of the defaults (in this order);
  //   enabled / disabled: default transforms to keep only / leave out;
  //   maxIterations: the sweep cap (0: no sweep; absent: the default cap);
  //   rewriteBudget: stop after this many rewrites; verifyEach: verify the
  //   graph after every transform (default true).
  // An unknown transform name is 'not_found'; a misused option 'invalid_argument'.
  optimize(options = {}) {
    const core = this._core;
    const known = ['transforms', 'enabled', 'disabled', 'maxIterations', 'rewriteBudget', 'verifyEach'];
    const bad = (what) => { throw new TracegraphError('invalid_argument', `optimize: ${what}`); };
    if (options === null || typeof options !== 'object' || Array.isArray(options)) bad('expected an options object');
    for (const k of Object.keys(options)) if (!known.includes(k)) bad(`unknown option '${k}' (options: ${known.join(', ')})`);
    const names = (k) => {
      const v = options[k];
      if (v !== undefined && v !== null && !(Array.isArray(v) && v.every((n) => typeof n === 'string'))) bad(`${k} must be a list of names`);
      return v ?? null;
    };
    const count = (k) => {
      const v = options[k];
      if (v !== undefined && v !== null && !(Number.isSafeInteger(v) && v >= 0)) bad(`${k} must be a non-negative integer, given ${v}`);
      return v ?? null;
    };
    if (options.verifyEach !== undefined && typeof options.verifyEach !== 'boolean') bad('verifyEach must be a boolean');
    const request = {
      transforms: names('transforms'), enabled: names('enabled') ?? [], disabled: names('disabled') ?? [],
      maxIterations: count('maxIterations'), rewriteBudget: count('rewriteBudget'), verifyEach: options.verifyEach ?? true,
    };
    const text = core.cString(JSON.stringify(request));
    try {
      ++this._version;
      const report = JSON.parse(core.take(core.m._tg_optimize(this._live(), text)));
      this._described = null;
      return report;
    } finally {
      core.m._tg_free(text);
    }
  }

  // Gives the inputs other shapes (an array of shapes, in input order) and
  // forgets the shapes of the values computed from them. Before finalize().
  // Shapes an optimize() folded into constants stay folded: set the shapes
  // first, then optimize.
  setInputShapes(shapes) {
    const m = this._core.m;
    const handle = this._live();
    if (!Array.isArray(shapes) || !shapes.every((s) => Array.isArray(s) && s.every((d) => Number.isInteger(d) && d >= 0)))
      throw new TracegraphError('bad_shape', 'setInputShapes: expected an array of shapes (arrays of non-negative integers)');
    const dims = shapes.flat();
    let rp = 0, dp = 0;
    try {
      rp = this._core.alloc(4 * Math.max(shapes.length, 1), 'setInputShapes');
      dp = this._core.alloc(4 * Math.max(dims.length, 1), 'setInputShapes');
      shapes.forEach((s, i) => { this._core.i32[(rp >>> 2) + i] = s.length; });
      dims.forEach((d, i) => { this._core.i32[(dp >>> 2) + i] = d; });
      ++this._version;
      this._core.check(m._tg_set_input_shapes(handle, shapes.length, rp, dp));
    } finally {
      if (rp) m._tg_free(rp);
      if (dp) m._tg_free(dp);
    }
    this._described = null;
  }

  // Makes every node's value that the graph reads a graph output, after the
  // graph's own outputs (the core's expose_node_outputs), so that run()
  // returns each node's value too: for comparing a run with another
  // (LibTorch's, from `tracegraph run --dump-nodes`) node by node. Returns
  // [{ key, node, output, index }] in node order: `key` the node's name
  // for its first output ("NAME:K" for output K), `index` where run()'s list
  // holds it. Before finalize(); the outputs are flat after it (outSpec a
  // tuple of them all).
  keepNodeOutputs() {
    const handle = this._live();
    if (this.isFinalized()) throw new TracegraphError('invalid_argument', 'keepNodeOutputs: the graph is finalized; call it before finalize()');
    ++this._version;
    this._described = null;
    return JSON.parse(this._core.take(this._core.m._tg_expose_node_outputs(handle)));
  }

  // Lowers the graph to XNNPACK and packs its weights. Returns the threads used.
  // Once only, as in C++: later calls change nothing (read the graph again
  // for other options); optimize() and setInputShapes() come before it.
  // memoryBudget: bytes the intermediates may take (default: what wasm can
  // address); a plan over it fails with code 'out_of_memory' and the bytes needed.
  // convAlgorithm: how 3x3 stride-1 convolutions run: 'fastest' (Winograd or
  // direct, whichever measures faster on each shape), 'direct', 'winograd'
  // (F(2,3)) or 'winograd4' (F(4,3) in 2D).
  finalize({ threads = 1, profile = false, memoryBudget = 0, convAlgorithm = 'fastest' } = {}) {
    const algorithm = CONV_ALGORITHMS.indexOf(convAlgorithm);
    if (algorithm < 0)
      throw new TracegraphError('invalid_argument', `finalize: convAlgorithm '${convAlgorithm}' is none of ${CONV_ALGORITHMS.join(', ')}`);
    if (!this.isFinalized()) ++this._version;
    const n = this._core.check(this._core.m._tg_finalize(this._live(), threads, profile ? 1 : 0, memoryBudget / 1048576, algorithm));
    unrefWorkers(this._core.m);
    this._described = null;
    return n;
  }

  isFinalized() { return this._core.m._tg_is_finalized(this._live()) === 1; }

  // Where the graph runs, as C++'s to(): 'cpu' (the only device XNNPACK has
  // here). 'cuda' or 'cuda:N' is 'unsupported'; any other name 'invalid_argument'.
  to(device) {
    this._live();
    const name = String(device);
    if (name !== 'cpu' && name !== 'cuda' && !/^cuda:[0-9]{1,6}$/.test(name))
      throw new TracegraphError('invalid_argument', `device '${name}': expected 'cpu', 'cuda' or 'cuda:N'`);
    if (name !== 'cpu') throw new TracegraphError('unsupported', `xnnpack: runs on the CPU only, not on ${name}`);
    return this;
  }

  get device() { return 'cpu'; }
  // The backend that runs the graph: { name: 'xnnpack' }, as C++'s backend()->name().
  get backend() { return { name: 'xnnpack' }; }

  // inputs: an array of { data, shape } in input order, or an object by input
  // name (each input exactly once); data a Float32Array, or for an integer or
  // bool input (token ids, masks) a BigInt64Array, Int32Array or Uint8Array
  // (or plain numbers, made into the graph input's dtype). Returns the outputs as an
  // array in output order, each { data, shape, dtype }, as C++'s run() does.
  // A missing input is 'invalid_argument', a name the graph lacks 'not_found'.
  run(inputs) {
    const handle = this._live();
    const names = this.inputNames;
    const dtypes = this.inputDtypes;
    let list;
    if (Array.isArray(inputs)) {
      list = inputs.map((t, i) => asTensor(t, `input ${i}`, dtypes[i]));
    } else {
      if (inputs === null || typeof inputs !== 'object')
        throw new TracegraphError('invalid_argument', 'run: expected an array of tensors or an object of them by input name');
      for (const k of Object.keys(inputs))
        if (!names.includes(k)) throw new TracegraphError('not_found', `graph has no input %${k} (its inputs: ${names.join(', ')})`);
      list = names.map((n) => {
        if (!(n in inputs)) throw new TracegraphError('invalid_argument', `input %${n} of the graph is missing`);
        return asTensor(inputs[n], `input '${n}'`, dtypes[names.indexOf(n)]);
      });
    }
    return this._runFlat(handle, list);
  }

  // The structured call: `args` follows inSpec (when the graph has one; else
  // an array of tensors), the result follows outSpec.
  call(args) {
    const leaves = [];
    const spec = this.inSpec;
    if (spec) flattenBySpec(args, spec[1] ?? spec, '', leaves);
    else if (Array.isArray(args)) args.forEach((t, i) => leaves.push(t));
    else throw new TracegraphError('tree_spec_mismatch', 'this graph has no input tree spec: pass an array of tensors');
    const dtypes = this.inputDtypes;
    const outputs = this._runFlat(this._live(), leaves.map((t, i) => asTensor(t, `input ${i}`, dtypes[i])));
    const out = this.outSpec;
    return out ? unflattenBySpec(out[1] ?? out, outputs) : outputs;
  }

  _runFlat(handle, list) {
    const core = this._core;
    const m = core.m;
    const count = list.length;
    const ranks = list.map((t) => t.shape.length);
    const dims = list.flatMap((t) => t.shape);
    const allocated = [];
    const alloc = (bytes, what) => { const p = core.alloc(bytes, what); allocated.push(p); return p; };
    try {
      const dataPtrs = alloc(4 * Math.max(count, 1), 'run');
      const rankPtr = alloc(4 * Math.max(count, 1), 'run');
      const dimPtr = alloc(4 * Math.max(dims.length, 1), 'run');
      const dtypePtr = alloc(4 * Math.max(count, 1), 'run');
      list.forEach((t, i) => {
        const p = alloc(Math.max(t.data.byteLength, 1), `input ${i}`);
        core.u8.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), p);
        core.u32[(dataPtrs >>> 2) + i] = p;
        core.i32[(rankPtr >>> 2) + i] = ranks[i];
        core.i32[(dtypePtr >>> 2) + i] = DTYPES.indexOf(t.dtype);
      });
      dims.forEach((d, i) => { core.i32[(dimPtr >>> 2) + i] = d; });
      const result = core.check(m._tg_run(handle, count, dataPtrs, rankPtr, dimPtr, dtypePtr));
      try {
        const outputs = [];
        for (let i = 0; i < m._tg_result_count(result); ++i) {
          const shape = Array.from({ length: m._tg_result_rank(result, i) }, (_, d) => m._tg_result_dim(result, i, d));
          const dtype = m.UTF8ToString(m._tg_result_dtype(result, i) >>> 0);
          const p = m._tg_result_data(result, i) >>> 0;
          const n = product(shape);
          let data;
          const buffer = core.u8.buffer;
          if (dtype === 'float32') data = new Float32Array(buffer, p, n).slice();
          else if (dtype === 'complex64') data = new Float32Array(buffer, p, 2 * n).slice();
          else if (dtype === 'int64') data = new BigInt64Array(buffer, p, n).slice();
          else if (dtype === 'float64') data = new Float64Array(buffer, p, n).slice();
          else if (dtype === 'int32') data = new Int32Array(buffer, p, n).slice();
          else if (dtype === 'bool') data = new Uint8Array(buffer, p, n).slice();
          else throw new TracegraphError('unsupported', `output ${i} has dtype ${dtype}`);
          outputs.push({ data, shape, dtype });
        }
        return outputs;
      } finally {
        m._tg_result_free(result);
      }
    } finally {
      for (const p of allocated) m._tg_free(p);
    }
  }

  // Per-node times of the last run (finalize({ profile: true })).
  profile() { return JSON.parse(this._core.take(this._core.m._tg_profile(this._live()))); }

  // Frees the wasm memory this graph holds; using it afterwards is an error.
  dispose() {
    if (this._handle) this._core.m._tg_dispose(this._handle);
    this._handle = 0;
    this._described = null;
  }
}
