// The main job's browser step: serve the page, open a sample in headless
// Chromium, show its graph, run it in the page's worker, and report what the
// page shows (and a screenshot). Then, unless --exit, keep serving for a person.
// Usage: node web-demo/show.mjs [--sample NAME] [--port 8080] [--screenshot FILE] [--exit]
import { resolve } from 'node:path';

import { chromium } from 'playwright-core';

import { serve } from './serve.mjs';

const arg = (name, fallback) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : fallback; };
const sample = arg('--sample', 'unet3d_sigmoid_traced');
const port = Number(arg('--port', 8080));
const shot = resolve(arg('--screenshot', 'build/main-screenshot.png'));
const server = await serve({ port, quiet: true });
const url = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${url}?sample=${sample}`);
  await page.waitForFunction((n) => window.__tracegraph?.state.loaded === n, sample, { timeout: 120000 });
  console.log(`[show] ${await page.textContent('#status')}`);
  const activation = await page.$$eval('#summary-activation tr', (rows) => rows.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
  for (const a of activation) console.log(`[show] output ${a}`);
  await page.click('[data-tab=run]');
  await page.click('#run');
  await page.waitForSelector('#run-median', { timeout: 120000 });
  console.log(`[show] ran in the browser: ${await page.textContent('#status')}`);
  const err = await page.getAttribute('#run-error-0', 'data-error');
  if (err !== null) console.log(`[show] max relative error against LibTorch's forward: ${Number(err).toExponential(2)}`);
  await page.screenshot({ path: shot });
  console.log(`[show] screenshot: ${shot}`);
} finally {
  await browser.close();
}
if (process.argv.includes('--exit')) {
  server.close();
} else {
  console.log(`[show] the page is at ${url} (Ctrl-C to stop)`);
}
