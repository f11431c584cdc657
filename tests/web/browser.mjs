// The page served (web-demo/serve.mjs) and opened in headless Chromium
// (Debian's, driven by playwright-core; no browser download) for an
// end-to-end test file: registers node:test's before and after hooks, hands
// the page to `ready` once it has loaded, and returns the list that gathers
// every error the page throws or logs.
import { dirname, join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { chromium } = await import(join(root, 'web-demo', 'node_modules', 'playwright-core', 'index.mjs'));
const { serve } = await import(join(root, 'web-demo', 'serve.mjs'));

export function pageUnderTest(ready) {
  const errors = [];
  let server;
  let browser;
  before(async () => {
    server = await serve({ port: 0, quiet: true });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => window.__tracegraph?.ready);
    ready(page);
  });
  after(async () => {
    await browser?.close();
    server?.close();
  });
  return errors;
}
