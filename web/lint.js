// The lint panel (issue 27): what `ccv3 lint` finds in the open card or lorebook, re-run as it
// is edited, for a target application; the token budget as a picture; the recursion graph
// (which entry's content triggers which entry) laid out by dagre in a worker (graph-layout.js).
//
// Every finding, budget number and edge comes from the npm package (`lintCard`, `lintLorebook`,
// `loreGraph`); this module only draws them and turns clicks into "select this entry".

const SVG = 'http://www.w3.org/2000/svg';
// The graph is asked for less often: it is laid out in a worker and drawn whole.
const GRAPH_DELAY_MS = 400;
// Graphs bigger than this are laid out when asked (a button): dagre takes seconds on them.
const GRAPH_AUTO_NODES = 2500;
const GRAPH_AUTO_EDGES = 600;
// A lint that took longer than this warms the WebAssembly code up once (lintNow).
const WARM_UP_MS = 20;
// Findings per chunk of the lint list (drawList): the browser lays out only the chunks in view.
const LIST_CHUNK = 100;
// The label of a graph node: `#index name`, this many characters at most.
const LABEL_CHARS = 22;

const svg = (tag, attrs = {}, ...children) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
};

const title = (text) => svg('title', {}, text);

/**
 * Runs `fn` once the browser has drawn a frame with what the page holds now (in the task after
 * that frame), or soon if the page is hidden (a hidden page draws no frames; one hidden after
 * the frame was asked for runs `fn` a second later). Used by the page too (app.js).
 */
export function afterFrame(fn) {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    fn();
  };
  if (!document.hidden) requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, document.hidden ? 0 : 1000);
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text (or an attribute's value) as HTML. */
const esc = (v) => String(v).replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * The panel over the page's elements (index.html: #lint-panel). `host` gives what the panel needs
 * of the page: `ccv3` (the package), `doc()` ({kind, doc} or null), `entries()` (the book's
 * entries), `tokenizer()` (a name, or null while the vocabulary loads), `select(index)` (shows an
 * entry in the editor) and `focusPath(path)` (goes to a card field).
 */
export function createLintPanel(host) {
  const $ = (sel) => document.querySelector(sel);
  const list = $('[data-testid=lint-list]');
  const summary = $('#lint-summary');
  const appSelect = $('[data-testid=lint-app]');
  const chart = $('[data-testid=budget-chart]');
  const chartNote = $('#budget-note');
  const graphBox = $('#lore-graph-box');
  const graphNote = $('#graph-note');
  let lintQueued = false; // a lint is queued for the edits of this task
  let graphTimer = 0;
  let runs = 0;
  let warmed = false; // the lint ran once more to warm the WebAssembly code up (lintNow)
  let shownAt = null; // when the open file was shown, until its first lint is drawn
  let worker = null;
  let workerBusy = false;
  let layoutId = 0;
  let pendingGraph = null;
  let changedAt = null; // when the first edit not yet linted came
  let shownHtml = []; // the items of the list as drawn (drawList)
  let budgetShown = ''; // what the budget chart shows (drawBudget)
  let graphShown = ''; // the graph laid out or being laid out (graphNow)

  // One listener for every finding and graph node: a click selects the entry (or the field).
  const activate = (target) => {
    const item = target.closest('[data-entry]');
    if (!item) return;
    if (item.dataset.entry !== '') host.select(Number(item.dataset.entry));
    else if (item.dataset.path !== undefined) host.focusPath(item.dataset.path);
  };
  for (const box of [list, chart, graphBox]) {
    box.addEventListener('click', (ev) => activate(ev.target));
    box.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        activate(ev.target);
      }
    });
  }
  appSelect.addEventListener('change', () => lintNow());

  function options(tokenizer) {
    const o = { tokenizer };
    if (appSelect.value) o.app = appSelect.value;
    return o;
  }

  function lintNow() {
    const open = host.doc();
    if (!open) return;
    const tokenizer = host.tokenizer();
    if (!tokenizer) {
      summary.textContent = 'waiting for the tokenizer…';
      if (budgetShown === '') clearBudget();
      return;
    }
    const t0 = performance.now();
    // From the edit to this run starting: the page's own work on the edit and the timer.
    if (changedAt !== null) list.dataset.waitMs = (t0 - changedAt).toFixed(2);
    changedAt = null;
    let findings;
    try {
      findings = open.kind === 'card' ? host.ccv3.lintCard(open.doc, options(tokenizer)) : host.ccv3.lintLorebook(open.doc, options(tokenizer));
    } catch (e) {
      // Shown as a finding of its own (the package's error code).
      findings = [{ severity: 'error', code: e.code || 'error', path: '', entry: null, message: e.message }];
    }
    const ms = performance.now() - t0;
    const entries = host.entries();
    drawList(findings.map((f) => itemHtml(f, entries)));
    const count = (s) => findings.filter((f) => f.severity === s).length;
    summary.textContent = findings.length
      ? `${count('error')} errors, ${count('warning')} warnings, ${count('info')} notes · ${ms.toFixed(0)} ms`
      : 'nothing found';
    runs++;
    const drawn = performance.now();
    list.dataset.runs = String(runs);
    list.dataset.ms = ms.toFixed(2);
    list.dataset.drawnAt = drawn.toFixed(2);
    list.dataset.drawMs = (drawn - t0 - ms).toFixed(2);
    const plan = findings.find((f) => f.code === 'lore-budget-plan');
    if (!warmed && ms > WARM_UP_MS) {
      // The first long lint of the page: once the page is idle, lint the same file once more
      // (its result unused). The browser compiles the WebAssembly functions a lint runs hot in
      // its optimizing tier only after they ran for a while, in the background: without this,
      // the next one or two openings of a big card ran the lint at about half speed (the 8.6 MB
      // card's lintCard 180-250 ms instead of 55-85, traced: wasm.TopTierCompilation during it).
      warmed = true;
      const again = () => {
        const now = host.doc();
        if (!now || !host.tokenizer()) return;
        try {
          if (now.kind === 'card') host.ccv3.lintCard(now.doc, options(host.tokenizer()));
          else host.ccv3.lintLorebook(now.doc, options(host.tokenizer()));
        } catch (_) {
          // Its findings were shown by the lint before.
        }
      };
      if (typeof requestIdleCallback === 'function') requestIdleCallback(again, { timeout: 3000 });
      else setTimeout(again, 1000);
    }
    if (shownAt !== null) {
      // A newly opened file: from the file shown to its first findings in the list, and to the
      // frame that paints them (read by the speed test). Its budget chart (2,000 bars on the
      // 8.6 MB card) comes after that frame, so that the findings are not held back by it.
      const from = shownAt;
      shownAt = null;
      list.dataset.shownMs = (drawn - from).toFixed(1);
      delete list.dataset.paintedMs;
      const run = runs;
      afterFrame(() => {
        list.dataset.paintedMs = (performance.now() - from).toFixed(1);
        if (runs === run) drawBudget(plan, entries);
      });
      return;
    }
    drawBudget(plan, entries);
    // The budget chart, drawn after the list (read by the speed test).
    list.dataset.budgetMs = (performance.now() - drawn).toFixed(2);
  }

  /**
   * One finding as the HTML of its list item: severity, code, entry and message; its entry (or
   * path) is selected on a click. Text made into HTML with one string (and one parse for many
   * items) is several times faster to draw than element by element.
   */
  function itemHtml(f, entries) {
    const entry = f.entry === null || f.entry === undefined ? '' : String(f.entry);
    let where = '';
    if (entry !== '') {
      const e = entries[f.entry];
      const name = e && (e.name || e.comment);
      where = ` #${f.entry}${name ? ` ${String(name).slice(0, 40)}` : ''}`;
    }
    return `<li data-testid="lint-item" data-code="${esc(f.code)}" data-entry="${entry}" data-severity="${esc(f.severity)}" data-path="${esc(f.path)}" tabindex="0" role="button"><span class="sev">${esc(f.severity)}</span> <code>${esc(f.code)}</code>${esc(`${where}: ${f.message}`)}</li>`;
  }

  /**
   * Shows the findings (`html`: one item each, as itemHtml makes them). The items already shown
   * stay: only the findings that came or went are added or removed (an edit changes a few of
   * thousands), so the browser styles and lays out only those.
   *
   * The items are held in lists of LIST_CHUNK (`ol.lint-chunk`, `content-visibility: auto`): the
   * browser lays out and paints only the chunks in view. (2,737 findings of the 8.6 MB card laid
   * out one by one took 65-125 ms of the frame that shows them; by chunk, 2-4 ms. Each item as
   * its own `content-visibility` box was slower than none: a style and visibility check each.)
   */
  function drawList(html) {
    const old = shownHtml;
    shownHtml = html;
    const nodes = list.querySelectorAll('[data-testid=lint-item]');
    if (old.length === 0 || nodes.length !== old.length) {
      list.innerHTML = chunked(html);
      return;
    }
    // How many of each item are still to come on each side.
    const leftOld = new Map();
    for (const h of old) leftOld.set(h, (leftOld.get(h) || 0) + 1);
    const leftNew = new Map();
    for (const h of html) leftNew.set(h, (leftNew.get(h) || 0) + 1);
    const oldNodes = Array.from(nodes);
    const remove = [];
    const inserts = []; // [node to insert before (null: at the end), html of the items]
    let i = 0;
    let j = 0;
    let run = null;
    const take = (map, h) => map.set(h, map.get(h) - 1);
    while (j < html.length) {
      if (i < old.length && old[i] === html[j]) {
        take(leftOld, old[i]);
        take(leftNew, html[j]);
        i++;
        j++;
        run = null;
      } else if (i < old.length && !(leftNew.get(old[i]) > 0)) {
        // Gone (or as many as needed are kept further on).
        take(leftOld, old[i]);
        remove.push(oldNodes[i]);
        i++;
      } else if (!(leftOld.get(html[j]) > 0) || i >= old.length) {
        // New here.
        if (!run) {
          run = [i < old.length ? oldNodes[i] : null, []];
          inserts.push(run);
        }
        run[1].push(html[j]);
        take(leftNew, html[j]);
        j++;
      } else {
        // Both still to come, in another order: this old one goes, its copy comes as new.
        take(leftOld, old[i]);
        remove.push(oldNodes[i]);
        i++;
      }
    }
    for (; i < old.length; i++) remove.push(oldNodes[i]);
    const added = inserts.reduce((n, [, items]) => n + items.length, 0);
    if (remove.length + added > html.length / 2 || (added && !list.lastElementChild)) {
      list.innerHTML = chunked(html);
      return;
    }
    for (const [before, items] of inserts) {
      const t = document.createElement('template');
      t.innerHTML = items.join('');
      // Into the chunk of the item it goes before, or at the end of the last chunk.
      if (before) before.before(t.content);
      else list.lastElementChild.append(t.content);
    }
    for (const n of remove) {
      const chunk = n.parentElement;
      n.remove();
      if (!chunk.firstElementChild) chunk.remove();
    }
  }

  /** The items' HTML in lists of LIST_CHUNK items. */
  function chunked(html) {
    const parts = [];
    for (let k = 0; k < html.length; k += LIST_CHUNK) parts.push(`<ol class="lint-chunk">${html.slice(k, k + LIST_CHUNK).join('')}</ol>`);
    return parts.join('');
  }

  /** No budget chart (until the open file's is drawn). */
  function clearBudget() {
    chart.replaceChildren();
    chartNote.textContent = '';
  }

  /**
   * The budget as one stacked bar: a segment per enabled entry (constants first, marked), and the
   * budget line. The bar is scaled to show the line: triggered entries far beyond it run off the
   * right edge (the note says how far).
   */
  function drawBudget(plan, entries) {
    const budget = plan && plan.budget;
    if (!budget) {
      budgetShown = '';
      chart.replaceChildren();
      chart.setAttribute('viewBox', '0 0 600 10');
      chartNote.textContent = 'No lorebook entries.';
      return;
    }
    const isConstant = (i) => {
      const e = entries[i];
      return !!e && (e.constant === true || (Array.isArray(e.decorators) && e.decorators.some((d) => d && d.type === 'constant')));
    };
    const rows = budget.entries.map((t) => ({ ...t, constant: isConstant(t.entry) }));
    rows.sort((a, b) => (a.constant === b.constant ? a.entry - b.entry : a.constant ? -1 : 1));
    const W = 600;
    const domain = Math.max(1, budget.limit * 1.1, budget.constant, Math.min(budget.total, budget.limit * 3));
    const scale = W / domain;
    const bars = [];
    let x = 0;
    for (const r of rows) {
      const w = r.tokens * scale;
      const e = entries[r.entry];
      const name = e && (e.name || e.comment || (Array.isArray(e.keys) && e.keys[0]));
      bars.push(`<rect data-testid="budget-bar" data-entry="${r.entry}" data-tokens="${r.tokens}" data-constant="${r.constant}" class="${r.constant ? 'bar constant' : 'bar'}" x="${x.toFixed(2)}" y="22" width="${Math.max(0, w).toFixed(2)}" height="26"><title>${esc(`#${r.entry}${name ? ` ${name}` : ''}: ${r.tokens} tokens${r.constant ? ' (constant)' : ''}`)}</title></rect>`);
      x += w;
    }
    const lx = Math.min(W - 1, budget.limit * scale);
    const picture = `<g class="bars">${bars.join('')}</g>`
      + `<line data-testid="budget-line" data-tokens="${budget.limit}" class="limit" x1="${lx}" x2="${lx}" y1="12" y2="54"></line>`
      + `<text class="limit-label" x="${Math.min(lx + 3, W - 110)}" y="10">${esc(`budget ${budget.limit}`)}</text>`
      + '<text x="0" y="62" class="axis">0</text>';
    const beyond = budget.total > domain ? `; the bar runs on to ${budget.total.toLocaleString('en')} tokens` : '';
    const note = `A bar per enabled entry, constants first (orange); the red line is the budget. Constant entries ${budget.constant.toLocaleString('en')} tokens (every turn), triggered entries up to ${budget.triggered_max.toLocaleString('en')}, budget ${budget.limit.toLocaleString('en')}${beyond}.`;
    // Most edits leave the budget as it was: then the picture stays (no new style and layout).
    if (picture === budgetShown) return;
    budgetShown = picture;
    chart.setAttribute('viewBox', `0 0 ${W} 64`);
    chart.innerHTML = picture;
    chartNote.textContent = note;
  }

  // ---- The recursion graph ----

  function graphNow() {
    clearTimeout(graphTimer);
    const open = host.doc();
    if (!open) return;
    let graph;
    try {
      graph = host.ccv3.loreGraph(open.doc);
    } catch (e) {
      graphShown = '';
      graphBox.replaceChildren();
      graphNote.textContent = e.message;
      return;
    }
    if (!graph.nodes.length) {
      graphShown = '';
      graphBox.replaceChildren();
      graphNote.textContent = 'No lorebook entries.';
      return;
    }
    // An edit that leaves the graph as it was (most do) lays nothing out again.
    const key = JSON.stringify(graph);
    if (key === graphShown) return;
    graphShown = key;
    pendingGraph = graph;
    if (graph.nodes.length > GRAPH_AUTO_NODES || graph.edges.length > GRAPH_AUTO_EDGES) {
      graphNote.replaceChildren(`${graph.nodes.length.toLocaleString('en')} entries, ${graph.edges.length.toLocaleString('en')} edges${graph.truncated ? ' (cut at the limit)' : ''}: `,
        Object.assign(document.createElement('button'), { type: 'button', textContent: 'Lay out the graph (may take a while)', onclick: () => layoutGraph(graph) }));
      return;
    }
    layoutGraph(graph);
  }

  function label(n) {
    const name = n.name ? ` ${n.name}` : '';
    const text = `#${n.entry}${name}`;
    return text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text;
  }

  function layoutGraph(graph) {
    if (!worker || workerBusy) {
      // A layout still running is for an older book: start over.
      if (worker) worker.terminate();
      worker = new Worker(new URL('./graph-layout.js', import.meta.url), { type: 'module' });
      worker.addEventListener('message', (ev) => {
        workerBusy = false;
        if (ev.data.id === layoutId && pendingGraph) drawGraph(pendingGraph, ev.data);
      });
      worker.addEventListener('error', (ev) => {
        workerBusy = false;
        graphNote.textContent = `The graph could not be laid out: ${ev.message || 'worker error'}`;
      });
    }
    graphNote.textContent = `Laying out ${graph.nodes.length.toLocaleString('en')} entries…`;
    layoutId++;
    workerBusy = true;
    const nodes = graph.nodes.map((n) => ({ entry: n.entry, width: label(n).length * 6.6 + 14, height: 22 }));
    worker.postMessage({ id: layoutId, nodes, edges: graph.edges.map((e) => ({ from: e.from, to: e.to })) });
  }

  function drawGraph(graph, placed) {
    if (placed.error) {
      graphNote.textContent = `The graph could not be laid out: ${placed.error}`;
      return;
    }
    const at = new Map(placed.nodes.map((p) => [p.entry, p]));
    const edges = graph.edges.map((e, i) => {
      const pts = placed.edges[i].points || [];
      const d = pts.map((p, k) => `${k ? 'L' : 'M'}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' ');
      return svg('path', { 'data-testid': 'graph-edge', 'data-from': e.from, 'data-to': e.to, class: 'edge', d, 'marker-end': 'url(#lore-arrow)' },
        title(`#${e.from} → #${e.to}: key ${e.key}`));
    });
    const nodes = graph.nodes.map((n) => {
      const p = at.get(n.entry);
      const text = label(n);
      const w = text.length * 6.6 + 14;
      return svg('g', {
        'data-testid': 'graph-node', 'data-entry': n.entry, tabindex: 0, role: 'button',
        class: `node${n.constant ? ' constant' : ''}${n.enabled ? '' : ' disabled'}`,
        transform: `translate(${(p.x - w / 2).toFixed(1)} ${(p.y - 11).toFixed(1)})`,
      }, title(`#${n.entry}${n.name ? ` ${n.name}` : ''}${n.constant ? ' (constant)' : ''}${n.enabled ? '' : ' (disabled)'}`),
      svg('rect', { width: w.toFixed(1), height: 22, rx: 4 }),
      svg('text', { x: 7, y: 15 }, text));
    });
    const W = Math.ceil(placed.width);
    const H = Math.ceil(placed.height);
    const picture = svg('svg', { 'data-testid': 'lore-graph', class: 'lore-graph', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
      'aria-label': `Recursion graph: ${graph.nodes.length} entries, ${graph.edges.length} edges` },
    svg('defs', {}, svg('marker', { id: 'lore-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      svg('path', { d: 'M0 0 L10 5 L0 10 z' }))),
    svg('g', { class: 'edges' }, ...edges), svg('g', { class: 'nodes' }, ...nodes));
    graphBox.replaceChildren(picture);
    graphNote.textContent = `${graph.nodes.length.toLocaleString('en')} entries, ${graph.edges.length.toLocaleString('en')} edges (A → B: A's content holds a key of B, so a recursion step can activate B)${graph.truncated ? '; cut at the engine\'s limit' : ''}. Click an entry to edit it.`;
    graphBox.dataset.nodes = String(graph.nodes.length);
    graphBox.dataset.edges = String(graph.edges.length);
  }

  return {
    /** A new file is open (shown at `at`, performance.now()), or none (null): its findings
     * replace the last file's at once; its graph once the page calls editorShown (at once when
     * `at` is null). */
    opened(at) {
      shownAt = at;
      changedAt = null;
      list.replaceChildren();
      shownHtml = [];
      budgetShown = '';
      graphShown = '';
      clearTimeout(graphTimer);
      if (at === null || at === undefined) {
        clearBudget();
        this.editorShown();
      }
      // Else the last file's budget chart and graph stay until this file's are drawn (the chart
      // right after the frame that paints the findings, the graph after the editor): the panel
      // keeps its height, so that frame lays out and paints the findings alone, not the page.
      summary.textContent = host.doc() ? 'linting…' : '';
      lintNow();
    },
    /** The page drew the open file's editor (after its findings): the recursion graph follows.
     * (The last file's graph stays until then: taking 2,000 nodes out of the page, and laying
     * out the new ones, would hold the findings back.) */
    editorShown() {
      clearTimeout(graphTimer);
      graphBox.replaceChildren();
      graphNote.textContent = '';
      if (host.doc()) graphTimer = setTimeout(graphNow, 0);
    },
    /** The document changed (`book`: its lorebook may have): lint again soon, the graph later. */
    changed({ book = true } = {}) {
      if (changedAt === null) changedAt = performance.now();
      // Lint once the edit's task is done (its edits merge into one run), before the browser's
      // next frame: the typed text and its findings are drawn in the same frame. (In a task of
      // its own, the lint waited for a frame over the whole page first: on a 2,000-entry book
      // that frame took as long as the lint.)
      if (!lintQueued) {
        lintQueued = true;
        queueMicrotask(() => {
          lintQueued = false;
          if (changedAt !== null) lintNow();
        });
      }
      if (book) {
        clearTimeout(graphTimer);
        graphTimer = setTimeout(graphNow, GRAPH_DELAY_MS);
      }
    },
    /** The tokenizer became ready or changed: the budget is counted again. */
    tokensChanged() {
      lintNow();
    },
  };
}
