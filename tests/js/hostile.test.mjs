// Hostile model archives through the JavaScript loader (issue 50): each is a
// TracegraphError with a code and a short message, and one module survives
// 500 of them in a row: its heap does not grow with each failure, and a valid
// model then loads and runs right.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateRawSync } from 'node:zlib';

import { api, assertAValidModelStillRuns } from './helpers.mjs';

const { loadModel, init, TracegraphError } = api;

// ---- archives made here: a zip writer (stored and raw-deflated entries) ----

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
// Bytes of a string of code points below 256 (pickle opcodes); ASCII text by TextEncoder, fast at 50 MB.
const latin1 = (s) => (/^[\x00-\x7f]*$/.test(s) ? new TextEncoder().encode(s) : Uint8Array.from(s, (ch) => ch.charCodeAt(0) & 0xff));

// entries: [{ name, data (bytes) , deflated?: { bytes, size } }]: a zip archive.
function zip(entries) {
  const parts = [];
  const directory = [];
  let offset = 0;
  const header = (fields) => {
    const b = new Uint8Array(fields.reduce((n, [, w]) => n + w, 0));
    const v = new DataView(b.buffer);
    let at = 0;
    for (const [value, width] of fields) {
      if (width === 2) v.setUint16(at, value, true);
      else v.setUint32(at, value, true);
      at += width;
    }
    return b;
  };
  for (const e of entries) {
    const name = latin1(e.name);
    const method = e.deflated ? 8 : 0;
    const stored = e.deflated ? e.deflated.bytes : e.data;
    const size = e.deflated ? e.deflated.size : e.data.length;
    const crc = e.deflated ? e.deflated.crc : crc32(e.data);
    const local = header([[0x04034b50, 4], [20, 2], [0, 2], [method, 2], [0, 4], [crc, 4], [stored.length, 4], [size, 4], [name.length, 2], [0, 2]]);
    parts.push(local, name, stored);
    directory.push(header([[0x02014b50, 4], [20, 2], [20, 2], [0, 2], [method, 2], [0, 4], [crc, 4], [stored.length, 4], [size, 4],
      [name.length, 2], [0, 2], [0, 2], [0, 2], [0, 2], [0, 4], [offset, 4]]), name);
    offset += local.length + name.length + stored.length;
  }
  const dirSize = directory.reduce((n, b) => n + b.length, 0);
  const end = header([[0x06054b50, 4], [0, 2], [0, 2], [entries.length, 2], [entries.length, 2], [dirSize, 4], [offset, 4], [0, 2]]);
  const all = [...parts, ...directory, end];
  const out = new Uint8Array(all.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of all) { out.set(b, at); at += b.length; }
  return out;
}

// A scripted module M whose class body after its attributes is `methods`,
// as torch.jit.save writes one (data.pkl: the module object; code/__torch__.py).
const DATA_PKL = latin1('\x80\x02c__torch__\nM\n)\x81}b.');
function scripted(methods, dataPkl = DATA_PKL) {
  const code = 'class M(Module):\n  __parameters__ = []\n  __buffers__ = []\n  training : bool\n' + methods;
  return zip([{ name: 'm/data.pkl', data: dataPkl }, { name: 'm/code/__torch__.py', data: latin1(code) }]);
}
const returning = (expr) => scripted(`  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    return ${expr}\n`);

function doublingCalls(n) {
  let code = '  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    return (self).f0(x, )\n';
  for (let k = 0; k + 1 < n; ++k) {
    code += `  def f${k}(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    _0 = (self).f${k + 1}(x, )\n    return (self).f${k + 1}(_0, )\n`;
  }
  return scripted(code + `  def f${n - 1}(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    return torch.relu(x)\n`);
}

// 300 MB of 'x' in a third of a megabyte of DEFLATE: more than a pickle may be.
function deflatedPickleBomb() {
  const size = 300 << 20;
  const bytes = deflateRawSync(Buffer.alloc(size, 'x'), { level: 9 });
  return zip([{ name: 'm/data.pkl', deflated: { bytes, size, crc: 0 } }, { name: 'm/code/__torch__.py', data: latin1('class M(Module):\n') }]);
}

// name -> [bytes, the code it must end in (null: any code, or a correct read), what its message says]
function hostileCases() {
  let list = '[1';
  while (list.length < (10 << 20)) list += ', 1';
  return {
    parentheses: [returning('('.repeat(10000) + 'x' + ')'.repeat(10000)), 'limit_exceeded', /max_expression_depth/],
    indexChain: [returning('x' + '[0]'.repeat(100000)), 'limit_exceeded', /max_expression_depth/],
    attributeChain: [returning('x' + '.T'.repeat(100000)), 'limit_exceeded', /max_expression_depth/],
    doublingCalls: [doublingCalls(40), 'limit_exceeded', /max_inlined_calls/],
    nestedLoops: [scripted('  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    x0 = x\n    for _0 in range(70000):\n      x0 = torch.relu(x0)\n    return x0\n'),
      'limit_exceeded', /max_trips_per_loop/],
    pickleString: [scripted('', latin1('\x80\x02X\xff\xff\xff\xffabc.')), 'truncated', /data\.pkl/],
    pickleBomb: [deflatedPickleBomb(), 'limit_exceeded', /max_document_bytes/],
    hugeTarget: [returning('torch.' + 'f'.repeat(50 << 20) + '(x)'), 'limit_exceeded', /max_code_line_bytes/],
    longLine: [scripted(`  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    _0 = ${list}]\n    return x\n`),
      'limit_exceeded', /line 7: a line of more than max_code_line_bytes/],
    notAnArchive: [latin1('PK\x03\x04' + 'garbage'.repeat(100)), 'truncated', /ends early/],
  };
}

// Loads `bytes`; returns the TracegraphError it ends in (or null for a read).
async function failure(bytes, name) {
  try {
    (await loadModel(bytes, { name })).dispose();
    return null;
  } catch (e) {
    assert.ok(e instanceof TracegraphError, `${name}: not a TracegraphError: ${e}`);
    assert.equal(typeof e.code, 'string', name);
    return e;
  }
}

const cases = hostileCases();
if (process.env.TRACEGRAPH_HOSTILE_PROBE) {
  for (const [name, [bytes]] of Object.entries(cases)) {
    const t0 = performance.now();
    const e = await failure(bytes, name);
    console.log(name, Math.round(performance.now() - t0), 'ms', e ? `${e.code}: ${e.message.slice(0, 150)}` : 'read');
  }
  process.exit(0);
}

for (const [name, [bytes, code, pattern]] of Object.entries(cases)) {
  test(`a hostile archive (${name}) is a typed error with a short message`, async () => {
    const e = await failure(bytes, `${name}.pt`);
    if (code) {
      assert.ok(e, `${name}: read`);
      assert.equal(e.code, code, e.message);
      assert.match(e.message, pattern);
    }
    if (e) assert.ok(e.message.length < 5000, `${name}: a message of ${e.message.length} characters`);
  });
}

test('one module survives 500 failed loads: its heap stays bounded and a valid model then runs right', async () => {
  const m = await init();
  const heap = () => m.HEAPU8.length;
  // The large cases a few times each, the small ones for the rest.
  const large = new Set(['hugeTarget', 'longLine', 'pickleBomb', 'doublingCalls']);
  const order = [];
  for (const name of Object.keys(cases)) if (large.has(name)) order.push(name, name);
  const small = Object.keys(cases).filter((n) => !large.has(n));
  while (order.length < 500) order.push(small[order.length % small.length]);
  let failures = 0;
  let afterFirstRound = 0;
  for (const [i, name] of order.entries()) {
    if (await failure(cases[name][0], `${name}.pt`)) ++failures;
    if (i === Object.keys(cases).length * 2) afterFirstRound = heap();
  }
  assert.equal(failures, 500, `${failures} of 500 loads failed`);
  console.log(`500 loads, ${failures} failed: wasm heap ${afterFirstRound >> 20} MiB after the first ${Object.keys(cases).length * 2 + 1}, ${heap() >> 20} MiB after all`);
  // Freed memory is reused: 500 failures leave the heap where the first ones took it.
  assert.ok(heap() <= afterFirstRound + (64 << 20), `the heap grew from ${afterFirstRound} to ${heap()} bytes`);
  await assertAValidModelStillRuns();
});
