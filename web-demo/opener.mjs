// Opening models: the samples list (samples.json, which scripts/main.sh
// makes), the file picker and drag and drop (a .pt2, a TorchScript .ts, or
// an exported graph's .json with its .safetensors); bytes are read with progress and handed to
// the app, which sends them to the worker.
import { $ } from './format.mjs';
import { human } from './model_stats.mjs';

export class ModelOpener {
  constructor(app, samples) {
    this.app = app;
    this.samples = samples;
    for (const s of samples) $('samples').append(new Option(s.label, s.name));
    $('samples').addEventListener('change', (e) => { if (e.target.value) this.openSample(e.target.value); e.target.value = ''; });
    $('file').addEventListener('change', (e) => { if (e.target.files.length) this.openFiles(e.target.files); e.target.value = ''; });
    const canvas = $('canvas');
    canvas.addEventListener('dragover', (e) => { e.preventDefault(); $('drop-hint').hidden = false; });
    canvas.addEventListener('dragleave', (e) => { if (!canvas.contains(e.relatedTarget)) $('drop-hint').hidden = true; });
    canvas.addEventListener('drop', (e) => { e.preventDefault(); $('drop-hint').hidden = true; this.openFiles(e.dataTransfer.files); });
  }

  // A sample's model file is samples.json's "file" (a .pt2 or .ts, read
  // whole) or, by default, NAME.json with its NAME.safetensors.
  async openSample(name) {
    await this.guarded(async () => {
      const dir = `/models/${name}`;
      const file = this.samples.find((s) => s.name === name)?.file ?? `${name}.json`;
      const urls = file.endsWith('.json') ? [`${dir}/${file}`, `${dir}/${name}.safetensors`] : [`${dir}/${file}`];
      const responses = await Promise.all(urls.map((u) => fetch(u)));
      for (const r of responses) if (!r.ok) throw new Error(`${r.url} answered ${r.status}`);
      const [model, weights] = await this.readAll(responses.map((r) => ({ stream: r.body, size: Number(r.headers.get('content-length')) || 0 })), `Downloading ${name}`);
      await this.app.open(model, weights ?? null, file, weights ? `${name}.safetensors` : null, name);
    });
  }

  async openFiles(files) {
    await this.guarded(async () => {
      const list = [...files];
      // A reference dump (tracegraph run --dump-nodes) dropped with the model,
      // or alone onto the model shown: the numerics comparison's.
      // (With a .json, a .safetensors is the graph's weights.)
      const reference = list.some((f) => f.name.endsWith('.json')) ? null
        : list.find((f) => f.name.endsWith('.safetensors') && !f.name.endsWith('.io.safetensors'));
      const model = list.filter((f) => f !== reference);
      if (model.length) {
        const m = await this.readModel(model);
        await this.app.open(m.json, m.weights, m.jsonName, m.weightsName, null, m.testIo);
      }
      if (reference) await this.app.numerics.compare(await reference.arrayBuffer(), reference.name);
    });
  }

  // A model's files as picked or dropped, read: { json, weights, jsonName,
  // weightsName, testIo }: a model in one file (a torch.export .pt2, a
  // TorchScript .ts/.pt) in `json` (weights null), told by its content,
  // with its NAME.io.safetensors (inputs "input.N", outputs "output.N": the
  // Run panel's test input, its outputs what a run is checked against); or
  // an exported graph's .json with its .safetensors.
  async readModel(list) {
    const archive = list.find((f) => !f.name.endsWith('.json') && !f.name.endsWith('.safetensors'));
    if (archive) {
      const io = list.find((f) => f.name.endsWith('.io.safetensors'));
      const read = await this.readAll([archive, ...(io ? [io] : [])].map((f) => ({ stream: f.stream(), size: f.size })), `Reading ${archive.name}`);
      return { json: read[0], weights: null, jsonName: archive.name, weightsName: null, testIo: read[1] ?? null };
    }
    const json = list.find((f) => f.name.endsWith('.json'));
    let weights = list.find((f) => f.name.endsWith('.safetensors'));
    if (!json) throw new Error(`Open a .pt2 or .ts, or the graph's .json together with its .safetensors (got: ${list.map((f) => f.name).join(', ') || 'nothing'}).`);
    if (!weights) {
      let named = '';
      try { named = JSON.parse(await json.text()).weights; } catch { /* reported by the loader */ }
      if (named) throw new Error(`${json.name} keeps its weights in ${named}: open both files together.`);
      weights = new File([new Uint8Array(0)], 'none.safetensors');
    }
    const [jb, wb] = await this.readAll([json, weights].map((f) => ({ stream: f.stream(), size: f.size })), `Reading ${json.name}`);
    return { json: jb, weights: wb, jsonName: json.name, weightsName: weights.name, testIo: null };
  }

  async guarded(fn) {
    try {
      await fn();
    } catch (e) {
      this.app.error(e.code ? `${e.code}: ${e.message}` : String(e.message ?? e));
    } finally {
      this.app.progress(null);
    }
  }

  // Reads responses or Files with progress, summed over all of them.
  async readAll(sources, label) {
    const total = sources.reduce((a, s) => a + (s.size || 0), 0);
    let done = 0;
    const out = [];
    for (const s of sources) {
      const reader = s.stream.getReader();
      const chunks = [];
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) break;
        chunks.push(value);
        done += value.byteLength;
        this.app.progress(total ? done / total : 0.5, `${label}: ${human(done, 'B')}${total ? ` of ${human(total, 'B')}` : ''}`);
      }
      const bytes = new Uint8Array(chunks.reduce((a, c) => a + c.byteLength, 0));
      let at = 0;
      for (const c of chunks) { bytes.set(c, at); at += c.byteLength; }
      out.push(bytes.buffer);
    }
    return out;
  }
}
