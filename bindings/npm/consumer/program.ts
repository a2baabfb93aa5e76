// A user's program over the packed `ccv3` tarball (issue 30, scripts/test-packages): it calls every
// exported function with the package's own types, under `"strict": true`, and is compiled for
// Node 16+ ES modules, Node 16+ CommonJS and bundlers from this one source, then run.
// `@ts-expect-error` lines prove that the types are not `any`: each must be a type error.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import ccv3 from 'ccv3';
import {
  buildPrompt,
  compileLorebooks,
  CompiledLorebooks,
  countTokens,
  expandMacros,
  lintCard,
  lintLorebook,
  loreGraph,
  parseDecorators,
  portability,
  readCard,
  readCardFiles,
  readCardSummary,
  readLorebook,
  registerVocabulary,
  scanLorebook,
  serializeDecorators,
  sillyTavernScanOptions,
  validateCard,
  validateLorebook,
  version,
  writeCard,
  writeLorebook,
} from 'ccv3';
import type {
  ActivatedEntry,
  CardFile,
  CardSummary,
  Ccv3Error,
  CharacterCardV3,
  ChatMessage,
  Decorator,
  Diagnostic,
  LintFinding,
  Lorebook,
  LorebookEntry,
  LoreGraph,
  ParsedDecorators,
  PortabilityFinding,
  PromptResult,
  RejectedEntry,
  ScanOptions,
  ScanResult,
} from 'ccv3';

/** True when T is `any`: the package's public types must never be. */
type IsAny<T> = 0 extends 1 & T ? true : false;
type NotAny<T> = IsAny<T> extends true ? never : true;
const typed: [
  NotAny<ReturnType<typeof readCard>>,
  NotAny<ReturnType<typeof scanLorebook>>,
  NotAny<ReturnType<typeof buildPrompt>>,
  NotAny<ReturnType<typeof lintCard>>,
  NotAny<ReturnType<typeof loreGraph>>,
  NotAny<ReturnType<typeof portability>>,
  NotAny<ReturnType<typeof parseDecorators>>,
  NotAny<ReturnType<typeof readLorebook>>,
  NotAny<ReturnType<typeof readCardSummary>>,
  NotAny<LorebookEntry['content']>,
  NotAny<ActivatedEntry['reason']>,
] = [true, true, true, true, true, true, true, true, true, true, true];

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`consumer: ${what}`);
}

const examples = process.env.CCV3_EXAMPLES ?? 'examples';
const png: Uint8Array = readFileSync(path.join(examples, 'ember.png'));
const worldBytes: Uint8Array = readFileSync(path.join(examples, 'world.json'));

// The default export is the same API.
check(ccv3.version === version && ccv3.readCard === readCard, 'the default export');

// Cards.
const card: CharacterCardV3 = readCard(png);
const name: string = card.data.name;
check(name === 'Ember Vale', `card name ${name}`);
const files: CardFile[] = readCardFiles(png);
const summary: CardSummary = readCardSummary(png);
check(summary.name === name && summary.entries === 5, 'the summary agrees with the card');
const book: Lorebook | undefined = card.data.character_book;
check(book !== undefined && book.entries.length === 5, 'the card has a 5-entry book');
const entry: LorebookEntry = book!.entries[0];
const keys: string[] = entry.keys;
const decorators: Decorator[] = entry.decorators ?? [];
const charx: Uint8Array = writeCard(card, { format: 'charx', files });
check(readCard(charx).data.name === name, 'CHARX round trip');
const diagnostics: Diagnostic[] = validateCard(png);
check(diagnostics.every((d) => d.severity !== 'error'), 'no validation error');
// @ts-expect-error: readCard takes bytes, not a file name.
void (() => readCard('examples/ember.png'));
// @ts-expect-error: writeCard knows its formats.
void (() => writeCard(card, { format: 'gif' }));

// Lorebooks and decorators.
const world: Lorebook = readLorebook(worldBytes);
const worldJson: Uint8Array = writeLorebook(world, { format: 'worldinfo' });
check(readLorebook(worldJson).entries.length === world.entries.length, 'World Info round trip');
const bookDiagnostics: Diagnostic[] = validateLorebook(world);
const parsed: ParsedDecorators = parseDecorators('@@depth 2\n@@role system\nThe lamp.');
check(parsed.content === 'The lamp.' && parsed.decorators.length === 2, 'decorators parsed');
const written: string = serializeDecorators(parsed.decorators, parsed.content);
check(written.startsWith('@@depth 2'), `decorators written: ${written}`);

// Analyses.
const lint: LintFinding[] = lintCard(png, { app: 'sillytavern' });
const budget = lint.find((f) => f.code === 'lore-budget-plan')?.budget;
check(budget !== undefined && budget.total >= budget.constant, 'the budget plan');
const bookLint: LintFinding[] = lintLorebook(world);
const graph: LoreGraph = loreGraph(card);
check(graph.nodes.length === 5, 'one graph node per entry');
const port: PortabilityFinding[] = portability(png, { apps: ['sillytavern', 'v2'] });
check(port.every((f) => f.app === 'sillytavern' || f.app === 'v2'), 'portability apps');

// The lorebook engine and prompts (Node loads the o200k vocabulary on first need; registering
// it by hand is what a bundle for another host does).
const vocab = path.join(process.env.CCV3_PACKAGE_DIR ?? 'node_modules/ccv3', 'vocab', 'o200k_base.vocab');
registerVocabulary('o200k', readFileSync(vocab));
const chat: ChatMessage[] = [{ role: 'user', name: 'Sam', content: 'Tell me about the lighthouse lamp and the Teeth.' }];
const scan: ScanResult = scanLorebook({ books: [book!, world], chat, tokenizer: 'o200k' });
const activated: ActivatedEntry[] = scan.activated;
const rejected: RejectedEntry[] = scan.rejected;
check(activated.some((a) => a.name === 'Old Sol'), `activated: ${activated.map((a) => a.name)}`);
const compiled: CompiledLorebooks = compileLorebooks([book!]);
const again: ScanResult = scanLorebook({ books: compiled, chat, state: scan.state });
compiled.free();
const stOptions: Omit<ScanOptions, 'chat'> = sillyTavernScanOptions({ settings: { world_info_depth: 2 }, maxContext: 8192 });
const prompt: PromptResult = buildPrompt({ ...stOptions, card, chat, maxContext: 4096, user: 'Sam' });
check(prompt.messages.length > 0 && prompt.tokens > 0, 'a prompt');
const text: string = expandMacros('{{char}} greets {{user}}.', { card, user: 'Sam' });
check(text === 'Ember greets Sam.', `macros: ${text}`);
const tokens: number = countTokens('hello world', 'o200k');
check(tokens === 2, `tokens: ${tokens}`);
// @ts-expect-error: countTokens knows its encodings.
void (() => countTokens('hello', 'gpt2'));

// Errors carry a stable code.
try {
  readCard(new Uint8Array([1, 2, 3]));
  check(false, 'garbage read as a card');
} catch (e) {
  const code: string = (e as Ccv3Error).code;
  check(code === 'read-failed' || code === 'bad-input', `error code ${code}`);
}

const kind = typeof require === 'function' ? 'CommonJS' : 'ES module';
console.log(
  `consumer (${kind}): ccv3 ${version}: ${name}, ${keys.length} keys and ${decorators.length} decorators on entry 0, ` +
    `${files.length} files, ${diagnostics.length + bookDiagnostics.length} diagnostics, ${lint.length + bookLint.length} lint ` +
    `findings, ${graph.edges.length} graph edges, ${port.length} portability findings, ${activated.length} activated / ` +
    `${rejected.length} rejected (${again.activated.length} again), ${prompt.messages.length} prompt messages, ` +
    `${typed.length} types checked`,
);
