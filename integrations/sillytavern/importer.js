// The importer: any file ccv3 reads, converted in the browser into what SillyTavern imports
// natively (a V3 PNG card with its `chara` backfill, a CHARX when the card has images
// SillyTavern keeps, or a World Info JSON file), then handed to
// SillyTavern's own import inputs. ccv3's conversion notes are shown first; nothing is handed
// over unless every file converted.

const FIELD_FILES = { card: '#character_import_file', book: '#world_import_file' };

function safeName(name, fallback) {
    const n = String(name || '').replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_').trim();
    return n || fallback;
}

// SillyTavern 1.19's own CHARX import (src/charx.js, `mapCharXAssetsForStorage` and
// `persistCharXAssets`) keeps a card's embedded images: the main icon becomes the avatar,
// `emotion`/`expression` assets the character's expression sprites, `background` assets its
// backgrounds, other images its misc folder; it skips files that are not images.
const ST_IMAGE_EXT = new Set(['png', 'jpg', 'jpeg', 'webp', 'gif', 'apng', 'avif', 'bmp', 'jfif']);
const EMBEDDED = /^(embeded:\/\/|embedded:\/\/|__asset:)/;

function isPng(bytes) {
    return bytes && bytes.length > 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47;
}

/** Where SillyTavern keeps an embedded asset of a CHARX it imports, or null (not kept). */
function stPlaceOf(asset) {
    const ext = String(asset.ext || '').toLowerCase();
    if (!ST_IMAGE_EXT.has(ext)) return null;
    if (asset.type === 'icon' || asset.type === 'user_icon') return 'avatar';
    if (asset.type === 'emotion' || asset.type === 'expression') return 'expression sprite';
    if (asset.type === 'background') return 'character background';
    return 'misc asset folder';
}

/**
 * How a card goes to SillyTavern: a CHARX when it has embedded images beside its icon (its
 * CHARX import stores them), else a PNG whose image is the card's main icon; with a note for
 * each asset saying where it went or why it did not.
 */
function planCard(card, files) {
    const assets = Array.isArray(card.data.assets) ? card.data.assets : [];
    const byPath = new Map(files.map((f) => [f.path, f]));
    const fileOf = (a) => {
        const uri = String(a.uri || '');
        if (!EMBEDDED.test(uri)) return null;
        return byPath.get(uri.replace(EMBEDDED, '')) || null;
    };
    const icons = assets.filter((a) => a.type === 'icon' && fileOf(a));
    const icon = icons.find((a) => a.name === 'main') || icons[0] || null;
    const extra = assets.filter((a) => a !== icon && fileOf(a) && stPlaceOf(a) && stPlaceOf(a) !== 'avatar');
    const iconFile = icon ? fileOf(icon) : null;
    const format = extra.length || (iconFile && !isPng(iconFile.bytes)) ? 'charx' : 'png';
    const notes = [];
    for (const a of assets) {
        const label = `asset "${a.name}" (${a.type})`;
        if (a === icon) {
            notes.push(`${label}: the character's avatar`);
            continue;
        }
        const uri = String(a.uri || '');
        if (uri === 'ccdefault:' || uri === '') continue;
        if (!EMBEDDED.test(uri)) {
            notes.push(`${label} points outside the file (${uri.slice(0, 80)}): SillyTavern does not fetch it; it stays a link in the card`);
        } else if (!fileOf(a)) {
            notes.push(`${label}: its file is missing from the card and cannot be carried`);
        } else if (format === 'charx' && stPlaceOf(a)) {
            notes.push(`${label}: SillyTavern's ${stPlaceOf(a) === 'avatar' ? 'misc asset folder (a second icon)' : stPlaceOf(a)}`);
        } else {
            notes.push(`${label}: not carried (SillyTavern keeps only images, and only from a CHARX)`);
        }
    }
    return { format, image: format === 'png' && iconFile && isPng(iconFile.bytes) ? iconFile.bytes : undefined, notes };
}

/** Converts one file: {kind, file, notes} or throws an Error naming the problem. */
export function convertFile(ccv3, name, bytes) {
    const stem = name.replace(/\.[^.]*$/, '');
    let card = null;
    let cardError = null;
    try {
        card = ccv3.readCard(bytes);
    } catch (e) {
        cardError = e;
    }
    if (card) {
        const notes = ccv3.validateCard(bytes).map((d) => `${d.severity} ${d.code} at ${d.path}: ${d.message}`);
        let files = [];
        try {
            files = ccv3.readCardFiles(bytes);
        } catch (e) {
            notes.push(`the card's files could not be read (${e.message}); the card is imported without them`);
        }
        const plan = planCard(card, files);
        notes.push(...plan.notes);
        const out = ccv3.writeCard(card, plan.image ? { format: plan.format, files, image: plan.image } : { format: plan.format, files });
        const fileName = `${safeName(card.data.name, stem)}.${plan.format}`;
        const type = plan.format === 'png' ? 'image/png' : 'application/zip';
        return { kind: 'card', name: card.data.name, format: plan.format, file: new File([out], fileName, { type }), notes };
    }
    let book;
    try {
        book = ccv3.readLorebook(bytes);
    } catch (e) {
        throw new Error(`${name}: not a card (${cardError?.message}) nor a lorebook (${e.message})`);
    }
    const notes = ccv3.validateLorebook(bytes).map((d) => `${d.severity} ${d.code} at ${d.path}: ${d.message}`);
    const json = ccv3.writeLorebook(book, { format: 'worldinfo' });
    const fileName = `${safeName(book.name, stem)}.json`;
    return { kind: 'book', name: fileName.replace(/\.json$/, ''), file: new File([json], fileName, { type: 'application/json' }), notes };
}

/** Resolves once SillyTavern's handler of `input` is done with its last files (it clears the
 * input's value when it ends), or after `ms`: a second import handed over while the first
 * runs races it (its `selectImportedChar` then reads a character list being reloaded). */
async function idle(input, ms = 120_000) {
    const end = Date.now() + ms;
    while (input.value && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
}

async function handTo(selector, files) {
    const input = document.querySelector(selector);
    if (!input) throw new Error(`SillyTavern's import input ${selector} is missing`);
    await idle(input);
    const dt = new DataTransfer();
    for (const f of files) dt.items.add(f);
    input.files = dt.files;
    input.dispatchEvent(new Event('change', { bubbles: true }));
}

export function createImporter(context, ready) {
    const host = document.getElementById('rm_characters_block');
    if (!host) return;
    const label = document.createElement('label');
    label.className = 'ccv3-import menu_button';
    label.title = 'Import any card or lorebook file with ccv3';
    label.textContent = 'ccv3 import';
    const input = document.createElement('input');
    input.type = 'file';
    input.multiple = true;
    input.setAttribute('data-testid', 'ccv3-import');
    input.className = 'ccv3-import-input';
    label.append(input);
    host.prepend(label);

    input.addEventListener('change', async () => {
        const chosen = [...input.files];
        input.value = '';
        if (!chosen.length) return;
        let ccv3;
        try {
            ccv3 = await ready;
        } catch (e) {
            toastr.error(`ccv3 could not load: ${e.message}`);
            return;
        }
        const converted = [];
        try {
            for (const f of chosen) {
                converted.push(convertFile(ccv3, f.name, new Uint8Array(await f.arrayBuffer())));
            }
        } catch (e) {
            toastr.error(`Nothing imported: ${e.message}`);
            document.body.dataset.ccv3ImportError = e.message;
            return;
        }
        const notes = converted.flatMap((c) => c.notes.map((n) => `${c.file.name}: ${n}`));
        const box = document.createElement('div');
        box.setAttribute('data-testid', 'ccv3-import-notes');
        const head = document.createElement('h3');
        head.textContent = `Import ${converted.map((c) => c.file.name).join(', ')}?`;
        const ul = document.createElement('ul');
        for (const n of notes.length ? notes : ['ccv3 carried everything over.']) {
            const li = document.createElement('li');
            li.textContent = n;
            ul.append(li);
        }
        box.append(head, ul);
        const st = context();
        const ok = await st.callGenericPopup(box, st.POPUP_TYPE.CONFIRM, '', { okButton: 'Import', cancelButton: 'Cancel' });
        if (ok !== st.POPUP_RESULT.AFFIRMATIVE) return;
        const cards = converted.filter((c) => c.kind === 'card').map((c) => c.file);
        const books = converted.filter((c) => c.kind === 'book').map((c) => c.file);
        if (cards.length) await handTo(FIELD_FILES.card, cards);
        for (const b of books) await handTo(FIELD_FILES.book, [b]);
    });
}
