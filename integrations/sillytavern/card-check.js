// The card check: for the open character, ccv3's validation findings (and its lint findings
// when the package has lintCard), each with its JSON path and a jump to the editor's field.

// Where SillyTavern 1.19.0's character editor shows a card field (index.html).
const EDITOR_FIELDS = {
    'data.name': '#character_name_pole',
    'data.description': '#description_textarea',
    'data.personality': '#personality_textarea',
    'data.scenario': '#scenario_pole',
    'data.first_mes': '#firstmessage_textarea',
    'data.mes_example': '#mes_example_textarea',
    'data.creator_notes': '#creator_notes_textarea',
    'data.system_prompt': '#system_prompt_textarea',
    'data.post_history_instructions': '#post_history_instructions_textarea',
    'data.tags': '#tagInput',
};

function editorField(path) {
    const p = String(path).replace(/^\$\.?/, '').replace(/^\//, '').replace(/\//g, '.');
    for (const [k, sel] of Object.entries(EDITOR_FIELDS)) {
        if (p === k || p.startsWith(`${k}.`) || p.startsWith(`${k}[`)) return sel;
    }
    return null;
}

export function createCardCheck(context, box, ready) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'menu_button';
    button.setAttribute('data-testid', 'ccv3-card-check');
    button.textContent = 'Check the open card';
    const list = document.createElement('ul');
    list.setAttribute('data-testid', 'ccv3-card-findings');
    list.className = 'ccv3-card-findings';
    box.append(button, list);

    button.addEventListener('click', async () => {
        list.replaceChildren();
        list.dataset.state = 'running';
        try {
            show(await findingsOfOpenCard(context(), await ready));
        } catch (e) {
            show([{ severity: 'error', code: e.code || 'check-failed', path: '', message: e.message }]);
        }
    });

    function show(findings) {
        for (const f of findings) {
            const li = document.createElement('li');
            li.setAttribute('data-testid', 'ccv3-card-finding');
            li.dataset.path = f.path;
            li.dataset.code = f.code;
            li.dataset.severity = f.severity;
            li.textContent = `${f.severity} ${f.code} at ${f.path || '(card)'}: ${f.message}`;
            const sel = editorField(f.path);
            if (sel) {
                const jump = document.createElement('button');
                jump.type = 'button';
                jump.className = 'menu_button ccv3-jump';
                jump.textContent = 'Go to field';
                jump.addEventListener('click', () => {
                    const field = document.querySelector(sel);
                    field?.scrollIntoView({ block: 'center' });
                    field?.focus();
                });
                li.append(' ', jump);
            }
            list.append(li);
        }
        if (!findings.length) {
            const li = document.createElement('li');
            li.textContent = 'No findings.';
            list.append(li);
        }
        list.dataset.state = 'done';
        list.dataset.count = String(findings.length);
    }
}

/** The open character's card file (its avatar PNG as SillyTavern stores it), checked. */
async function findingsOfOpenCard(st, ccv3) {
    const ch = st.characters[st.characterId];
    if (!ch) {
        const e = new Error('No character is open.');
        e.code = 'no-character';
        throw e;
    }
    const response = await fetch(`/characters/${encodeURIComponent(ch.avatar)}`, { cache: 'no-store' });
    if (!response.ok) throw new Error(`could not read ${ch.avatar} (HTTP ${response.status})`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const findings = ccv3.validateCard(bytes).map((d) => ({ ...d, source: 'validate' }));
    if (typeof ccv3.lintCard === 'function') {
        findings.push(...ccv3.lintCard(bytes).map((d) => ({ ...d, source: 'lint' })));
    }
    return findings;
}
