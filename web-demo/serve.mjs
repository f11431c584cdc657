// A static file server for the web page (and the benchmark page), with the
// cross-origin isolation headers that wasm threads (SharedArrayBuffer) need.
// Serves, by URL prefix:
//   /          web-demo/          the page
//   /js/       build/wasm/js/     tracegraph.mjs, tracegraph.wasm
//   /models/   build/native/exported/   the exported test models (samples)
//   /vendor/   web-demo/node_modules/   elkjs and friends
//   /bench/    bench/ and build/bench/  the benchmark page and its models
// Usage: node web-demo/serve.mjs [--port 8080] [--host 127.0.0.1]
// Prints "serving http://HOST:PORT/" once listening. Importable: serve({port}).
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.safetensors': 'application/octet-stream', '.onnx': 'application/octet-stream',
  '.map': 'application/json',
};

export function mounts(env = process.env) {
  return [
    ['/js/', [resolve(env.TRACEGRAPH_JS_DIR ?? join(root, 'build', 'wasm', 'js'))]],
    ['/models/', [resolve(env.TRACEGRAPH_EXPORTED_DIR ?? join(root, 'build', 'native', 'exported'))]],
    ['/vendor/', [join(root, 'web-demo', 'node_modules'), join(root, 'bench', 'node_modules')]],
    ['/bench/', [join(root, 'bench'), resolve(env.TRACEGRAPH_BENCH_DIR ?? join(root, 'build', 'bench'))]],
    ['/', [join(root, 'web-demo')]],
  ];
}

function locate(table, pathname) {
  for (const [prefix, dirs] of table) {
    if (!pathname.startsWith(prefix)) continue;
    const rest = pathname.slice(prefix.length) || 'index.html';
    for (const dir of dirs) {
      const file = normalize(join(dir, rest));
      if (file !== dir && !file.startsWith(dir + sep)) return null;  // no escaping the folder
      if (existsSync(file) && statSync(file).isFile()) return file;
    }
    return null;
  }
  return null;
}

// `table`: [[URL prefix, [folders]]...] in place of the page's mounts.
export function serve({ port = 8080, host = '127.0.0.1', quiet = false, table = mounts() } = {}) {
  const server = createServer((req, res) => {
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'no-cache',
    };
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400, headers).end('bad request');
      return;
    }
    const file = locate(table, pathname);
    if (!file) {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' }).end(`not found: ${pathname}`);
      return;
    }
    const size = statSync(file).size;
    res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': size });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      const address = server.address();
      if (!quiet) console.log(`serving http://${host}:${address.port}/`);
      ok(server);
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  await serve({ port: Number(arg('--port', 8080)), host: arg('--host', '127.0.0.1') });
}
