// The browser entry `ccv3/web` as a bundler resolves it (issue 30, scripts/test-packages):
// type-checked only (its run is scripts/test-web's, in headless Chromium).
import init, { countTokens, initReadCore, initSync, loadTokenizer, readCard, scanLorebook } from 'ccv3/web';
import type { CharacterCardV3, ScanResult } from 'ccv3/web';

/** Reads a card's bytes and scans its book with the first message of a chat. */
export async function firstScan(bytes: Uint8Array, message: string): Promise<[string, ScanResult, number]> {
  await init();
  await loadTokenizer('o200k');
  const card: CharacterCardV3 = readCard(bytes);
  const book = card.data.character_book;
  const scan: ScanResult = scanLorebook({ books: book ? [book] : [], chat: [{ role: 'user', content: message }] });
  return [card.data.name, scan, countTokens(message)];
}

/** A character list's read: only the read core is loaded. */
export async function nameOf(bytes: Uint8Array): Promise<string> {
  await initReadCore();
  return readCard(bytes).data.name;
}

// @ts-expect-error: initSync needs the core's bytes or compiled module.
export const wrong = (): void => initSync();
