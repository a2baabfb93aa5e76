// The browser variant of program.ts (issue 30, `scripts/test-packages browser`): bundled by esbuild
// into one ES module, the way a web app bundles the package, and opened in headless Chromium. It
// reads a card the page fetched and scans its book. The WebAssembly core and the vocabulary are
// imported as files (esbuild's `file` loader copies them beside the bundle and gives their URLs).
import wasmUrl from 'ccv3/web/ccv3_wasm_bg.wasm';
import vocabUrl from 'ccv3/vocab/o200k_base.vocab';
import init, { countTokens, loadTokenizer, readCard, readCardSummary, scanLorebook, version } from 'ccv3/web';
import type { CardSummary, CharacterCardV3, ChatMessage, ScanResult } from 'ccv3/web';

/** What the page reports to the test (window.__ccv3). */
export interface BrowserReport {
  version: string;
  name: string;
  entries: number;
  activated: string[];
  rejected: number;
  tokens: number;
  summary: CardSummary;
}

async function run(): Promise<BrowserReport> {
  await init(new URL(wasmUrl, import.meta.url));
  await loadTokenizer('o200k', new URL(vocabUrl, import.meta.url));
  const response = await fetch('examples/ember.png');
  const bytes = new Uint8Array(await response.arrayBuffer());
  const card: CharacterCardV3 = readCard(bytes);
  const book = card.data.character_book;
  if (!book) throw new Error('the card has no book');
  const chat: ChatMessage[] = [{ role: 'user', name: 'Sam', content: 'Tell me about the lighthouse lamp and the Teeth.' }];
  const scan: ScanResult = scanLorebook({ books: [book], chat });
  return {
    version,
    name: card.data.name,
    entries: book.entries.length,
    activated: scan.activated.map((a) => a.name ?? ''),
    rejected: scan.rejected.length,
    tokens: countTokens('hello world'),
    summary: readCardSummary(bytes),
  };
}

declare global {
  interface Window {
    __ccv3?: BrowserReport | { error: string };
  }
}

run().then(
  (report) => {
    window.__ccv3 = report;
    document.body.textContent = `${report.name}: ${report.activated.join(', ')}`;
  },
  (e: unknown) => {
    window.__ccv3 = { error: String(e instanceof Error ? e.stack : e) };
  },
);
