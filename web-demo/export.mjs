// What the graph view shows, as a file: an SVG of the screen's part of the
// drawing (boxes wholly off the screen left out; the page's styles for the
// graph copied in, so it looks the same alone), and a PNG of that SVG.

// The style rules that draw the graph, with the page's CSS variables
// written out (a standalone SVG has no :root to read them from).
function graphStyles() {
  const root = getComputedStyle(document.documentElement);
  const rules = [];
  for (const sheet of document.styleSheets) {
    let list;
    try { list = sheet.cssRules; } catch { continue; }  // another origin's sheet
    for (const r of list) if (r.selectorText && /\.(node|edge|frame|time|diff|past)/.test(r.selectorText)) rules.push(r.cssText);
  }
  return rules.join('\n').replace(/var\((--[\w-]+)\)/g, (_, name) => root.getPropertyValue(name).trim() || 'inherit')
    .replace(/\.node:hover[^}]*}/g, '');
}

const overlaps = (n, x, y, w, h) => n.x < x + w && n.x + n.width > x && n.y < y + h && n.y + n.height > y;

// The SVG text of `view` (a GraphView) as it is on the screen.
export function svgOfView(view) {
  const r = view.svg.getBoundingClientRect();
  const { x, y, k } = view.t;
  const box = { x: -x / k, y: -y / k, w: r.width / k, h: r.height / k };
  const clone = view.viewport.cloneNode(true);
  clone.removeAttribute('transform');
  clone.removeAttribute('id');
  for (const g of clone.querySelectorAll('[data-key]')) {
    const n = view.boxes.get(g.dataset.key);
    if (!n || !overlaps(n, box.x, box.y, box.w, box.h)) g.remove();
  }
  const f = (v) => Number(v.toFixed(2));
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${Math.round(r.width)}" height="${Math.round(r.height)}" ` +
    `viewBox="${f(box.x)} ${f(box.y)} ${f(box.w)} ${f(box.h)}" font-family="system-ui, sans-serif">` +
    `<style>${graphStyles()}</style><rect x="${f(box.x)}" y="${f(box.y)}" width="${f(box.w)}" height="${f(box.h)}" fill="#f6f7f9"/>` +
    `${new XMLSerializer().serializeToString(clone)}</svg>`;
}

// A PNG of an SVG text at `scale` times its size.
export async function pngOfSvg(svgText, scale = 2) {
  const url = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = Math.round(img.width * scale);
    c.height = Math.round(img.height * scale);
    c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
    return await new Promise((ok) => c.toBlob(ok, 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

export function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
