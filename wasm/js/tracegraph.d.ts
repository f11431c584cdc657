// TypeScript declarations of tracegraph.mjs (the JavaScript API over the
// wasm build). The names mirror the C++ TracedGraph with JavaScript casing.

/** An error from the core: `code` is its ErrorCode name ("schema", "shape_mismatch", ...). */
export class TracegraphError extends Error {
  readonly code: string;
  constructor(code: string, message: string);
}

export type Bytes = ArrayBuffer | ArrayBufferView;
/** A URL, a path (Node), or the bytes themselves. */
export type Source = string | URL | Bytes;

export interface InitOptions {
  /** Use the threaded build (Node, or a cross-origin isolated page). */
  threads?: boolean;
  /** The bytes of tracegraph.wasm, when the page already has them. */
  wasmBinary?: Source;
  /** Where tracegraph.wasm is; by default beside tracegraph.mjs. */
  wasmUrl?: string | URL;
}

export interface LoadOptions extends InitOptions {
  /** How errors name the JSON document and the weights file. */
  jsonName?: string;
  weightsName?: string;
}

/** Whether the threaded build can run here. */
export function threadsAvailable(): boolean;

/** Loads a wasm module once per build; later calls return the same promise. */
export function init(options?: InitOptions): Promise<unknown>;

export interface LoadModelOptions extends LoadOptions {
  /** The name errors give the file; default: the URL, path or File name. */
  name?: string;
  /** An exported graph's weights; default: the file its document names, beside it. */
  weights?: Source;
  /** Called as the file is read: bytes so far, and the total when known. */
  onProgress?: (loaded: number, total: number | undefined) => void;
  /** A TorchScript archive's input shapes, one per forward argument: scripted
   * code that branches on them (F.interpolate, the norms' checks, a crop) is
   * read for these shapes, and they are the graph's input shapes after.
   * Without them such an archive fails with code 'needs_input_shapes'. */
  inputShapes?: number[][];
}

/** Reads any model file, told by its content: a torch.export archive (.pt2),
 * a TorchScript archive (traced, or scripted code whose control flow the
 * input shapes decide), or an exported graph's JSON document with its
 * weights. `source` may also be a File or Blob. */
export function loadModel(source: Source | Blob, options?: LoadModelOptions): Promise<TracedGraph>;

/** Reads an exported graph; `json` may also be the document's text. */
export function loadGraph(json: Source, weights: Source, options?: LoadOptions): Promise<TracedGraph>;

export interface TensorIn {
  /** Float32Array, or for an integer or bool input (token ids, masks) its typed array
   *  (bool as 0/1 in a Uint8Array); plain numbers are made into the graph input's dtype. */
  data: Float32Array | BigInt64Array | Int32Array | Int16Array | Int8Array | Uint8Array | ArrayLike<number>;
  shape: number[];
  /** Needed only to tell a Uint8Array of bools from one of uint8, or a Float32Array of
   *  complex64 (real, imaginary) pairs from float32 values, where the graph does not. */
  dtype?: 'float32' | 'complex64' | 'int64' | 'int32' | 'int16' | 'int8' | 'uint8' | 'bool';
}

export interface TensorOut {
  // bool as 0/1 bytes; complex64 as (real, imaginary) pairs in a Float32Array of twice the elements.
  data: Float32Array | Float64Array | BigInt64Array | Int32Array | Uint8Array;
  shape: number[];
  dtype: 'float32' | 'complex64' | 'float64' | 'int64' | 'int32' | 'bool';
}

export interface ValueInfo {
  id: number;
  name: string;
  dtype?: string;
  /** Each dim is a size, or a symbol's name. */
  shape?: Array<number | string>;
  /** The weights key, for constants. */
  constant?: string;
}

export interface NodeInfo {
  id: number;
  name: string;
  /** The format's op name, e.g. "aten::_convolution". */
  op: string;
  /** What the op means across its spellings ("conv", "clip", ...), or null. */
  canonical: string | null;
  /** Value names. */
  inputs: string[];
  outputs: string[];
  attributes: Record<string, unknown>;
  /** The path of the innermost module whose forward made the node ("encoder.blocks.0.attn"); null for the
   *  root module's own nodes, or where the file names none. */
  module: string | null;
  /** That module's path from the outermost frame: [{ path: 'encoder', type: 'Encoder' }, ...]; [] when module is null. */
  modulePath: Array<{ path: string; type: string }>;
  /** Floating-point operations (a multiply-add counts two) by the core's node_flops at the graph's shapes, as
   *  moduleTree() sums them; null for the ops it does not count or where a shape is not known. */
  flops: number | null;
}

/** A PyTorch tree spec, protocol 1, as parsed JSON: [1, spec]. */
export type TreeSpec = [number, TreeSpecNode];
export interface TreeSpecNode {
  type: string | null;
  context: string | null;
  children_spec: TreeSpecNode[];
}

export interface Activation {
  kind: 'none' | 'sigmoid' | 'tanh' | 'softmax' | 'log_softmax' | 'relu' | 'clip' | 'per_channel' | 'unknown';
  node?: string;
  op?: string;
  dim?: number;
  min?: number;
  max?: number;
  /** Range-keeping ops applied after the activation, in order: ["upsample_bilinear2d"]. */
  after?: string[];
  channels?: Array<{ begin: number; end: number; kind: Activation['kind']; dim?: number; min?: number; max?: number }>;
  [key: string]: unknown;
}

export interface ModuleGraph {
  nodes: Array<{ op: string; inputs: string[]; outputs: string[]; min?: number; max?: number }>;
  output: string;
  outputs: string[];
}

/** One spatial axis of one output, relative to one input: what the core's analysis reads from the graph. */
export type AxisGeometry = KnownAxisGeometry | UnknownAxisGeometry;

export interface KnownAxisGeometry {
  /** The axis: its dim in the input and the output (2 for D of N, C, D, H, W). */
  dim: number;
  known: true;
  /** The accepted input sizes, described: "44 + 8k", "16k, k >= 1", "n >= 3", "44 or 45", "none". */
  valid: string;
  /** The accepted sizes as first + step * k (k >= 0) when they are exactly that; else null. */
  lattice: { first: number; step: number } | null;
  /** The smallest accepted input size; null when none. */
  smallest: number | null;
  /** Output voxel i's centre lies at input coordinate offset + stride * i: exact fractions ("8", "-1/4", "1/2"). */
  offset: string;
  stride: string;
  /** The input voxels cut before the output's first voxel (an exact fraction); null when no size is accepted. */
  contextBefore: string | null;
  /** The receptive field's radius: output voxel i depends on the input voxels within it of its centre ("9", "23/2"). */
  reach: string;
  /** An op on the way pads or clamps at an edge (output voxels near it differ from a run on a larger input). */
  edgeEffects: boolean;
  /** Input voxels a block reads beyond its context per side for outputs equal to the whole run's (0 for a valid network). */
  halo: number;
  /** Nodes whose values depend on the whole axis (instance norms, a spatial softmax): a blockwise output differs there. */
  nonlocal: string[];
  /** The output size for input size n; null where the network refuses n. Code 'invalid_argument' once the graph
   *  changed (optimize, setInputShapes, finalize) since geometry() was called, or for n not a non-negative integer. */
  outputSize(n: number): number | null;
  /** The input voxels after the output's last voxel for input size n (an exact fraction); null where n is refused. */
  contextAfter(n: number): string | null;
  accepts(n: number): boolean;
}

export interface UnknownAxisGeometry {
  dim: number;
  known: false;
  /** Where the analysis lost the axis: the node, its op (the format's name), and why. */
  unknown: { node: string; op: string; reason: string };
}

export interface OutputGeometry {
  /** The output value's name. */
  output: string;
  /** The input value the axes are relative to. */
  input: string;
  axes: AxisGeometry[];
}

export interface ModuleGroup {
  /** Its index in ModuleTree.groups. */
  index: number;
  /** The module's qualified path ("encoder.blocks.0"); '' for the root. */
  path: string;
  /** Its class name alone ("Block"); '' for the root. */
  type: string;
  /** Indexes into ModuleTree.groups; parent null for the root, children in the order of their first node. */
  parent: number | null;
  children: number[];
  /** The names of the nodes whose innermost module this is, in graph order. */
  nodes: string[];
  /** Nodes here and in every group below. */
  nodeCount: number;
  /** Elements of the constants the nodes here and below read, each counted once. */
  parameters: number;
  /** The FLOPs of the nodes here and below (nodes the core does not count add 0). */
  flops: number;
  /** The computation, hashed (16 hex digits): equal signatures, the same computation on the same shapes. */
  signature: string;
  /** The first earlier sibling with the same signature; null for a group that repeats none. */
  repeatOf: number | null;
  /** On a group that repeats none: how many siblings share its signature, itself included; 1 otherwise. */
  repeats: number;
}

export interface ModuleTree {
  /** groups[0] is the root: the whole graph. */
  groups: ModuleGroup[];
}

export interface OptimizeReport {
  sweeps: number;
  converged: boolean;
  budget_exhausted: boolean;
  nodes_before: number;
  nodes_after: number;
  values_before: number;
  values_after: number;
  total_rewrites: number;
  transforms: Array<{ name: string; runs: number; rewrites: number; milliseconds: number }>;
  [key: string]: unknown;
}

export interface OptimizeOptions {
  /** Transforms to run, by name, instead of the defaults. */
  transforms?: string[] | null;
  /** Only these default transforms run. */
  enabled?: string[];
  /** Default transforms left out. */
  disabled?: string[];
  /** The sweep cap: 0 runs no sweep; absent, the default cap (16). */
  maxIterations?: number | null;
  /** Stop after this many rewrites in total. */
  rewriteBudget?: number | null;
  /** verify() after every transform run (default true). */
  verifyEach?: boolean;
}

export interface WeightStats {
  count: number;
  min: number | null;
  max: number | null;
  mean: number | null;
}

export class TracedGraph {
  /** The exported format's document of the graph as it is now (no weights). */
  readonly document: { graph: { name: string; values: ValueInfo[]; nodes: unknown[]; inputs: number[]; outputs: number[] }; in_spec: TreeSpec | null; out_spec: TreeSpec | null };
  readonly values: ValueInfo[];
  readonly nodes: NodeInfo[];
  readonly inputNames: string[];
  readonly outputNames: string[];
  readonly inSpec: TreeSpec | null;
  readonly outSpec: TreeSpec | null;

  outputActivation(): Activation[];
  moduleGraph(): ModuleGraph;
  /** The network's geometry per (graph output, spatial input): valid input sizes, output sizes, offset, stride,
   *  context; [] when the graph has no spatial input (rank 3 to 5). */
  geometry(): OutputGeometry[];
  /** The module hierarchy: groups of nodes by the module that made them, with counts, parameters, FLOPs, repeats. */
  moduleTree(): ModuleTree;
  weightStats(): Record<string, WeightStats>;
  /** C++'s TracedGraph::optimize: unknown names are code 'not_found', misused options 'invalid_argument'. */
  optimize(options?: OptimizeOptions): OptimizeReport;
  /** 'cpu'; 'cuda' / 'cuda:N' are code 'unsupported' (XNNPACK runs on the CPU), other names 'invalid_argument'. */
  to(device: string): this;
  readonly device: 'cpu';
  readonly backend: { name: 'xnnpack' };
  /** Other input shapes (before finalize); the shapes computed from them are forgotten. */
  setInputShapes(shapes: number[][]): void;
  /** Makes every node's value the graph reads a graph output, after its own (before finalize()), so that
   *  run() returns each node's value: where each is, in node order. `key`: the node's name, "NAME:K" for output K. */
  keepNodeOutputs(): { key: string; node: string; output: number; index: number }[];
  /** Lowers to XNNPACK and packs the weights; returns the threads used. */
  /** memoryBudget: bytes the intermediates may take (default: what wasm can address); over it, code 'out_of_memory'. */
  finalize(options?: { threads?: number; profile?: boolean; memoryBudget?: number; convAlgorithm?: 'fastest' | 'direct' | 'winograd' | 'winograd4' }): number;
  isFinalized(): boolean;
  /** Inputs in order or by name (each exactly once: a missing one is 'invalid_argument',
   *  an unknown name 'not_found'); the outputs in order, as C++'s run(). */
  run(inputs: TensorIn[] | Record<string, TensorIn>): TensorOut[];
  /** Each input's dtype, in order ('float32' where the file gives none). */
  readonly inputDtypes: string[];
  /** The structured call: `args` follows inSpec, the result follows outSpec. */
  call(args: unknown): unknown;
  /** Per-node times of the last run, with finalize({ profile: true }), and what ran
   *  each node: XNNPACK operators, portable kernels of ours, or nothing at run time. */
  /** flops: the node's floating-point operations (convolutions, linears, matrix products; else 0), gflops: flops / time. */
  /** layoutChanges, layoutMs: layout changes made for the node's inputs and their time; columnBlocks: XNNPACK operators over
   *  blocks of the output channels of a convolution or linear whose weights outgrow the cache (0: one operator); pixelFold:
   *  neighbouring output pixels a convolution with few output channels computes as one, to fill XNNPACK's tiles (1: none);
   *  winograd: how a Winograd convolution ran, e.g. 'F(4,3), our GEMM, 4 lanes' ('' for other nodes). */
  profile(): Array<{ node: string; op: string; ms: number; engine: 'xnnpack' | 'portable' | 'winograd' | 'none'; flops: number; gflops: number; layoutChanges: number; layoutMs: number; columnBlocks: number; pixelFold: number; winograd: string }>;
  /** Frees the wasm memory this graph holds. */
  dispose(): void;
}
