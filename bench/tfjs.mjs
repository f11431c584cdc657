// tfjs-wasm (@tensorflow/tfjs-backend-wasm, SIMD) running the same network:
// the optimized exported graph (`tracegraph optimize MODEL -o DIR`: batch
// norms folded, activations fused into convolutions) interpreted with
// tfjs-core ops in tfjs's own layout (NHWC), with the same weights. The input
// is handed over in NHWC (converted once, outside the timed runs); the run
// ends with the output's data read back in torch's layout, as ours does.
// The same in Node (bench/engine.mjs reads the files) and in the browser
// (bench/page.mjs fetches them; page.html maps the packages' names).

// { name: { shape, data } } of a safetensors file's bytes (F32 and I64 only).
function readSafetensors(buffer, what) {
  const view = new DataView(buffer);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, n)));
  const out = {};
  for (const [k, v] of Object.entries(header)) {
    if (k === '__metadata__') continue;
    const [s, e] = v.data_offsets;
    const bytes = buffer.slice(8 + n + s, 8 + n + e);
    if (v.dtype === 'F32') out[k] = { shape: v.shape, data: new Float32Array(bytes) };
    else if (v.dtype === 'I64') out[k] = { shape: v.shape, data: Array.from(new BigInt64Array(bytes), Number) };
    else throw new Error(`${what}: ${k} is ${v.dtype}`);
  }
  return out;
}

const NHWC_AXIS = { 0: 0, 1: 3, 2: 1, 3: 2 };  // torch's NCHW dim -> tfjs's NHWC axis

// A run function over the graph: (NHWC input tensor) -> output in torch's layout.
function compile(tf, doc, weights) {
  const g = doc.graph;
  const values = g.values;
  const attr = (n, k) => n.attributes[k]?.value;
  const constant = (id) => weights[values[id].constant ?? values[id].name];
  // Filters and biases are made once here, in tfjs's layout; each step keeps its own.
  const steps = g.nodes.map((n) => {
    const op = n.op.replace(/^aten::/, '');
    if (op === '_convolution') {
      const w = constant(n.inputs[1]);
      const bias = n.inputs[2] !== undefined ? constant(n.inputs[2]) : null;
      const [o, i, kh, kw] = w.shape;
      if (w.shape.length !== 4) throw new Error(`${n.name}: tfjs-wasm has no Conv3D`);
      const groups = attr(n, 'groups') ?? 1;
      const transposed = attr(n, 'transposed');
      const depthwise = groups > 1 && i === 1 && o === groups;
      if (groups > 1 && !depthwise) throw new Error(`${n.name}: grouped convolution (${groups} groups) is not in tfjs`);
      const filter = tf.tidy(() => tf.transpose(tf.tensor4d(w.data, w.shape), depthwise ? [2, 3, 0, 1] : [2, 3, 1, 0]));
      const b = bias ? tf.tensor1d(bias.data) : undefined;
      const [sh, sw] = attr(n, 'stride');
      const [ph, pw] = attr(n, 'padding');
      const [dh, dw] = attr(n, 'dilation');
      const fused = attr(n, 'fused_activation');
      const max = attr(n, 'fused_max');
      const activation = fused === 'relu' ? 'relu' : fused === 'clip' && attr(n, 'fused_min') === 0 && max === 6 ? 'relu6' : fused ? null : 'linear';
      if (activation === null) throw new Error(`${n.name}: fused ${fused} is not in tfjs's fused ops`);
      const pad = [[0, 0], [ph, ph], [pw, pw], [0, 0]];
      if (transposed) {
        const out = values[n.outputs[0]].shape;
        const outShape = [out[0], out[2], out[3], out[1]];
        return (x) => {
          let y = tf.conv2dTranspose(x, filter, outShape, [sh, sw], pw === 0 && ph === 0 ? 'valid' : pad);
          if (b) y = tf.add(y, b);
          return activation === 'relu' ? tf.relu(y) : activation === 'relu6' ? tf.relu6(y) : y;
        };
      }
      if (depthwise) return (x) => tf.fused.depthwiseConv2d({ x, filter, strides: [sh, sw], pad, dilations: [dh, dw], bias: b, activation });
      return (x) => tf.fused.conv2d({ x, filter, strides: [sh, sw], pad, dilations: [dh, dw], bias: b, activation });
    }
    if (op === 'add') {  // the optimizer fuses a following ReLU (or clamp) into a residual add
      const fused = attr(n, 'fused_activation');
      if (!fused) return (a, b) => tf.add(a, b);
      if (fused === 'relu') return (a, b) => tf.relu(tf.add(a, b));
      if (fused === 'clip') return (a, b) => tf.clipByValue(tf.add(a, b), attr(n, 'fused_min') ?? -Infinity, attr(n, 'fused_max') ?? Infinity);
      throw new Error(`${n.name}: fused ${fused} after an add is not in this tfjs interpreter`);
    }
    if (op === 'relu') return (x) => tf.relu(x);
    if (op === 'max_pool2d') {
      const [k, s, p] = ['kernel_size', 'stride', 'padding'].map((a) => attr(n, a));
      return (x) => tf.maxPool(x, k, s, p[0] === 0 ? 'valid' : p[0]);
    }
    if (op === 'adaptive_avg_pool2d') {
      const size = attr(n, 'output_size');
      if (size[0] !== 1 || size[1] !== 1) throw new Error(`${n.name}: adaptive pooling to ${size}`);
      return (x) => tf.mean(x, [1, 2], true);
    }
    if (op === 'flatten') return (x) => tf.reshape(x, [x.shape[0], -1]);  // after a 1x1 pooling: the same order
    if (op === 'linear') {
      const w = constant(n.inputs[1]);
      const bias = constant(n.inputs[2]);
      const wt = tf.tidy(() => tf.transpose(tf.tensor2d(w.data, w.shape)));
      const b = tf.tensor1d(bias.data);
      return (x) => tf.add(tf.matMul(x, wt), b);
    }
    if (op === 'upsample_nearest2d') {
      const [fh, fw] = attr(n, 'scale_factors');
      return (x) => tf.image.resizeNearestNeighbor(x, [x.shape[1] * fh, x.shape[2] * fw]);
    }
    if (op === 'slice') {
      const axis = NHWC_AXIS[attr(n, 'dim')];
      const start = constant(n.inputs[1]).data[0];
      const end = constant(n.inputs[2]).data[0];
      return (x) => {
        const begin = x.shape.map(() => 0);
        const size = [...x.shape];
        begin[axis] = Math.max(0, start);
        size[axis] = Math.min(x.shape[axis], end) - begin[axis];
        return tf.slice(x, begin, size);
      };
    }
    if (op === 'cat') return (...xs) => tf.concat(xs, NHWC_AXIS[attr(n, 'dim')]);
    throw new Error(`${n.name}: ${n.op} is not in this tfjs interpreter`);
  });
  return (input) => tf.tidy(() => {
    const live = new Map([[g.inputs[0], input]]);
    g.nodes.forEach((n, i) => {
      const args = n.inputs.filter((id) => !values[id].constant).map((id) => live.get(id));
      live.set(n.outputs[0], steps[i](...args));
    });
    const y = live.get(g.outputs[0]);
    return y.rank === 4 ? tf.transpose(y, [0, 3, 1, 2]) : y;
  });
}

// A loader for bench/measure.mjs: tfjs-wasm on `threads` threads (where the
// platform has the threaded build) on the optimized export of the model: its
// graph document and its weights' bytes. `wasmPaths`: where the browser
// fetches tfjs's .wasm files (Node finds them beside the package).
export function tfjsLoader(doc, weights, input, shape, threads, wasmPaths) {
  return async () => {
    const tf = await import('@tensorflow/tfjs-core');
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    if (wasmPaths) wasm.setWasmPaths(wasmPaths);
    wasm.setThreadsCount(threads);
    await tf.setBackend('wasm');
    await tf.ready();
    const run = compile(tf, doc, readSafetensors(weights, 'the weights'));
    const x = tf.tidy(() => tf.transpose(tf.tensor4d(input, shape), [0, 2, 3, 1]));
    return () => {
      const y = run(x);
      const data = y.dataSync();
      y.dispose();
      return data;
    };
  };
}
