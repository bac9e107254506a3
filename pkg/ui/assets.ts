// The page's static files, all served from this package (no CDN, no remote fonts: the page works
// air-gapped). The HTML and CSS are here as text; the scripts are the compiled modules of ./page and
// ./shared, read once from next to this file (dist/pkg/ui/) when the server starts.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { PAGE_CSS } from './page-css.js';

export interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flotilla</title>
<link rel="stylesheet" href="/assets/style.css">
<script type="module" src="/assets/page/app.js"></script>
</head>
<body>
<header id="top"><span class="brand">Flotilla</span><nav id="nav"></nav><span id="status" class="status">connecting…</span></header>
<main id="view"></main>
</body>
</html>
`;

function asset(body: string | Buffer, contentType: string): Asset {
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  return { body: buf, contentType, etag: `"${createHash('sha256').update(buf).digest('base64url').slice(0, 27)}"` };
}

/** Scripts in `dir` (not tests), keyed by their URL path under `prefix`. */
function scripts(dir: URL, prefix: string): Array<[string, Asset]> {
  const path = fileURLToPath(dir);
  return readdirSync(path)
    .filter((f) => f.endsWith('.js') && !f.endsWith('.test.js'))
    .map((f) => [`${prefix}${f}`, asset(readFileSync(`${path}/${f}`), 'text/javascript; charset=utf-8')]);
}

/** Every file the page loads, keyed by URL path. Throws when the compiled page is missing. */
export function loadAssets(): Map<string, Asset> {
  const page = scripts(new URL('./page/', import.meta.url), '/assets/page/');
  if (!page.some(([p]) => p === '/assets/page/app.js')) {
    throw new Error(`the page's script is missing from ${fileURLToPath(new URL('./page/', import.meta.url))}`);
  }
  return new Map<string, Asset>([
    ['/', asset(INDEX_HTML, 'text/html; charset=utf-8')],
    ['/assets/style.css', asset(PAGE_CSS, 'text/css; charset=utf-8')],
    ...page,
    ...scripts(new URL('./shared/', import.meta.url), '/assets/shared/'),
  ]);
}
