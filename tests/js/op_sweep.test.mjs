// The op sweep in wasm: the one-op programs of PyTorch's OpInfo samples
// (tests/models/make_op_sweep.py, the native preset's make_op_sweep test),
// opened by loadModel and run on the wasm XNNPACK backend against torch's own
// outputs (rtol 1e-4, NaNs where torch has them). Every sample that runs
// natively (the OpSweep test's results.json) runs here and matches; one
// refused natively is refused here too, with a typed error.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { api } from './helpers.mjs';

const { loadModel, TracegraphError } = api;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = resolve(process.env.TRACEGRAPH_OP_SWEEP_DIR ?? join(root, 'build', 'native', 'op_sweep'));
if (!existsSync(join(dir, 'results.json'))) throw new Error(`no op sweep in ${dir}: run the native preset's OpSweep test first`);
const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'));
const native = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));

// { name: { shape, data: Float64Array } } of a safetensors file of any of the dtypes the sweep writes
// (complex64 as its (real, imaginary) pairs, as the JS API gives it).
function readValues(path) {
  const b = readFileSync(path);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const views = { F32: Float32Array, F64: Float64Array, I64: BigInt64Array, I32: Int32Array, BOOL: Uint8Array, U8: Uint8Array, C64: Float32Array };
  const out = {};
  for (const [k, v] of Object.entries(header)) {
    if (k === '__metadata__') continue;
    const View = views[v.dtype];
    if (!View) throw new Error(`${path}: ${k} is ${v.dtype}`);
    const [s, e] = v.data_offsets;
    const bytes = b.subarray(8 + n + s, 8 + n + e);
    const typed = new View(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    out[k] = { shape: v.shape, dtype: v.dtype, typed, data: Float64Array.from(typed, Number) };
  }
  return out;
}
const listed = (io, kind) => {
  const out = [];
  for (let i = 0; `${kind}.${i}` in io; ++i) out.push(io[`${kind}.${i}`]);
  return out;
};

// torch.allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True); `exact` for an integer or bool output.
function close(got, want, exact) {
  if (got.length !== want.length) return `${got.length} values for ${want.length}`;
  for (let i = 0; i < want.length; ++i) {
    const g = Number(got[i]), w = want[i];
    if (exact ? g !== w : Number.isNaN(w) ? !Number.isNaN(g) : !(g === w || Math.abs(g - w) <= 1e-5 + 1e-4 * Math.abs(w))) return `value ${i}: ${g} for ${w}`;
  }
  return '';
}

test('the sweep is made', () => assert.ok(index.samples.length >= 300, `only ${index.samples.length} samples`));

test('an int64 input is taken as a BigInt64Array, an Int32Array, whole plain numbers or a Float32Array of them, exact past 2^24', async () => {
  const file = 'abs.int64.0';
  assert.equal(native[file], true, `${file} runs natively`);
  const io = readValues(join(dir, `${file}.io.safetensors`));
  const [x] = listed(io, 'input');
  const want = listed(io, 'output')[0].data;
  const g = await loadModel(join(dir, `${file}.pt2`));
  try {
    assert.deepEqual(g.inputDtypes, ['int64']);
    g.finalize({ threads: 1 });
    const numbers = Array.from(x.data);
    for (const data of [x.typed, Int32Array.from(numbers), numbers, Float32Array.from(numbers)]) {
      const [out] = g.run([{ shape: x.shape, data }]);
      assert.equal(out.dtype, 'int64', data.constructor.name);
      assert.deepEqual(Array.from(out.data, Number), Array.from(want), data.constructor.name);
    }
    const half = numbers.map((v, i) => (i === 0 ? v + 0.5 : v));
    assert.throws(() => g.run([{ shape: x.shape, data: half }]), (e) => e instanceof TracegraphError && e.code === 'invalid_argument' && /whole numbers/.test(e.message));
    // Integers past float32's 2^24 stay exact: held as int64 (abs computes on them).
    const big = BigInt64Array.from(numbers, (v, i) => (i === 0 ? -(2n ** 40n) - 3n : BigInt(v)));
    const [exact] = g.run([{ shape: x.shape, data: big }]);
    assert.equal(exact.data[0], 2n ** 40n + 3n);
    assert.deepEqual(Array.from(exact.data.slice(1), Number), Array.from(want).slice(1));
    assert.throws(() => g.run([{ shape: x.shape, data: Float32Array.from(numbers), dtype: 'float32' }]), (e) => e instanceof TracegraphError && e.code === 'dtype_mismatch');
  } finally {
    g.dispose();
  }
});

for (const { file } of index.samples) {
  test(`${file} on XNNPACK in wasm as natively`, async () => {
    const io = readValues(join(dir, `${file}.io.safetensors`));
    const g = await loadModel(join(dir, `${file}.pt2`));
    try {
      let out;
      try {
        g.finalize({ threads: 1 });
        // Each input in its own typed array (int64 ids as a BigInt64Array), as a caller holds it.
        out = g.run(listed(io, 'input').map((t) => ({ shape: t.shape, data: t.typed })));
      } catch (e) {
        assert.ok(e instanceof TracegraphError, `not a typed error: ${e}`);
        assert.equal(native[file], false, `refused in wasm, run natively: ${e.message}`);
        return;
      }
      assert.equal(native[file], true, 'runs in wasm, refused natively');
      const want = listed(io, 'output');
      assert.equal(out.length, want.length);
      out.forEach((o, i) => {
        assert.deepEqual(o.shape, want[i].shape, `output ${i} shape`);
        assert.equal(o.dtype === 'complex64', want[i].dtype === 'C64', `output ${i} is ${o.dtype}`);
        const wrong = close(o.data, want[i].data, want[i].dtype !== 'F32' && want[i].dtype !== 'C64');
        assert.equal(wrong, '', `output ${i}: ${wrong}`);
      });
    } finally {
      g.dispose();
    }
  });
}
