// The local static server the page's tests and tools open the site through (page.test.mjs,
// trace-open.mjs): files under one folder, nothing outside it, `/` as index.html.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

/** Content types of the files the site holds. */
const TYPES = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.json': 'application/json', '.webmanifest': 'application/manifest+json',
};

/**
 * Serves the files under `site` on a free port of 127.0.0.1 (404 for anything else).
 * @param {string} site the folder to serve
 * @returns {Promise<{server: http.Server, base: string}>} the listening server and its URL
 */
export async function serveSite(site) {
  const root = path.resolve(site);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = path.resolve(root, `.${rel}`);
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}
