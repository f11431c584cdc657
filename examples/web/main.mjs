// The page's code: load the graph, print its outputs' activations, run it once.
import { loadGraph } from 'tracegraph';

const result = document.getElementById('result');

async function show(json, weights) {
  result.textContent = 'loading...';
  const g = await loadGraph(json, weights);
  try {
    const lines = g.outputNames.map((name, i) => `output ${name}: ${g.outputActivation()[i].kind}`);
    // Zeros of each input's exported shape.
    const inputs = g.inputNames.map((name) => {
      const shape = g.values.find((v) => v.name === name).shape;
      return { data: new Float32Array(shape.reduce((a, b) => a * b, 1)), shape };
    });
    g.finalize();
    const start = performance.now();
    const outputs = g.run(inputs);
    lines.push(`ran in ${(performance.now() - start).toFixed(1)} ms: ${outputs.map((o) => `[${o.shape}]`).join(', ')}`);
    result.textContent = lines.join('\n');
  } finally {
    g.dispose();
  }
}

function report(e) { result.textContent = `error: ${e.code ?? ''} ${e.message}`; }

document.getElementById('files').addEventListener('change', (event) => {
  const files = [...event.target.files];
  const json = files.find((f) => f.name.endsWith('.json'));
  const weights = files.find((f) => f.name.endsWith('.safetensors'));
  if (!json || !weights) return report(new Error('pick the .json and the .safetensors'));
  Promise.all([json.text(), weights.arrayBuffer()]).then(([j, w]) => show(j, w)).catch(report);
});

const params = new URLSearchParams(location.search);
if (params.has('json') && params.has('weights')) show(params.get('json'), params.get('weights')).catch(report);
