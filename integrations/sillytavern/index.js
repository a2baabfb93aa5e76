// ccv3 for SillyTavern: the World Info inspector, the importer and the card check.
//
// SillyTavern is reached through `SillyTavern.getContext()` and its events; the two values it
// does not expose there come from st-imports.js (listed in the README with the version checked).
import { loadCcv3 } from './core.js';
import { createInspector } from './inspector.js';
import { createImporter } from './importer.js';
import { createCardCheck } from './card-check.js';

const PANEL_HTML = `
<div class="ccv3-settings inline-drawer">
  <div class="inline-drawer-toggle inline-drawer-header">
    <b>ccv3</b>
    <div class="inline-drawer-icon fa-solid fa-circle-chevron-down down"></div>
  </div>
  <div class="inline-drawer-content ccv3-drawer-content">
    <div data-testid="ccv3-wi-panel" class="ccv3-wi-panel"></div>
    <div class="ccv3-card-check"></div>
  </div>
</div>`;

function mount() {
    const host = document.getElementById('extensions_settings2') || document.getElementById('extensions_settings');
    const wrap = document.createElement('div');
    wrap.innerHTML = PANEL_HTML.trim();
    const root = wrap.firstElementChild;
    host.appendChild(root);
    return {
        panel: root.querySelector('[data-testid="ccv3-wi-panel"]'),
        cardCheck: root.querySelector('.ccv3-card-check'),
    };
}

function start() {
    // getContext() is a snapshot (characterId, chatMetadata, names are values of that moment):
    // each part calls it again when it needs them.
    const st = () => SillyTavern.getContext();
    const places = mount();
    const ready = loadCcv3();
    ready.catch((e) => console.warn('[ccv3] the WebAssembly core did not load:', e));
    createInspector(st, places.panel, ready);
    createCardCheck(st, places.cardCheck, ready);
    createImporter(st, ready);
}

start();
