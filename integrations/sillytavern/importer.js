// The importer: any file ccv3 reads, converted in the browser into what SillyTavern imports
// natively (a V3 PNG card with its `chara` backfill, or a World Info JSON file), then handed to
// SillyTavern's own import inputs. ccv3's conversion notes are shown first; nothing is handed
// over unless every file converted.

const FIELD_FILES = { card: '#character_import_file', book: '#world_import_file' };

function safeName(name, fallback) {
    const n = String(name || '').replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_').trim();
    return n || fallback;
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
        const assets = Array.isArray(card.data.assets) ? card.data.assets : [];
        const carried = new Set(files.map((f) => f.path));
        for (const a of assets) {
            if (a.type !== 'icon' || a.name !== 'main') {
                const inFile = [...carried].some((p) => String(a.uri).endsWith(p));
                notes.push(`asset "${a.name}" (${a.type}) ${inFile ? 'kept in the PNG (SillyTavern does not show it)' : 'points outside the file and stays a link'}`);
            }
        }
        const png = ccv3.writeCard(card, { format: 'png', files });
        const fileName = `${safeName(card.data.name, stem)}.png`;
        return { kind: 'card', name: card.data.name, file: new File([png], fileName, { type: 'image/png' }), notes };
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

function handTo(selector, files) {
    const input = document.querySelector(selector);
    if (!input) throw new Error(`SillyTavern's import input ${selector} is missing`);
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
        if (cards.length) handTo(FIELD_FILES.card, cards);
        for (const b of books) handTo(FIELD_FILES.book, [b]);
    });
}
