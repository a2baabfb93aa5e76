// The ccv3 card editor: open, check, edit, test and convert cards in the browser (issue 15).
//
// Every rule of the standard comes from the npm package's browser entry (`ccv3/web`): reading,
// validation, writing, decorators, the lorebook engine, prompt assembly and token counts. This
// file only shows what the package returns and turns edits into changes of the card object.
// Nothing leaves the browser: no request goes to another host (see the page's CSP).
import init, * as ccv3 from './pkg/web/index.js';
import * as store from './store.js';
import { createLintPanel, afterFrame } from './lint.js';

const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'on') for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
};

// Rows of the lorebook table shown at once (books up to this size show every entry).
const PAGE = 1000;
// Rejected entries listed by the tester, and nodes drawn for an extensions tree.
const MAX_REJECTED = 300;
const MAX_TREE_NODES = 3000;

/** Everything the page knows about the open file. */
const S = {
  kind: null, // 'card' | 'lorebook'
  doc: null, // the card (readCard) or lorebook (readLorebook) object, edited in place
  fileName: '',
  bytes: null, // the file as opened
  picture: null, // {bytes, type} of the portrait, when there is one
  pngPicture: null, // the portrait as PNG bytes (for PNG and CHARX downloads)
  files: [], // readCardFiles: CHARX entries, PNG asset chunks
  urls: [], // object URLs to revoke on the next open
  undo: [],
  redo: [],
  edited: false,
  page: 0,
  selected: -1, // the entry in the entry editor
  compiled: null, // compileLorebooks of the book, until it changes
  turnState: null,
  turn: 1,
  lastScan: null,
  tokenizer: 'o200k',
  tokensReady: false,
  draftId: null,
  staleEditor: false, // the fields and entries shown are still the file before's (openBytes)
};

const status = (text) => { $('#status').textContent = text; };

// The lint panel (lint.js): findings, the budget picture and the recursion graph.
const lintPanel = createLintPanel({
  ccv3,
  doc: () => (S.doc ? { kind: S.kind, doc: S.doc } : null),
  entries: () => entries(),
  tokenizer: () => (S.tokensReady ? S.tokenizer : null),
  select: selectEntry,
  focusPath,
});

function showError(message) {
  const box = $('#error');
  box.textContent = message;
  box.hidden = false;
}

function clearError() {
  $('#error').hidden = true;
  $('#error').textContent = '';
}

// ---------------------------------------------------------------------------------------------
// Paths: ['data', 'alternate_greetings', 2] <-> "data.alternate_greetings[2]" (the notation of
// `ccv3 validate --json`).

function pathText(path) {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : (s ? '.' : '') + p;
  return s;
}

function getAt(path) {
  let v = S.doc;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[p];
  }
  return v;
}

function setAt(path, value) {
  let v = S.doc;
  for (let i = 0; i < path.length - 1; i++) {
    if (v[path[i]] === null || typeof v[path[i]] !== 'object') v[path[i]] = typeof path[i + 1] === 'number' ? [] : {};
    v = v[path[i]];
  }
  const last = path[path.length - 1];
  if (value === undefined) {
    if (Array.isArray(v)) v.splice(last, 1);
    else delete v[last];
  } else v[last] = value;
}

const bookPath = () => (S.kind === 'card' ? ['data', 'character_book'] : []);
const book = () => (S.kind === 'card' ? S.doc.data.character_book : S.doc);
const entries = () => {
  const b = book();
  return b && Array.isArray(b.entries) ? b.entries : [];
};

/**
 * Text from a textarea for a field that held `before`: a browser gives "\n" line breaks; a field
 * written with Windows line breaks keeps them.
 */
function fromTextarea(before, value) {
  if (typeof before === 'string' && before.includes('\r\n')) return value.replace(/\r?\n/g, '\r\n');
  return value;
}

// ---------------------------------------------------------------------------------------------
// Edits, undo and redo. Every change goes through edit(); typing into one field merges into one
// undo step until another field is touched or a second passes.

function edit(path, value, { merge = false, redraw = null } = {}) {
  const before = getAt(path);
  const last = S.undo[S.undo.length - 1];
  const now = Date.now();
  if (merge && last && last.merge && pathText(last.path) === pathText(path) && now - last.time < 1000) {
    last.after = value;
    last.time = now;
  } else {
    S.undo.push({ path, before: snapshot(before), after: snapshot(value), time: now, merge, redraw });
    if (S.undo.length > 500) S.undo.shift();
  }
  S.redo = [];
  setAt(path, value);
  changed(path);
  if (redraw) redraw();
}

function snapshot(v) {
  return Array.isArray(v) ? v.slice() : v;
}

function applyStep(from, to, key) {
  const step = from.pop();
  if (!step) return;
  to.push(step);
  setAt(step.path, snapshot(step[key]));
  changed(step.path);
  renderDocument({ keepScroll: true });
  focusPath(pathText(step.path), false);
}

const undo = () => applyStep(S.undo, S.redo, 'before');
const redo = () => applyStep(S.redo, S.undo, 'after');

function updateUndoButtons() {
  $('#undo').disabled = S.undo.length === 0;
  $('#redo').disabled = S.redo.length === 0;
}

let validateTimer = 0;
let draftTimer = 0;
let promptTimer = 0;

function changed(path) {
  S.edited = true;
  const p = pathText(path);
  const bookChanged = S.kind === 'lorebook' || p.startsWith('data.character_book') || p === 'data';
  if (bookChanged) {
    if (S.compiled) S.compiled.free();
    S.compiled = null;
  }
  lintPanel.changed({ book: bookChanged });
  updateUndoButtons();
  if (path.length <= 2 || path[path.length - 1] === 'name') updateNameEcho();
  clearTimeout(validateTimer);
  validateTimer = setTimeout(validateNow, S.bytes && S.bytes.length > 1 << 20 ? 400 : 150);
  clearTimeout(draftTimer);
  draftTimer = setTimeout(saveDraft, 800);
  runTester();
  updateNotes();
}

function updateNameEcho() {
  const n = S.kind === 'card' ? S.doc.data.name : S.doc.name;
  document.title = `${n || 'Untitled'} · ccv3 card editor`;
}

// ---------------------------------------------------------------------------------------------
// Opening files.

function sniff(bytes) {
  const b = bytes;
  if (b.length > 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'image/png';
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length > 12 && b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) return 'image/webp';
  if (b.length > 4 && b[0] === 0x50 && b[1] === 0x4b) return 'application/zip';
  return 'application/json';
}

async function openFile(file) {
  if (!file) return;
  S.chosenAt = performance.now();
  status(`Reading ${file.name}…`);
  let bytes;
  try {
    bytes = new Uint8Array(await file.arrayBuffer());
  } catch (e) {
    failOpen(file.name, `the browser could not read the file: ${e && e.message}`);
    return;
  }
  openBytes(bytes, file.name, { recent: true });
}

function failOpen(name, reason) {
  showError(`Cannot open ${name}: ${reason}`);
  status('Could not open the file');
  // The file is closed: only its finding is shown, as `ccv3 validate --json` gives it.
  if (S.compiled) S.compiled.free();
  Object.assign(S, { kind: null, doc: null, compiled: null, undo: [], redo: [], edited: false, lastScan: null, staleEditor: false });
  updateUndoButtons();
  $('#welcome').hidden = false;
  $('#editor').hidden = false;
  $('#editor').classList.add('failed');
  $('#card-name').value = '';
  // As `ccv3 validate --json` reports a file it cannot read.
  const list = $('#diagnostics');
  list.replaceChildren(diagnosticItem({ severity: 'error', code: 'unreadable', path: '', message: reason }));
  lintPanel.opened(null);
}

/** Reads `bytes` as a card, else as a lorebook; shows the name at once and the rest just after. */
function openBytes(bytes, fileName, { recent = false, draft = null } = {}) {
  clearError();
  let doc;
  let kind;
  if (draft) {
    doc = draft.doc;
    kind = draft.kind;
  } else {
    try {
      doc = ccv3.readCard(bytes);
      kind = 'card';
    } catch (e) {
      try {
        doc = ccv3.readLorebook(bytes);
        kind = 'lorebook';
      } catch (e2) {
        failOpen(fileName, e.message && /lorebook/.test(e.message) ? e2.message : e.message);
        return false;
      }
    }
  }
  // What was pending for the file before: its draft is saved now, its checks are dropped.
  if (S.doc && S.edited) saveDraft();
  clearTimeout(validateTimer);
  clearTimeout(draftTimer);
  clearTimeout(scanTimer);
  for (const u of S.urls) URL.revokeObjectURL(u);
  if (S.compiled) S.compiled.free();
  Object.assign(S, {
    kind, doc, fileName, bytes, picture: null, pngPicture: null, files: [], urls: [], undo: [], redo: [],
    edited: !!draft, page: 0, selected: -1, compiled: null, turnState: null, turn: 1, lastScan: null, readerFindings: [],
    draftId: draft ? draft.id : `${fileName}:${bytes.length}:${Date.now()}`,
  });
  // The name first (issue 15: the 8.6 MB card shows its name within 1 s).
  $('#welcome').hidden = true;
  $('#editor').hidden = false;
  $('#editor').classList.remove('failed');
  // The findings of the file before go at once; this file's follow with the rest.
  $('#diagnostics').replaceChildren();
  $('#diag-summary').textContent = 'checking…';
  $('#diag-summary').className = 'muted';
  const name = $('#card-name');
  name.value = (kind === 'card' ? doc.data.name : doc.name) || '';
  $('#name-label').textContent = kind === 'card' ? 'Name' : 'Lorebook name';
  updateNameEcho();
  status(`Opened ${fileName}`);
  // How long the file took from being chosen to its name shown (read by the speed test).
  if (S.chosenAt !== undefined) name.dataset.openMs = (performance.now() - S.chosenAt).toFixed(1);
  S.chosenAt = undefined;
  const shownAt = performance.now();
  // What the editor shows of the file before stays until the rest is drawn: it takes no input.
  S.staleEditor = true;
  setTimeout(() => {
    if (S.doc !== doc) return; // another file was opened meanwhile
    // The findings first, in a frame of their own (issue 27: the 8.6 MB card's lint under 300 ms
    // after the card is shown): drawing the editor (its 1,000-row entry table) and validating
    // take longer than the lint and would hold the findings back until both were drawn.
    try {
      lintPanel.opened(shownAt);
    } catch (e) {
      showError(`Could not lint ${fileName}: ${e && e.message}`);
    }
    afterFrame(() => {
      if (S.doc !== doc) return;
      S.staleEditor = false; // (renderDocument redraws those panels before any input comes)
      try {
        loadPicture();
        renderDocument();
        // The recursion graph last: laid out in a worker, drawn whole.
        lintPanel.editorShown();
        if (draft) {
          // The file's own findings, from the file as opened; then the draft's.
          try {
            const fresh = kind === 'card' ? ccv3.readCard(bytes) : ccv3.readLorebook(bytes);
            const unedited = validate(fresh);
            S.readerFindings = validate(bytes).filter((f) => !unedited.some((g) => sameFinding(f, g)));
          } catch (_) {
            S.readerFindings = [];
          }
          validateNow();
        } else {
          validateNow(bytes);
        }
        updateUndoButtons();
        if (recent) store.addRecent(fileName, bytes).then(renderRecent, () => {});
        if (!S.tokensReady) setTimeout(() => loadTokens(S.tokenizer), 50);
      } catch (e) {
        showError(`Could not show ${fileName}: ${e && e.message}`);
      }
    });
  }, 0);
  return true;
}

/** The panels that show the open file's fields, entries and tester (drawn by renderDocument). */
function stalePanels() {
  return [$('#fields'), $('#lore-panel'), $('#tester-panel')];
}

// While a newly opened file's findings are drawn first, these panels still show the file before:
// their inputs and buttons would edit the new file, so they take no input until redrawn. (Not
// `inert`: setting it restyles the whole 1,000-row table, 150 ms on the 8.6 MB card.)
for (const type of ['beforeinput', 'input', 'change', 'click']) {
  document.addEventListener(type, (ev) => {
    if (S.staleEditor && ev.target instanceof Node && stalePanels().some((box) => box.contains(ev.target))) {
      ev.preventDefault();
      ev.stopImmediatePropagation();
    }
  }, true);
}

function objectUrl(bytes, type) {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  S.urls.push(url);
  return url;
}

/** The portrait: the picture the card came in, or the CHARX's main icon. */
function loadPicture() {
  const img = $('#portrait');
  img.hidden = true;
  img.removeAttribute('src');
  if (S.kind !== 'card') return;
  const type = sniff(S.bytes);
  const assets = Array.isArray(S.doc.data.assets) ? S.doc.data.assets : [];
  const needsFiles = type === 'application/zip' ||
    assets.some((a) => a && typeof a.uri === 'string' && (a.uri.startsWith('embeded://') || a.uri.startsWith('__asset:')));
  if (needsFiles) {
    try {
      S.files = ccv3.readCardFiles(S.bytes).map((f) => ({ path: f.path, bytes: f.bytes.slice() }));
    } catch (_) {
      S.files = [];
    }
  }
  if (type.startsWith('image/')) {
    S.picture = { bytes: S.bytes, type };
  } else {
    const main = assets.find((a) => a && a.type === 'icon' && a.name === 'main') || assets.find((a) => a && a.type === 'icon');
    const file = main && fileOf(main.uri);
    if (file) S.picture = { bytes: file.bytes, type: sniff(file.bytes) };
  }
  if (S.picture) {
    img.src = objectUrl(S.picture.bytes, S.picture.type);
    img.hidden = false;
    if (S.picture.type === 'image/png') S.pngPicture = S.picture.bytes;
    else toPng(S.picture).then((png) => { S.pngPicture = png; updateNotes(); }, () => {});
  }
}

/** The embedded file an asset URI points at (`embeded://PATH`, `__asset:PATH`). */
function fileOf(uri) {
  if (typeof uri !== 'string') return null;
  let path = null;
  if (uri.startsWith('embeded://')) path = uri.slice('embeded://'.length);
  else if (uri.startsWith('__asset:')) path = uri.slice('__asset:'.length);
  if (path === null) return null;
  return S.files.find((f) => f.path === path) || null;
}

/** A JPEG/WebP portrait as PNG bytes (the browser's own decoder and encoder). */
async function toPng(picture) {
  const bitmap = await createImageBitmap(new Blob([picture.bytes], { type: picture.type }));
  const canvas = document.createElement('canvas');
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.getContext('2d').drawImage(bitmap, 0, 0);
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  return new Uint8Array(await blob.arrayBuffer());
}

// ---------------------------------------------------------------------------------------------
// Showing the document.

const TEXT_FIELDS = [
  ['nickname', 'Nickname', 'input'],
  ['description', 'Description', 'textarea', 6],
  ['personality', 'Personality', 'textarea', 3],
  ['scenario', 'Scenario', 'textarea', 3],
  ['first_mes', 'First message (greeting 0)', 'textarea', 5],
  ['mes_example', 'Example messages', 'textarea', 5],
  ['system_prompt', 'System prompt', 'textarea', 3],
  ['post_history_instructions', 'Post-history instructions', 'textarea', 2],
  ['creator_notes', 'Creator notes', 'textarea', 3],
  ['creator', 'Creator', 'input'],
  ['character_version', 'Character version', 'input'],
];

const testId = (key) => `field-${key.replace(/_/g, '-')}`;

/** A text field bound to `path`; `key` names its test id and token badge. */
function textField(path, label, kind, rows, key) {
  const value = getAt(path);
  const attrs = {
    'data-testid': key ? testId(key) : undefined,
    'data-field': pathText(path),
    spellcheck: kind === 'textarea' ? 'true' : undefined,
  };
  const input = kind === 'textarea' ? el('textarea', { ...attrs, rows: String(rows || 3) }) : el('input', { ...attrs, type: 'text' });
  input.value = typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
  input.addEventListener('input', () => {
    const before = getAt(path);
    const v = kind === 'textarea' ? fromTextarea(before, input.value) : input.value;
    edit(path, v, { merge: true });
    countInto(input.parentElement.querySelector('.tok'), v);
  });
  const badge = el('span', { class: 'tok' });
  countInto(badge, typeof value === 'string' ? value : '');
  return el('label', { class: 'field' }, el('span', { class: 'label' }, label, ' ', badge), input);
}

function renderDocument({ keepScroll = false } = {}) {
  const y = window.scrollY;
  const name = $('#card-name');
  const nameValue = (S.kind === 'card' ? S.doc.data.name : S.doc.name) || '';
  if (name.value !== nameValue) name.value = nameValue;
  countInto($('[data-tok=name]'), nameValue);
  $('#file-info').textContent = describeFile();
  renderFields();
  renderLore();
  updateNotes();
  setDownloadButtons();
  runTester();
  if (keepScroll) window.scrollTo(0, y);
}

function describeFile() {
  const size = S.bytes ? `${S.bytes.length.toLocaleString('en')} bytes` : '';
  if (S.kind === 'lorebook') return `${S.fileName} · lorebook · ${size}`;
  return `${S.fileName} · ${S.doc.spec} ${S.doc.spec_version || ''} · ${size}`;
}

function renderFields() {
  const box = $('#fields');
  box.replaceChildren();
  if (S.kind !== 'card') {
    box.append(textField(['description'], 'Description', 'textarea', 3, 'description'));
    return;
  }
  const d = S.doc.data;
  for (const [key, label, kind, rows] of TEXT_FIELDS) {
    if (key === 'nickname' && d.nickname === undefined) {
      box.append(textField(['data', key], `${label} (not set)`, kind, rows, key));
      continue;
    }
    box.append(textField(['data', key], label, kind, rows, key));
    if (key === 'first_mes') {
      box.append(greetingList('alternate_greetings', 'Alternate greetings', 1));
      box.append(greetingList('group_only_greetings', 'Group-only greetings', 0));
    }
    if (key === 'creator_notes') box.append(multilingual());
  }
  box.append(tagsField());
  box.append(datesField());
  if (Array.isArray(d.source) && d.source.length) {
    box.append(el('div', { class: 'field' }, el('span', { class: 'label', text: 'Source' }),
      el('ul', {}, ...d.source.map((s) => el('li', { text: String(s) })))));
  }
  box.append(assetsView());
  box.append(el('div', { class: 'field', 'data-field': 'data.extensions' }, el('span', { class: 'label', text: 'Extensions' }), tree(d.extensions, 'extensions')));
}

/** Greetings with their numbers: edit, add, remove, move. */
function greetingList(key, label, firstNumber) {
  const path = ['data', key];
  const list = Array.isArray(getAt(path)) ? getAt(path) : [];
  const box = el('div', { class: 'field', 'data-field': pathText(path), 'data-testid': testId(key) });
  const redraw = () => box.replaceWith(greetingList(key, label, firstNumber));
  const one = label.toLowerCase().replace(/s$/, '');
  box.append(el('span', { class: 'label' }, `${label} (${list.length})`));
  list.forEach((g, i) => {
    const p = [...path, i];
    const ta = el('textarea', { rows: '3', 'data-field': pathText(p), 'data-testid': 'greeting', 'aria-label': `${one} ${i + firstNumber}` });
    ta.value = typeof g === 'string' ? g : '';
    const badge = el('span', { class: 'tok' });
    countInto(badge, ta.value);
    ta.addEventListener('input', () => {
      const v = fromTextarea(getAt(p), ta.value);
      edit(p, v, { merge: true });
      countInto(badge, v);
    });
    const move = (to) => {
      const next = list.slice();
      const [item] = next.splice(i, 1);
      next.splice(to, 0, item);
      edit(path, next, { redraw });
    };
    box.append(el('div', { class: 'list-item' },
      el('span', { class: 'num', text: `#${i + firstNumber}` }), ta, badge,
      el('div', { class: 'tools' },
        el('button', { type: 'button', text: '↑', title: 'Move up', 'aria-label': `Move ${one} ${i + firstNumber} up`, disabled: i === 0, on: { click: () => move(i - 1) } }),
        el('button', { type: 'button', text: '↓', title: 'Move down', 'aria-label': `Move ${one} ${i + firstNumber} down`, disabled: i === list.length - 1, on: { click: () => move(i + 1) } }),
        el('button', { type: 'button', text: '✕', title: 'Remove', 'aria-label': `Remove ${one} ${i + firstNumber}`, on: { click: () => { const next = list.slice(); next.splice(i, 1); edit(path, next, { redraw }); } } }))));
  });
  box.append(el('button', { type: 'button', text: `Add ${one}`, 'data-testid': `add-${key.replace(/_/g, '-').replace(/s$/, '')}`,
    on: { click: () => edit(path, [...list, ''], { redraw: () => { redraw(); focusPath(pathText([...path, list.length])); } }) } }));
  return box;
}

function multilingual() {
  const path = ['data', 'creator_notes_multilingual'];
  const notes = getAt(path);
  const box = el('div', { class: 'field', 'data-field': pathText(path) });
  if (!notes || typeof notes !== 'object') return box;
  box.append(el('span', { class: 'label', text: 'Creator notes by language' }));
  for (const lang of Object.keys(notes)) {
    box.append(textField([...path, lang], `Creator notes (${lang})`, 'textarea', 2));
  }
  return box;
}

function tagsField() {
  const path = ['data', 'tags'];
  const tags = Array.isArray(getAt(path)) ? getAt(path) : [];
  const input = el('input', { type: 'text', 'data-testid': 'field-tags', 'data-field': pathText(path), placeholder: 'comma, separated' });
  input.value = tags.join(', ');
  input.addEventListener('input', () => {
    edit(path, input.value.split(',').map((t) => t.trim()).filter((t) => t.length > 0), { merge: true });
  });
  return el('label', { class: 'field' }, el('span', { class: 'label', text: `Tags (${tags.length})` }), input);
}

function datesField() {
  const d = S.doc.data;
  const show = (v) => {
    if (typeof v !== 'number') return 'not set';
    const ms = v > 1e11 ? v : v * 1000; // shown either way; the validator says which the spec wants
    const date = new Date(ms);
    return Number.isNaN(date.getTime()) ? String(v) : `${date.toISOString().replace('.000Z', 'Z')} (${v})`;
  };
  return el('div', { class: 'field muted', 'data-field': 'data.creation_date' },
    el('span', { class: 'label', text: 'Dates' }),
    el('div', { 'data-field': 'data.creation_date', text: `Created: ${show(d.creation_date)}` }),
    el('div', { 'data-field': 'data.modification_date', text: `Modified: ${show(d.modification_date)}` }));
}

const IMAGE_EXT = new Set(['png', 'apng', 'jpg', 'jpeg', 'webp', 'gif', 'avif', 'bmp']);

function assetsView() {
  const d = S.doc.data;
  const box = el('div', { class: 'field', 'data-field': 'data.assets' });
  const assets = Array.isArray(d.assets) ? d.assets : [];
  box.append(el('span', { class: 'label', text: `Assets (${assets.length})` }));
  const grid = el('div', { class: 'assets', 'data-testid': 'assets' });
  const used = new Set();
  assets.forEach((a, i) => {
    if (!a || typeof a !== 'object') return;
    let file = fileOf(a.uri);
    let bytes = file ? file.bytes : null;
    if (file) used.add(file.path);
    if (!bytes && a.uri === 'ccdefault:' && S.picture) bytes = S.picture.bytes;
    const item = el('div', { class: 'asset', 'data-testid': 'asset', 'data-field': `data.assets[${i}]` });
    const ext = String(a.ext || '').toLowerCase();
    if (bytes && IMAGE_EXT.has(ext)) item.append(el('img', { src: objectUrl(bytes, sniff(bytes)), alt: String(a.name || '') }));
    item.append(el('div', { text: `${a.type} · ${a.name}${ext ? '.' + ext : ''}` }));
    item.append(el('div', { class: 'muted', text: bytes ? `${bytes.length.toLocaleString('en')} bytes` : String(a.uri || '') }));
    grid.append(item);
  });
  for (const f of S.files) {
    if (used.has(f.path)) continue;
    grid.append(el('div', { class: 'asset', 'data-testid': 'asset' },
      el('div', { text: f.path }), el('div', { class: 'muted', text: `other file · ${f.bytes.length.toLocaleString('en')} bytes` })));
  }
  box.append(grid);
  return box;
}

/** A collapsible tree of a JSON value (read-only), bounded in size. */
function tree(value, label) {
  let budget = MAX_TREE_NODES;
  const node = (v, key, depth) => {
    if (--budget < 0) return el('div', { class: 'leaf muted', text: '…' });
    if (v !== null && typeof v === 'object' && depth < 40) {
      const keys = Object.keys(v);
      const d = el('details', {}, el('summary', { text: `${key} ${Array.isArray(v) ? `[${keys.length}]` : `{${keys.length}}`}` }));
      if (depth === 0) d.open = true;
      for (const k of keys) {
        if (budget < 0) break;
        d.append(node(v[k], Array.isArray(v) ? `[${k}]` : k, depth + 1));
      }
      return d;
    }
    const text = typeof v === 'string' ? JSON.stringify(v.length > 2000 ? v.slice(0, 2000) + '…' : v) : JSON.stringify(v);
    return el('div', { class: 'leaf', text: `${key}: ${text}` });
  };
  return el('div', { class: 'tree', 'data-testid': 'extensions' }, node(value === undefined ? {} : value, label, 0));
}

// ---------------------------------------------------------------------------------------------
// The lorebook table and the entry editor.

function keysText(keys) {
  return Array.isArray(keys) ? keys.join(', ') : '';
}

function splitKeys(text) {
  return text.split(',').map((k) => k.trim()).filter((k) => k.length > 0);
}

function decoratorsText(decorators) {
  if (!Array.isArray(decorators) || decorators.length === 0) return '';
  try {
    return ccv3.serializeDecorators(decorators, '').replace(/\n+$/, '');
  } catch (_) {
    return '';
  }
}

function renderLore() {
  const b = book();
  const table = $('#lore-table');
  const body = table.tBodies[0];
  const list = entries();
  table.dataset.count = String(list.length);
  table.parentElement.classList.toggle('big', list.length > 20);
  $('#add-book').hidden = !(S.kind === 'card' && !b);
  $('#add-entry').hidden = !b;
  $('#lore-summary').textContent = b ? `${list.length} entries${b.name ? ` · ${b.name}` : ''}` : '(none)';
  renderBookFields();
  const pages = Math.max(1, Math.ceil(list.length / PAGE));
  if (S.page >= pages) S.page = pages - 1;
  const start = S.page * PAGE;
  const rows = [];
  for (let i = start; i < Math.min(list.length, start + PAGE); i++) rows.push(entryRow(list[i], i));
  body.replaceChildren(...rows);
  const nav = $('#lore-pages');
  nav.replaceChildren();
  if (pages > 1) {
    const go = (p) => { S.page = p; renderLore(); };
    nav.append(el('button', { type: 'button', text: '‹ Previous', disabled: S.page === 0, on: { click: () => go(S.page - 1) } }));
    nav.append(el('span', { class: 'muted', text: `Entries ${start + 1}–${Math.min(list.length, start + PAGE)} of ${list.length} (page ${S.page + 1} of ${pages})` }));
    nav.append(el('button', { type: 'button', text: 'Next ›', disabled: S.page >= pages - 1, on: { click: () => go(S.page + 1) } }));
  }
  renderEntryEditor();
}

function renderBookFields() {
  const box = $('#lore-book-fields');
  box.replaceChildren();
  const b = book();
  if (!b || S.kind !== 'card') return;
  box.append(textField([...bookPath(), 'name'], 'Book name', 'input'));
}

function entryRow(e, i) {
  const p = [...bookPath(), 'entries', i];
  const at = (k) => pathText([...p, k]);
  const tr = el('tr', { 'data-testid': 'lore-entry', 'data-index': String(i), 'data-field': pathText(p), class: i === S.selected ? 'selected' : undefined });
  if (!e || typeof e !== 'object') {
    tr.append(el('td', { text: String(i) }), el('td', { colspan: '8', text: 'not an entry' }));
    return tr;
  }
  const enabled = el('input', { type: 'checkbox', 'data-field': at('enabled'), 'aria-label': `Entry ${i} enabled` });
  enabled.checked = e.enabled !== false;
  enabled.addEventListener('change', () => edit([...p, 'enabled'], enabled.checked));
  const name = el('input', { type: 'text', 'data-field': at('name'), 'aria-label': `Entry ${i} name`, placeholder: e.comment ? String(e.comment) : '' });
  name.value = typeof e.name === 'string' ? e.name : '';
  name.addEventListener('input', () => edit([...p, 'name'], name.value, { merge: true }));
  const keys = el('input', { type: 'text', 'data-field': at('keys'), 'aria-label': `Entry ${i} keys`, title: 'Keys, comma separated' });
  keys.value = keysText(e.keys);
  keys.addEventListener('input', () => edit([...p, 'keys'], splitKeys(keys.value), { merge: true }));
  const position = el('input', { type: 'text', list: 'positions', size: '10', 'data-field': at('position'), 'aria-label': `Entry ${i} position` });
  position.value = typeof e.position === 'string' ? e.position : '';
  position.addEventListener('input', () => edit([...p, 'position'], position.value === '' ? undefined : position.value, { merge: true }));
  const order = el('input', { type: 'number', 'data-field': at('insertion_order'), 'aria-label': `Entry ${i} order` });
  order.value = typeof e.insertion_order === 'number' ? String(e.insertion_order) : '';
  order.addEventListener('input', () => {
    const n = Number(order.value);
    if (order.value !== '' && Number.isFinite(n)) edit([...p, 'insertion_order'], n, { merge: true });
  });
  const tokens = el('td', { class: 'tok' });
  const list = () => entries().slice();
  tr.append(
    el('td', { text: String(i) }),
    el('td', {}, enabled),
    el('td', {}, name),
    el('td', {}, keys),
    el('td', {}, position),
    el('td', {}, order),
    el('td', { 'data-field': at('decorators') }, el('code', { text: decoratorsText(e.decorators) })),
    tokens,
    el('td', {},
      el('button', { type: 'button', text: 'Edit', 'aria-label': `Edit entry ${i}`, on: { click: () => { S.selected = i; renderLore(); focusPath(at('content')); } } }),
      el('button', { type: 'button', text: '↑', 'aria-label': `Move entry ${i} up`, disabled: i === 0, on: { click: () => moveEntry(i, i - 1) } }),
      el('button', { type: 'button', text: '✕', 'aria-label': `Remove entry ${i}`, on: { click: () => { const next = list(); next.splice(i, 1); if (S.selected === i) S.selected = -1; edit([...bookPath(), 'entries'], next, { redraw: renderLore }); } } })),
  );
  countInto(tokens, typeof e.content === 'string' ? e.content : '');
  return tr;
}

/** Shows entry `i` in the entry editor (its page of the table, its content focused). */
function selectEntry(i) {
  if (!Number.isInteger(i) || i < 0 || i >= entries().length) return;
  S.selected = i;
  S.page = Math.floor(i / PAGE);
  renderLore();
  focusPath(pathText([...bookPath(), 'entries', i, 'content']));
}

function moveEntry(from, to) {
  const next = entries().slice();
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item);
  if (S.selected === from) S.selected = to;
  edit([...bookPath(), 'entries'], next, { redraw: renderLore });
}

function addEntry() {
  const list = entries();
  const order = list.reduce((m, e) => (e && typeof e.insertion_order === 'number' && e.insertion_order > m ? e.insertion_order : m), 0);
  // The fields the spec requires of an entry, empty.
  const entry = { keys: [], content: '', extensions: {}, enabled: true, insertion_order: order + 10, use_regex: false, decorators: [] };
  S.selected = list.length;
  S.page = Math.floor(list.length / PAGE);
  edit([...bookPath(), 'entries'], [...list, entry], { redraw: () => { renderLore(); focusPath(pathText([...bookPath(), 'entries', list.length, 'keys'])); } });
}

function addBook() {
  edit(['data', 'character_book'], { extensions: {}, entries: [] }, { redraw: renderLore });
}

function renderEntryEditor() {
  const box = $('#entry-editor');
  const list = entries();
  const i = S.selected;
  if (i < 0 || i >= list.length || !list[i] || typeof list[i] !== 'object') {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const e = list[i];
  const p = [...bookPath(), 'entries', i];
  box.hidden = false;
  box.replaceChildren(el('h3', { text: `Entry ${i}${e.name ? `: ${e.name}` : ''}` }));
  box.append(textField([...p, 'content'], 'Content', 'textarea', 6, 'entry-content'));
  const dec = el('textarea', { rows: '3', 'data-field': pathText([...p, 'decorators']), 'data-testid': 'entry-decorators', spellcheck: 'false' });
  dec.value = decoratorsText(e.decorators);
  const decNote = el('span', { class: 'muted' });
  dec.addEventListener('input', () => {
    try {
      const parsed = ccv3.parseDecorators(dec.value.replace(/\s+$/, '') + '\n');
      decNote.textContent = parsed.content.trim() ? 'Lines that are not decorators are ignored here.' : '';
      edit([...p, 'decorators'], parsed.decorators, { merge: true });
      const cell = document.querySelector(`tr[data-index="${i}"] td[data-field$=".decorators"] code`);
      if (cell) cell.textContent = decoratorsText(parsed.decorators);
    } catch (err) {
      decNote.textContent = err.message;
    }
  });
  box.append(el('label', { class: 'field' }, el('span', { class: 'label', text: 'Decorators (one @@ line each)' }), dec, decNote));
  const sec = el('input', { type: 'text', 'data-field': pathText([...p, 'secondary_keys']) });
  sec.value = keysText(e.secondary_keys);
  sec.addEventListener('input', () => edit([...p, 'secondary_keys'], splitKeys(sec.value), { merge: true }));
  box.append(el('label', { class: 'field' }, el('span', { class: 'label', text: 'Secondary keys (comma separated)' }), sec));
  box.append(textField([...p, 'comment'], 'Comment', 'input'));
  const flags = el('div', { class: 'buttons' });
  for (const [k, label] of [['constant', 'Constant'], ['selective', 'Selective'], ['case_sensitive', 'Case sensitive'], ['use_regex', 'Regex keys']]) {
    const c = el('input', { type: 'checkbox', 'data-field': pathText([...p, k]) });
    c.checked = e[k] === true;
    c.addEventListener('change', () => edit([...p, k], c.checked));
    flags.append(el('label', {}, c, ` ${label}`));
  }
  box.append(flags);
  box.append(el('button', { type: 'button', text: 'Close', on: { click: () => { S.selected = -1; renderLore(); } } }));
}

// ---------------------------------------------------------------------------------------------
// Diagnostics.

function diagnosticItem(d) {
  const li = el('li', {
    'data-testid': 'diagnostic', 'data-severity': d.severity, 'data-code': d.code, 'data-path': d.path,
    tabindex: '0', role: 'button', title: d.path ? `Go to ${d.path}` : undefined,
  }, el('span', { class: 'sev', text: d.severity }), ' ', el('code', { text: d.code }), ' ', el('code', { text: d.path }), ': ', d.message);
  const go = () => focusPath(d.path);
  li.addEventListener('click', go);
  li.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); go(); } });
  return li;
}

const sameFinding = (a, b) => a.severity === b.severity && a.code === b.code && a.path === b.path && a.message === b.message;

function validate(input) {
  try {
    return S.kind === 'card' ? ccv3.validateCard(input) : ccv3.validateLorebook(input);
  } catch (e) {
    return [{ severity: 'error', code: e.code || 'error', path: '', message: e.message }];
  }
}

/**
 * Validates the file as opened (`bytes`: exactly what `ccv3 validate --json` gives), or the
 * edited object. The findings only the file has (what the reader repaired, container problems)
 * stay listed after edits, until the card is written again.
 */
function validateNow(bytes) {
  if (!S.doc) return;
  let list;
  if (bytes) {
    list = validate(bytes);
    const unedited = validate(S.doc);
    S.readerFindings = list.filter((f) => !unedited.some((g) => sameFinding(f, g)));
  } else {
    const current = validate(S.doc);
    list = [...S.readerFindings.filter((f) => !current.some((g) => sameFinding(f, g))), ...current];
  }
  const ol = $('#diagnostics');
  ol.replaceChildren(...list.map(diagnosticItem));
  const count = (s) => list.filter((d) => d.severity === s).length;
  const summary = $('#diag-summary');
  summary.textContent = list.length ? `${count('error')} errors, ${count('warning')} warnings, ${count('info')} notes` : 'none: the card follows the spec';
  summary.className = list.length ? 'muted' : 'clean';
}

/** Goes to the field a JSON path names (the longest part of it the page shows). */
function focusPath(path, flash = true) {
  if (!path && path !== '') return;
  const parts = [];
  const re = /([^.[\]]+)|\[(\d+)\]/g;
  let m;
  while ((m = re.exec(path)) !== null) parts.push(m[2] !== undefined ? Number(m[2]) : m[1]);
  const ei = parts.indexOf('entries');
  if (ei >= 0 && typeof parts[ei + 1] === 'number') {
    const i = parts[ei + 1];
    const page = Math.floor(i / PAGE);
    const wantsEditor = parts.length > ei + 2 && !['keys', 'name', 'enabled', 'insertion_order', 'position'].includes(parts[ei + 2]);
    if (page !== S.page || (wantsEditor && S.selected !== i)) {
      S.page = page;
      if (wantsEditor) S.selected = i;
      renderLore();
    }
  }
  for (let n = parts.length; n >= 0; n--) {
    const key = pathText(parts.slice(0, n));
    const target = key === '' ? null : document.querySelector(`[data-field="${CSS.escape(key)}"]`);
    if (!target) continue;
    const details = target.closest('details');
    if (details) details.open = true;
    target.scrollIntoView({ block: 'center' });
    if (typeof target.focus === 'function' && /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(target.tagName)) target.focus({ preventScroll: true });
    if (flash) {
      target.classList.remove('flash');
      void target.offsetWidth;
      target.classList.add('flash');
    }
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// Token counts.

function countInto(node, text) {
  if (!node) return;
  if (!S.tokensReady) {
    node.textContent = '';
    node.dataset.pending = text;
    return;
  }
  try {
    node.textContent = `${ccv3.countTokens(text, S.tokenizer).toLocaleString('en')} tok`;
    node.title = `${S.tokenizer}_base tokens`;
  } catch (_) {
    node.textContent = '';
  }
}

function recountAll() {
  if (!S.doc) return;
  renderDocument({ keepScroll: true });
}

// The vocabulary is fetched when the page starts but registered (a few hundred milliseconds of
// work) only once a file is shown, so that opening a file on a fresh page is not kept waiting.
const vocabFetches = {};

function fetchVocab(name) {
  if (!vocabFetches[name]) {
    vocabFetches[name] = fetch(new URL(`./pkg/vocab/${name}_base.vocab`, import.meta.url))
      .then((r) => (r.ok ? r.arrayBuffer() : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then((b) => new Uint8Array(b));
    vocabFetches[name].catch(() => { delete vocabFetches[name]; });
  }
  return vocabFetches[name];
}

async function loadTokens(name) {
  status(`Loading the ${name}_base tokenizer…`);
  try {
    await ccv3.loadTokenizer(name, await fetchVocab(name));
    S.tokenizer = name;
    S.tokensReady = true;
    lintPanel.tokensChanged();
    $('#tokenizer-name').textContent = `${name}_base`;
    status(`Tokenizer ${name}_base ready`);
    if (S.compiled) S.compiled.free();
    S.compiled = null;
    recountAll();
  } catch (e) {
    status(`Token counts unavailable: ${e.message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The lorebook tester.

/** The tester's chat: a message per line, `Name: text`; other lines continue the message. */
function chatOf(text, charNames, userName) {
  const chat = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^([^:\n]{1,64}):\s?(.*)$/.exec(line);
    if (m && !/^\s/.test(m[1])) {
      const name = m[1].trim();
      const lower = name.toLowerCase();
      const role = charNames.includes(lower) ? 'assistant' : lower === 'system' ? 'system' : 'user';
      chat.push({ role, name, content: m[2] });
    } else if (chat.length) {
      chat[chat.length - 1].content += `\n${line}`;
    } else if (line.trim()) {
      chat.push({ role: 'user', name: userName, content: line });
    }
  }
  return chat;
}

function testerChat() {
  const d = S.kind === 'card' ? S.doc.data : {};
  const names = [d.name, d.nickname].filter((n) => typeof n === 'string' && n).map((n) => n.toLowerCase());
  return chatOf($('#chat-input').value, names, $('#user-name').value || 'User');
}

let testerQueued = false;

let scanTimer = 0;

function runTester() {
  if (!S.compiled) {
    // The book changed: compile again once typing pauses (a big book takes a moment).
    clearTimeout(scanTimer);
    scanTimer = setTimeout(scanNow, entries().length > 500 ? 300 : 0);
  } else if (!testerQueued) {
    testerQueued = true;
    queueMicrotask(() => {
      testerQueued = false;
      scanNow();
    });
  }
  clearTimeout(promptTimer);
  promptTimer = setTimeout(promptNow, 300);
}

function scanNow() {
  const out = $('#lore-activated');
  const rejected = $('#lore-rejected');
  $('#turn').textContent = `turn ${S.turn}`;
  if (!S.doc) return;
  const b = book();
  if (!b || !entries().length) {
    out.replaceChildren(el('li', { class: 'muted', text: 'No lorebook entries.' }));
    rejected.replaceChildren();
    return;
  }
  if (!S.tokensReady) {
    out.replaceChildren(el('li', { class: 'muted', text: 'Loading the tokenizer…' }));
    return;
  }
  const start = performance.now();
  const chat = testerChat();
  const t0 = performance.now();
  let result;
  try {
    if (!S.compiled) S.compiled = ccv3.compileLorebooks([b], { tokenizer: S.tokenizer });
    // Why the others did not activate is asked for only while that list is open.
    result = ccv3.scanLorebook({ books: S.compiled, chat, state: S.turnState, rejected: $('#rejected-box').open });
  } catch (e) {
    out.replaceChildren(el('li', { class: 'error', text: e.message }));
    return;
  }
  const ms = performance.now() - t0;
  S.lastScan = result;
  const scanTime = $('#scan-time');
  scanTime.textContent = `scan ${ms.toFixed(1)} ms · ${result.tokens} tokens of lore`;
  scanTime.dataset.ms = ms.toFixed(2);
  const list = entries();
  const label = (index, name) => {
    const e = list[index];
    const key = e && Array.isArray(e.keys) && e.keys.length ? e.keys[0] : '';
    return name || (e && e.name) || key || `entry ${index}`;
  };
  out.replaceChildren(...result.activated.map((a) => el('li', { 'data-testid': 'activated-entry', 'data-index': String(a.index) },
    el('strong', { text: label(a.index, a.name) }),
    ` (#${a.index}${a.name && list[a.index] && list[a.index].keys && list[a.index].keys[0] ? `, key ${list[a.index].keys[0]}` : ''}) · ${a.position}${a.depth !== undefined && a.depth !== null ? ` depth ${a.depth}` : ''} · ${a.reason}`)));
  if (!result.activated.length) out.append(el('li', { class: 'muted', text: 'Nothing activated.' }));
  $('#rejected-count').textContent = $('#rejected-box').open ? `(${result.rejected.length})` : `(${Math.max(0, entries().length - result.activated.length)})`;
  S.rejectedLabel = label;
  if ($('#rejected-box').open) renderRejected();
  else rejected.replaceChildren();
  // From the chat to the list shown (the scan plus drawing its result).
  scanTime.dataset.totalMs = (performance.now() - start).toFixed(2);
}

/** Why the other entries did not activate (drawn when the list is open). */
function renderRejected() {
  const rejected = $('#lore-rejected');
  const result = S.lastScan;
  if (!result) return;
  const label = S.rejectedLabel;
  rejected.replaceChildren(...result.rejected.slice(0, MAX_REJECTED).map((r) => el('li', { 'data-index': String(r.index) },
    el('strong', { text: label(r.index, r.name) }), ` (#${r.index}): ${r.reason}`)));
  if (result.rejected.length > MAX_REJECTED) rejected.append(el('li', { class: 'muted', text: `and ${result.rejected.length - MAX_REJECTED} more` }));
}

function promptNow() {
  const box = $('#prompt');
  const total = $('#prompt-tokens');
  if (!S.doc || S.kind !== 'card' || !S.tokensReady) {
    box.replaceChildren(el('p', { class: 'muted', text: S.kind === 'lorebook' ? 'Open a card to assemble a prompt.' : '' }));
    total.textContent = '';
    $('#card-total').textContent = S.kind === 'lorebook' ? 'no card' : '…';
    return;
  }
  let r;
  try {
    r = ccv3.buildPrompt({ card: S.doc, chat: testerChat(), user: $('#user-name').value || 'User', state: S.turnState, tokenizer: S.tokenizer });
  } catch (e) {
    box.replaceChildren(el('p', { class: 'error', text: e.message }));
    total.textContent = '';
    return;
  }
  total.textContent = `${r.tokens.toLocaleString('en')} tokens (${S.tokenizer}_base)`;
  $('#card-total').textContent = `${r.tokens.toLocaleString('en')} tokens`;
  total.dataset.tokens = String(r.tokens);
  const items = r.messages.map((m) => el('div', { class: 'msg' }, el('div', { class: 'role', text: m.role }), m.content));
  if (r.cut && r.cut.length) items.push(el('p', { class: 'muted', text: `Cut by the context budget: ${r.cut.map((c) => `${c.label} (${c.tokens} tokens): ${c.reason}`).join('; ')}` }));
  box.replaceChildren(...items);
}

function nextTurn() {
  if (!S.lastScan) return;
  S.turnState = S.lastScan.state;
  S.turn++;
  runTester();
}

function resetTurns() {
  S.turnState = null;
  S.turn = 1;
  runTester();
}

// ---------------------------------------------------------------------------------------------
// Downloads.

const BASE = () => (S.fileName || 'card').replace(/\.(png|apng|json|charx|webp|jpe?g|lorebook)$/i, '');

function setDownloadButtons() {
  const card = S.kind === 'card';
  for (const f of ['png', 'charx', 'json-v3', 'json-v2']) $(`[data-format="${f}"]`).disabled = !card;
  const hasBook = !!book();
  for (const f of ['lorebook-v3', 'worldinfo']) $(`[data-format="${f}"]`).disabled = !hasBook;
}

/** What each format cannot carry of this card, said beside the buttons. */
function notes() {
  const out = [];
  if (!S.doc) return out;
  if (S.kind === 'lorebook') {
    out.push('This is a lorebook: it downloads as lorebook_v3 or SillyTavern World Info.');
    out.push('World Info: fields and decorators it has no place for are dropped.');
    return out;
  }
  const d = S.doc.data;
  const type = S.picture ? S.picture.type : null;
  if (!S.picture) out.push('PNG: the card has no picture; a plain placeholder image is used.');
  else if (type !== 'image/png') out.push(`PNG: the ${type.slice(6).toUpperCase()} portrait is converted to PNG${S.pngPicture ? '' : ' (converting…)'}.`);
  if (S.files.some((f) => !/^assets\//.test(f.path) && !S.doc.data.assets?.some((a) => a && typeof a.uri === 'string' && a.uri.endsWith(f.path)))) {
    out.push('PNG and JSON: files of the CHARX no asset points at (such as module.risum) are kept by CHARX only.');
  }
  out.push('V3 JSON: no picture or embedded assets (their URIs stay).');
  const v3only = ['nickname', 'creator_notes_multilingual', 'source', 'group_only_greetings', 'creation_date', 'modification_date', 'assets']
    .filter((k) => d[k] !== undefined && !(Array.isArray(d[k]) && d[k].length === 0));
  let v2 = 'V2 JSON: no picture or assets; creator_notes gets the spec\'s V3 notice';
  if (v3only.length) v2 += `; V3-only fields (${v3only.join(', ')}) are kept in data.extensions.ccv3, which V2 apps ignore`;
  if (entries().some((e) => e && Array.isArray(e.decorators) && e.decorators.length)) v2 += '; decorators leave entry contents (kept in their extensions.ccv3)';
  out.push(`${v2}.`);
  if (book()) out.push('World Info: fields and decorators it has no place for are dropped.');
  return out;
}

let notesShown = null;

function updateNotes() {
  // Most edits leave the notes as they were: then the list stays (no layout of the page).
  const list = notes();
  const key = list.join('\n');
  if (key === notesShown) return;
  notesShown = key;
  $('#download-notes').replaceChildren(...list.map((n) => el('li', { text: n })));
}

function download(format) {
  if (!S.doc) return;
  let bytes;
  let name;
  try {
    if (format === 'png') {
      bytes = ccv3.writeCard(S.doc, { format: 'png', image: S.pngPicture || undefined, files: S.files });
      name = `${BASE()}.png`;
    } else if (format === 'charx') {
      bytes = ccv3.writeCard(S.doc, { format: 'charx', image: S.pngPicture || undefined, files: S.files });
      name = `${BASE()}.charx`;
    } else if (format === 'json-v3') {
      bytes = ccv3.writeCard(S.doc, { format: 'json' });
      name = `${BASE()}.json`;
    } else if (format === 'json-v2') {
      bytes = ccv3.writeCard(S.doc, { format: 'json-v2' });
      name = `${BASE()}.v2.json`;
    } else if (format === 'lorebook-v3') {
      bytes = ccv3.writeLorebook(book(), { format: 'lorebook_v3' });
      name = `${BASE()}.lorebook.json`;
    } else if (format === 'worldinfo') {
      bytes = ccv3.writeLorebook(book(), { format: 'worldinfo' });
      name = `${BASE()}.worldinfo.json`;
    } else return;
  } catch (e) {
    showError(`Cannot write ${format}: ${e.message}`);
    return;
  }
  const url = URL.createObjectURL(new Blob([bytes], { type: format === 'png' ? 'image/png' : format === 'charx' ? 'application/zip' : 'application/json' }));
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  status(`Downloaded ${name} (${bytes.length.toLocaleString('en')} bytes)`);
}

// ---------------------------------------------------------------------------------------------
// Drafts and recent files (IndexedDB, see store.js).

async function saveDraft() {
  if (!S.doc || !S.edited) return;
  try {
    await store.saveDraft({ id: S.draftId, kind: S.kind, doc: S.doc, fileName: S.fileName, bytes: S.bytes, time: Date.now() });
    status('Draft saved in this browser');
    document.body.dataset.draftSaved = String(Date.now());
  } catch (e) {
    status(`Draft not saved: ${e && e.message}`);
  }
}

async function renderRecent() {
  const ul = $('#recent');
  let list = [];
  try {
    list = await store.recent();
  } catch (_) {
    // IndexedDB unavailable (private mode): no list.
  }
  if (!list.length) return;
  ul.replaceChildren(...list.map((r) => el('li', {},
    el('button', { type: 'button', text: r.fileName, 'data-testid': 'recent-file', on: { click: async () => {
      const bytes = await store.recentBytes(r.key);
      if (bytes) openBytes(bytes, r.fileName);
    } } }), ` ${new Date(r.time).toLocaleString()} · ${r.size.toLocaleString('en')} bytes`)));
}

async function offerDraft() {
  let d = null;
  try {
    d = await store.latestDraft();
  } catch (_) {
    return;
  }
  if (!d) return;
  const box = $('#draft-box');
  box.hidden = false;
  const name = d.kind === 'card' ? d.doc?.data?.name : d.doc?.name;
  box.replaceChildren(el('p', {}, `Unsaved draft: ${name || d.fileName} (${d.fileName}, ${new Date(d.time).toLocaleString()}). `,
    el('button', { type: 'button', text: 'Restore', 'data-testid': 'restore-draft', on: { click: () => openBytes(d.bytes, d.fileName, { draft: d }) } }), ' ',
    el('button', { type: 'button', text: 'Discard', on: { click: async () => { await store.deleteDraft(d.id); box.hidden = true; } } })));
  // Coming back after a reload: the draft is restored at once.
  if (sessionStorage.getItem('ccv3-draft') === d.id) openBytes(d.bytes, d.fileName, { draft: d });
}

// ---------------------------------------------------------------------------------------------
// Start.

function wire() {
  const input = $('#file-input');
  input.addEventListener('change', () => {
    const f = input.files && input.files[0];
    input.value = '';
    openFile(f);
  });
  $('#card-name').addEventListener('input', () => {
    if (!S.doc) return;
    const path = S.kind === 'card' ? ['data', 'name'] : ['name'];
    edit(path, $('#card-name').value, { merge: true });
    countInto($('[data-tok=name]'), $('#card-name').value);
  });
  document.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('over'); });
  document.addEventListener('dragleave', (e) => { if (!e.relatedTarget) document.body.classList.remove('over'); });
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    document.body.classList.remove('over');
    const f = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
    if (f && !input.disabled) openFile(f);
  });
  $('#welcome').addEventListener('keydown', (e) => { if (e.key === 'Enter') input.click(); });
  $('#undo').addEventListener('click', undo);
  $('#redo').addEventListener('click', redo);
  $('#add-entry').addEventListener('click', addEntry);
  $('#add-book').addEventListener('click', addBook);
  $('#chat-input').addEventListener('input', runTester);
  $('#user-name').addEventListener('input', runTester);
  $('#next-turn').addEventListener('click', nextTurn);
  $('#reset-turns').addEventListener('click', resetTurns);
  $('#rejected-box').addEventListener('toggle', () => { if ($('#rejected-box').open) scanNow(); });
  $('#tokenizer').addEventListener('change', () => loadTokens($('#tokenizer').value));
  for (const b of document.querySelectorAll('[data-format]')) b.addEventListener('click', () => download(b.dataset.format));
  document.addEventListener('keydown', (e) => {
    const mod = e.ctrlKey || e.metaKey;
    if (!mod) return;
    const k = e.key.toLowerCase();
    if (k === 'o') { e.preventDefault(); input.click(); } else if (k === 'z' && !e.shiftKey) { e.preventDefault(); undo(); } else if (k === 'y' || (k === 'z' && e.shiftKey)) { e.preventDefault(); redo(); }
  });
  window.addEventListener('beforeunload', () => {
    if (S.edited && S.draftId) sessionStorage.setItem('ccv3-draft', S.draftId);
    else sessionStorage.removeItem('ccv3-draft');
  });
}

async function start() {
  wire();
  try {
    await init();
  } catch (e) {
    showError(`The page could not start ccv3 (WebAssembly): ${e && e.message}`);
    status('Not ready');
    return;
  }
  $('#version').textContent = ccv3.version;
  $('#file-input').disabled = false;
  status('Ready: open a card or a lorebook');
  renderRecent();
  offerDraft();
  if ('serviceWorker' in navigator && location.protocol !== 'file:') {
    navigator.serviceWorker.register('sw.js').then(() => { $('#offline').textContent = 'works offline'; }, () => {});
  }
  fetchVocab('o200k').catch(() => {});
}

start();
