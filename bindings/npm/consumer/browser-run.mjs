// Opens the esbuild bundle of browser.ts in headless Chromium (issue 30, `scripts/test-packages
// browser`) and checks what it reports: the card read and its book scanned in the browser.
//
//   node browser-run.mjs SITE_DIR EXAMPLES_DIR
//
// SITE_DIR holds index.html, the bundle and the files esbuild copied beside it; EXAMPLES_DIR is
// served at /examples/. CCV3_CHROMIUM names the browser (default Debian's /usr/bin/chromium).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [site, examples] = process.argv.slice(2).map((p) => path.resolve(p));
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };

function fail(message) {
  console.error(`browser-run: ${message}`);
  process.exitCode = 1;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const [root, rel] = url.pathname.startsWith('/examples/')
    ? [examples, url.pathname.slice('/examples/'.length)]
    : [site, url.pathname === '/' ? 'index.html' : url.pathname.slice(1)];
  const file = path.resolve(root, decodeURIComponent(rel));
  if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const browser = await chromium.launch({
  executablePath: process.env.CCV3_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('response', (r) => r.status() >= 400 && errors.push(`HTTP ${r.status()} for ${r.url()}`));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.__ccv3 !== undefined, null, { timeout: 60_000 });
  const report = await page.evaluate(() => window.__ccv3);
  console.log(`browser-run: ${JSON.stringify(report)}`);
  if (errors.length) fail(`the page raised: ${errors.join('; ')}`);
  if (report.error) fail(report.error);
  else {
    // examples/ember.png: "Ember Vale" with a 5-entry book; the lamp and the Teeth fire Old Sol's
    // entries (the same chat program.ts scans under Node).
    if (report.name !== 'Ember Vale') fail(`card name ${report.name}`);
    if (report.entries !== 5 || report.summary.entries !== 5) fail(`book entries ${report.entries}/${report.summary.entries}`);
    if (!report.activated.includes('Old Sol')) fail(`activated: ${report.activated}`);
    if (report.tokens !== 2) fail(`countTokens('hello world') = ${report.tokens}`);
  }
} finally {
  await browser.close();
  server.close();
}
