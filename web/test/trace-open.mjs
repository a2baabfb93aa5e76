// Where the time of "card shown to findings drawn" goes (issue 27): opens a card on the page in
// headless Chromium (as page.test.mjs does), records a Chromium performance trace of each warm
// opening and prints the page's main-thread time between the card shown and its findings drawn
// (and the frame that paints them) by trace event (exclusive time: script, style, layout, GC,
// parsing) and, from the V8 sampling profiler in the same trace, by JavaScript function.
//
// Run from target/web-test after scripts/build-web and scripts/test-web-page set it up:
//   CCV3_SITE=$ROOT/target/web CCV3_CHROMIUM=/usr/bin/chromium node trace-open.mjs CARD [OPENINGS] [TRACE.json]
// (the last argument keeps the last opening's trace, for chrome://tracing or DevTools).
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serveSite } from './site-server.mjs';

const SITE = process.env.CCV3_SITE;
const BROWSER = process.env.CCV3_CHROMIUM || '/usr/bin/chromium';
const [card, openingsArg = '4', keep] = process.argv.slice(2);
if (!SITE || !card) {
  console.error('usage: CCV3_SITE=DIR node trace-open.mjs CARD [OPENINGS] [TRACE.json]');
  process.exit(2);
}
const OPENINGS = Number(openingsArg);

const { server, base } = await serveSite(SITE);

const CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'v8', 'v8.execute',
  'disabled-by-default-v8.gc', 'disabled-by-default-v8.cpu_profiler', 'loading', 'v8.wasm', 'disabled-by-default-v8.wasm.detailed'];

const browser = await chromium.launch({ executablePath: BROWSER, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
const page = await context.newPage();
await page.goto(`${base}/index.html`);
await page.waitForSelector('[data-testid=file-input]:not([disabled])', { state: 'attached', timeout: 60_000 });

async function open() {
  const runs = await page.evaluate(() => {
    const d = document.querySelector('[data-testid=lint-list]').dataset;
    delete d.shownMs;
    return Number(d.runs || 0);
  });
  await page.setInputFiles('[data-testid=file-input]', card);
  await page.waitForFunction((r) => {
    const d = document.querySelector('[data-testid=lint-list]').dataset;
    return Number(d.runs || 0) > r && d.shownMs !== undefined;
  }, runs, { timeout: 60_000 });
  // The frame that paints the findings, and what the page runs soon after (the graph's hand-off).
  await page.waitForTimeout(1500);
  return page.evaluate(() => ({ ...document.querySelector('[data-testid=lint-list]').dataset }));
}

/** Exclusive time (ms) per trace event name on one thread between `from` and `to` (trace µs). */
function selfTimes(events, from, to) {
  const spans = events.filter((e) => e.ph === 'X' && e.dur > 0 && e.ts < to && e.ts + e.dur > from)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const out = new Map();
  const stack = [];
  const clip = (s, e) => Math.max(0, Math.min(e, to) - Math.max(s, from));
  const add = (name, us) => out.set(name, (out.get(name) || 0) + us);
  // Each span's own time: its length less its children's.
  for (const e of spans) {
    while (stack.length && stack[stack.length - 1].end <= e.ts) stack.pop();
    const parent = stack[stack.length - 1];
    const end = e.ts + e.dur;
    add(e.name, clip(e.ts, end));
    if (parent) add(parent.name, -clip(e.ts, Math.min(end, parent.end)));
    stack.push({ name: e.name, end });
  }
  return out;
}

/**
 * Time (µs) per JavaScript function from the trace's V8 sampling profile of one thread between
 * from and to: self time, and inclusive time of the page's own functions (each sample counted
 * once per function on its stack).
 */
function profileTimes(events, pid, tid, from, to) {
  const nodes = new Map();
  const self = new Map();
  const incl = new Map();
  const add = (m, k, v) => m.set(k, (m.get(k) || 0) + v);
  const name = (f) => `${f.functionName || '(anonymous)'} ${f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ''}`.trim();
  // The sampled thread is the Profile event's; its chunks come from the profiler's own thread.
  const profile = events.find((e) => e.pid === pid && e.tid === tid && e.name === 'Profile');
  if (!profile) return { self, incl };
  let time = profile.args.data.startTime;
  for (const e of events) {
    if (e.pid !== pid || e.id !== profile.id || e.name !== 'ProfileChunk' || !e.args || !e.args.data) continue;
    const d = e.args.data;
    for (const n of (d.cpuProfile && d.cpuProfile.nodes) || []) nodes.set(n.id, n);
    const samples = (d.cpuProfile && d.cpuProfile.samples) || [];
    const deltas = d.timeDeltas || [];
    for (let i = 0; i < samples.length; i++) {
      time += deltas[i] || 0;
      if (time < from || time > to) continue;
      let n = nodes.get(samples[i]);
      if (!n) continue;
      const us = deltas[i] || 0;
      add(self, name(n.callFrame), us);
      const seen = new Set();
      for (; n; n = nodes.get(n.parent)) {
        const f = n.callFrame;
        if (!/\/(app|lint|store|api|index|ccv3_wasm)\.js$/.test(f.url || '')) continue;
        const k = name(f);
        if (!seen.has(k)) add(incl, k, us);
        seen.add(k);
      }
    }
  }
  return { self, incl };
}
const top = (map, n, scale = 1) => [...map].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).slice(0, n)
  .map(([k, v]) => `    ${(v * scale).toFixed(1).padStart(7)} ms  ${k}`).join('\n');

const painted = (d) => (d.paintedMs === undefined ? '' : `; the page's own count from the card shown to the frame that paints the findings: ${d.paintedMs} ms`);
console.log('# first opening (a fresh page: waits for the tokenizer), untraced');
console.log(`  shown to drawn ${(await open()).shownMs} ms`);
for (let i = 0; i < OPENINGS; i++) {
  await browser.startTracing(page, { categories: CATEGORIES });
  const d = await open();
  // A user timing mark ties the page's clock (performance.now) to the trace's.
  const syncAt = await page.evaluate(() => performance.mark('ccv3-trace-sync').startTime);
  const buf = await browser.stopTracing();
  if (keep && i === OPENINGS - 1) fs.writeFileSync(keep, buf);
  const events = JSON.parse(buf.toString()).traceEvents;
  // The page's renderer main thread: the one that ran the mark.
  const sync = events.find((e) => e.name === 'ccv3-trace-sync');
  if (!sync) throw new Error('the mark is not in the trace');
  const main = { pid: sync.pid, tid: sync.tid };
  const originTs = sync.ts - syncAt * 1000;
  const drawnAt = Number(d.drawnAt);
  const shownAt = drawnAt - Number(d.shownMs);
  const from = originTs + shownAt * 1000;
  const to = originTs + drawnAt * 1000;
  const mainEvents = events.filter((e) => e.pid === main.pid && e.tid === main.tid);
  // The frame after the findings: up to the end of the first Paint (or commit) after them.
  const paint = mainEvents.filter((e) => e.ph === 'X' && (e.name === 'Paint' || e.name === 'Commit' || e.name === 'PrePaint') && e.ts >= to)
    .sort((a, b) => a.ts - b.ts)[0];
  const frameEnd = paint ? paint.ts + paint.dur : to;
  const busy = (a, b) => {
    const tasks = mainEvents.filter((e) => e.ph === 'X' && (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask') && e.ts < b && e.ts + e.dur > a);
    return tasks.reduce((s, e) => s + Math.min(b, e.ts + e.dur) - Math.max(a, e.ts), 0) / 1000;
  };
  console.log(`# warm opening ${i + 1}: card shown to findings drawn ${d.shownMs} ms (the lintCard call ${Number(d.ms).toFixed(1)} ms, drawing the list ${d.drawMs} ms), main thread busy ${busy(from, to).toFixed(1)} ms of it; then to the findings painted ${((frameEnd - to) / 1000).toFixed(1)} ms (busy ${busy(to, frameEnd).toFixed(1)} ms)${painted(d)}`);
  console.log('  by trace event (exclusive), shown to drawn:');
  console.log(top(selfTimes(mainEvents, from, to), 14, 1 / 1000));
  console.log('  by JavaScript function (V8 samples, self), shown to drawn:');
  const prof = profileTimes(events, main.pid, main.tid, from, to);
  console.log(top(prof.self, 16, 1 / 1000));
  console.log('  by the page\'s own functions (inclusive), shown to drawn:');
  console.log(top(prof.incl, 16, 1 / 1000));
  const frameProf = profileTimes(events, main.pid, main.tid, to, frameEnd);
  console.log('  by the page\'s own functions (inclusive), drawn to painted:');
  console.log(top(frameProf.incl, 8, 1 / 1000));
  console.log('  by trace event (exclusive), drawn to painted:');
  console.log(top(selfTimes(mainEvents, to, frameEnd), 10, 1 / 1000));
}
await browser.close();
server.close();
