// TypeScript declarations for the npm package `ccv3` (Node entry; `ccv3/web` adds init).

/**
 * The npm package `ccv3` in Node: `import { readCard } from 'ccv3'` or `require('ccv3')`. Cards
 * and lorebooks are plain objects, files are `Uint8Array`s, and every Error it throws carries a
 * stable `code` ({@link Ccv3Error}). Browsers import `ccv3/web` (the same functions, after `init()`).
 *
 * @module ccv3
 */
/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Stable error codes: `error.code` of every Error the package throws. */
export type ErrorCode =
  | 'bad-input'
  | 'read-failed'
  | 'limit'
  | 'write-failed'
  | 'tokenizer-unavailable'
  | 'internal'
  | 'not-initialized'
  | (string & {});

/** An Error thrown by ccv3: `message` names the problem, `code` is stable. */
export interface Ccv3Error extends Error {
  code: ErrorCode;
}

/**
 * A decorator line (`@@name value`) of a lorebook entry. `value` is a number for numeric
 * decorators (`depth`, `activate_only_after`, `scan_depth`, ...), a string for `role`/`position`,
 * an array of strings for `additional_keys`/`exclude_keys`, absent for flags (`activate`, ...).
 * An unknown decorator is `{type: 'unknown', name, value?}`. `@@@` fallbacks follow in `fallbacks`.
 */
export interface Decorator {
  type: string;
  value?: number | string | string[];
  /** The decorator's name, for `type: 'unknown'`. */
  name?: string;
  fallbacks?: Decorator[];
}

/** The result of parseDecorators. */
export interface ParsedDecorators {
  decorators: Decorator[];
  content: string;
}

/** A lorebook entry (spec section "Lorebook"); unknown fields are kept in order. */
export interface LorebookEntry {
  keys: string[];
  content: string;
  extensions: { [key: string]: Json };
  enabled: boolean;
  insertion_order: number;
  case_sensitive?: boolean;
  use_regex: boolean;
  constant?: boolean;
  name?: string;
  priority?: number;
  id?: number | string;
  comment?: string;
  selective?: boolean;
  secondary_keys?: string[];
  position?: string;
  /** Present when read with `parseDecorators: true` (the default). */
  decorators?: Decorator[];
  [key: string]: unknown;
}

/** A lorebook: the same structure as a card's `data.character_book`. */
export interface Lorebook {
  name?: string;
  description?: string;
  scan_depth?: number;
  token_budget?: number;
  recursive_scanning?: boolean;
  extensions: { [key: string]: Json };
  entries: LorebookEntry[];
  [key: string]: unknown;
}

/** A card asset (spec section "assets"). */
export interface Asset {
  type: string;
  uri: string;
  name: string;
  ext: string;
  [key: string]: unknown;
}

/** The `data` of a V3 card. */
export interface CardData {
  name: string;
  description: string;
  tags: string[];
  creator: string;
  character_version: string;
  mes_example: string;
  extensions: { [key: string]: Json };
  system_prompt: string;
  post_history_instructions: string;
  first_mes: string;
  alternate_greetings: string[];
  personality: string;
  scenario: string;
  creator_notes: string;
  group_only_greetings: string[];
  character_book?: Lorebook;
  assets?: Asset[];
  nickname?: string;
  creator_notes_multilingual?: { [lang: string]: string };
  source?: string[];
  creation_date?: number;
  modification_date?: number;
  [key: string]: unknown;
}

/** A Character Card V3 object. */
export interface CharacterCardV3 {
  spec: 'chara_card_v3';
  spec_version: string;
  data: CardData;
  [key: string]: unknown;
}

/** Options of readCard and readLorebook. */
export interface ReadOptions {
  /** Split `@@` decorator lines off each entry's content into `decorators` (default true). */
  parseDecorators?: boolean;
}

/** Options of writeCard. */
export interface WriteCardOptions {
  /** `json` is V3; `json-v2` is the spec's V2 backfill (as `ccv3 convert --to v2`). */
  format: 'png' | 'charx' | 'json' | 'json-v2';
  /** PNG bytes for the `png` format (else the card's own image or a placeholder). */
  image?: Uint8Array;
  /** The files the card's assets point at (readCardFiles of the file it came from): PNG and CHARX carry them. */
  files?: CardFile[];
}

/** A file a card file carries besides the card (a CHARX entry, a PNG asset chunk). */
export interface CardFile {
  /** The path inside the CHARX, or the PATH of a PNG's `chara-ext-asset_:PATH` chunk. */
  path: string;
  bytes: Uint8Array;
}

/** Options of writeLorebook. */
export interface WriteLorebookOptions {
  format?: 'lorebook_v3' | 'worldinfo';
}

/** One finding of validateCard / validateLorebook (the same codes and paths as `ccv3 validate --json`). */
export interface Diagnostic {
  severity: 'error' | 'warning' | 'info';
  code: string;
  path: string;
  message: string;
}

/** A chat message. */
export interface ChatMessage {
  role: 'user' | 'assistant' | 'system' | (string & {});
  name?: string;
  content: string;
}

/** What a turn returns and the next turn passes back (opaque, JSON-serialisable). */
export type ScanState = { [key: string]: Json };

/** A lorebook object, or a file's bytes (a card's bytes mean its character book). */
export type BookInput = Lorebook | Uint8Array;

/** Options of scanLorebook and buildPrompt (camelCase; snake_case is accepted too). */
export interface ScanOptions {
  chat: ChatMessage[];
  state?: ScanState | null;
  /** The seed for probability rolls; its default comes from the chat. */
  seed?: number;
  scanDepth?: number;
  recursive?: boolean;
  tokenizer?: 'o200k' | 'cl100k' | 'estimate' | (string & {});
  /** `{{char}}` (default: the first card's nickname, else its name, else `Character`). */
  char?: string;
  /** `{{user}}` and the name of unnamed user messages (default `User`). */
  user?: string;
  /** The active greeting, for `@@is_greeting` (0 = `first_mes`, 1 = the first alternate greeting, ...; default 0, as in `ccv3 lore scan` and `ccv3 prompt`). */
  greeting?: number;
  /** Scan deeper (one message more each pass) until this many entries are active (0: off). */
  minActivations?: number;
  /** The deepest min activations may scan (0: the whole chat). */
  minActivationsDepthMax?: number;
  /** The most scan passes (0: no limit; 1 disables recursion). */
  maxRecursionSteps?: number;
  /** A token budget over all books (each book's own budget applies too). */
  budget?: number;
  /** A ceiling on the budget of all books, whatever sets it. */
  budgetCap?: number;
  /** Prefix each message with `name: ` in the scan text (default true). */
  includeNames?: boolean;
  /** Match single-word keys as whole words, for entries that do not say (default true). */
  wholeWords?: boolean;
  /** Match keys case-sensitively, for entries that do not say (default false). */
  caseSensitive?: boolean;
  /** Keep the inclusion-group members with the most keys found, for entries that do not say (default false). */
  groupScoring?: boolean;
  /** The generation type, for entries with `triggers` (default `normal`). */
  trigger?: 'normal' | 'continue' | 'impersonate' | 'swipe' | 'regenerate' | 'quiet';
  /** The user's persona description, scanned for entries with `match_persona_description`. */
  persona?: string;
  /** Whose macros the texts use (issue 17): 'auto' (default: RisuAI extensions on the card mean 'risu', else 'sillytavern'), 'risu', 'sillytavern' or 'spec'. */
  dialect?: Dialect;
  /** `'sillytavern'`: reproduce SillyTavern 1.15's lorebook results (docs/sillytavern-compat.md). */
  compat?: 'sillytavern' | 'spec';
  /** List the entries that did not activate (default true); false leaves `rejected` empty, faster for a big book. */
  rejected?: boolean;
  /** Per book (in order): SillyTavern's lore kind, which sets its book order (chat, persona, then character/global by `strategy`); null: the default (a card's book is the character's, others global). */
  bookKinds?: Array<'character' | 'global' | 'chat' | 'persona' | null>;
  /** SillyTavern's `chatMetadata.timedWorldInfo` (`{sticky, cooldown}` records keyed `world.uid`): the scan starts from these sticky/cooldown records instead of `state`'s. A book's `world` is its display name (give World Info objects `name: world`). */
  stTimed?: Record<string, unknown> | null;
  /** With `compat: 'sillytavern'`: the entries SillyTavern activated (`['world.uid', ...]` or `{world: [uid, ...]}`); its probability rolls and inclusion-group draws are taken from it. */
  stActivated?: string[] | Record<string, Array<number | string>> | null;
  [option: string]: unknown;
}

/** A macro dialect: which application's macros a text is written for. */
export type Dialect = 'auto' | 'risu' | 'sillytavern' | 'spec';

/** The argument of scanLorebook. */
export interface ScanRequest extends ScanOptions {
  books: BookInput | BookInput[] | CompiledLorebooks;
}

/** An activated entry, as in `ccv3 lore scan --json`. */
export interface ActivatedEntry {
  /** The book's name (or `books[i]` when it has none). */
  book: string;
  index: number;
  name: string | null;
  content: string;
  position: string;
  /** `true` when the entry wrote no position and went `after_char` by default (absent otherwise). */
  position_default?: boolean;
  depth?: number | null;
  role?: string | null;
  reason: string;
  /** The scan step that activated it: 0 the first, recursion (or min activations) steps after (scanLorebook only). */
  step?: number;
  [key: string]: unknown;
}

/** A rejected entry, as in `ccv3 lore scan --json`. */
export interface RejectedEntry {
  /** The book's name (or `books[i]` when it has none). */
  book: string;
  index: number;
  name: string | null;
  reason: string;
  [key: string]: unknown;
}

/** The result of scanLorebook. */
export interface ScanResult {
  activated: ActivatedEntry[];
  rejected: RejectedEntry[];
  tokens: number;
  state: ScanState;
}

/** The argument of buildPrompt. */
export interface BuildPromptRequest extends Omit<ScanOptions, 'chat'> {
  card: CharacterCardV3 | Uint8Array;
  chat: ChatMessage[];
  books?: BookInput | BookInput[];
  user?: string;
  maxContext?: number;
  instruct?: string | { [key: string]: Json };
}

/** A message of the assembled prompt. */
export interface PromptMessage {
  role: string;
  content: string;
}

/** A lorebook insertion of the assembled prompt. */
export interface PromptLore {
  label: string;
  position: string;
  slot: string;
  role: string;
  tokens: number;
  /** `true` when the entry wrote no position and went `after_char` by default (absent otherwise). */
  position_default?: boolean;
}

/** Something the context budget cut. */
export interface PromptCut {
  kind: string;
  label: string;
  tokens: number;
  reason: string;
}

/** The result of buildPrompt: `ccv3 prompt --json` plus `state`. */
export interface PromptResult {
  messages: PromptMessage[];
  tokens: number;
  lore: PromptLore[];
  cut: PromptCut[];
  /** Tokens still over `maxContext` after every cut; absent when the prompt fits. */
  over_limit?: number;
  state: ScanState;
}

/** The context of expandMacros. */
export interface MacroContext {
  card?: CharacterCardV3;
  chat?: ChatMessage[];
  user?: string;
  variables?: { [name: string]: Json };
  /** "Now" for `{{time}}`/`{{date}}` (a Date, ISO text or milliseconds since 1970); without it they use a fixed, documented value. */
  now?: Date | string | number;
  /** Whose macros (issue 17): 'auto' (default: the card's application; without a card, every built-in macro), 'risu', 'sillytavern' or 'spec'. */
  dialect?: Dialect;
}

/** A tokenizer encoding. */
export type Encoding = 'o200k' | 'cl100k';

/** An application the analyses target (`st` and `risu` are accepted too). */
export type App = 'spec' | 'sillytavern' | 'risuai' | 'agnai' | 'v2';

/** Options of lintCard / lintLorebook (as `ccv3 lint`'s flags). */
export interface LintOptions {
  /** The target application of the macro and decorator checks (default: the card's own, else `spec`). */
  app?: App | 'st' | 'risu';
  /** The tokenizer of the budget plan (default `o200k`). */
  tokenizer?: Encoding | 'estimate';
  /** The budget in tokens (else the book's `token_budget`, else a quarter of `maxContext`). */
  budget?: number;
  /** The model's context, for the default budget (default 8192). */
  maxContext?: number;
  /** A ceiling on the budget, whatever sets it. */
  budgetCap?: number;
}

/** One entry's tokens in a BudgetPlan. */
export interface EntryTokens {
  entry: number;
  tokens: number;
}

/** The token budget of a book (on the `lore-budget-plan` finding). */
export interface BudgetPlan {
  limit: number;
  /** Tokens of the enabled constant entries together. */
  constant: number;
  /** Tokens of all enabled non-constant entries together. */
  triggered_max: number;
  /** `constant + triggered_max`. */
  total: number;
  entries: EntryTokens[];
}

/** One finding of lintCard / lintLorebook (as `ccv3 lint --json`, without `file`). */
export interface LintFinding {
  severity: 'error' | 'warning' | 'info';
  /** A stable code (`lore-entry-no-keys`, `cbs-unknown-macro`, ...). */
  code: string;
  /** The JSON path, as validateCard writes it. */
  path: string;
  /** The entry's index in its book; null for card-level findings. */
  entry: number | null;
  message: string;
  /** On `lore-budget-plan` only. */
  budget?: BudgetPlan;
}

/** One node of a LoreGraph: an entry of the book. */
export interface LoreGraphNode {
  entry: number;
  /** Its `name`, else its `comment`. */
  name: string | null;
  constant: boolean;
  enabled: boolean;
}

/** One edge: `from`'s content contains `key`, a key of `to`. */
export interface LoreGraphEdge {
  from: number;
  to: number;
  key: string;
}

/** The recursion graph (as `ccv3 lore graph --json`). */
export interface LoreGraph {
  nodes: LoreGraphNode[];
  edges: LoreGraphEdge[];
  /** Present and true when the engine's limits cut the search: some edges may be missing. */
  truncated?: boolean;
}

/** Options of portability. */
export interface PortabilityOptions {
  /** The applications to report on (default sillytavern, risuai, agnai, v2). */
  apps?: Array<App | 'st' | 'risu'>;
}

/** One finding of portability (as `ccv3 portability --json`). */
export interface PortabilityFinding {
  app: App;
  severity: 'error' | 'warning' | 'info';
  code: string;
  path: string;
  entry: number | null;
  /** What happens, and the rule's source. */
  message: string;
}

/** A card or lorebook for the analyses: file bytes, file text or an object. */
export type AnalysisInput = Uint8Array | string | CharacterCardV3 | Lorebook | { [key: string]: Json };

/** Lorebooks compiled once and reused across scanLorebook calls (pass it as `books`). */
export declare class CompiledLorebooks {
  private constructor();
  /** Frees the compiled books now instead of when garbage collected. */
  free(): void;
}

/**
 * Reads a card (V1/V2 JSON, PNG/APNG, CHARX, WebP/JPEG) as a V3 object.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { readCard } from 'ccv3';
 *
 * const card = readCard(readFileSync('examples/ember.png'));
 * console.log(card.spec, card.data.name); // => chara_card_v3 Ember Vale
 * console.log(card.data.character_book.entries.length); // => 5
 * ```
 */
export declare function readCard(bytes: Uint8Array, options?: ReadOptions): CharacterCardV3;
/** What a character list shows of a card (readCardSummary). */
export interface CardSummary {
  name: string;
  /** `null` when the card has none. */
  nickname: string | null;
  creator: string;
  tags: string[];
  /** The version the card was written in. */
  spec: 'V1' | 'V2' | 'V3';
  spec_version: string;
  container: 'JSON' | 'PNG' | 'CHARX' | 'WebP' | 'JPEG' | 'BYAF' | 'Voxta';
  /** `first_mes` (when not empty) plus the alternate greetings. */
  greetings: number;
  /** Entries of the embedded lorebook (0 without one). */
  entries: number;
  /** Items of `data.assets` (0 when absent). */
  assets: number;
  /**
   * Only with the `tokens` option: the tokens of the fields SillyTavern counts as permanent
   * (name, description, personality, scenario, `extensions.depth_prompt.prompt`), each field
   * counted and the counts added.
   */
  permanent_tokens?: number;
}
/** Options of readCardSummary. */
export interface ReadCardSummaryOptions {
  /** Count the permanent fields' tokens with this encoding (`permanent_tokens`); not counted by default. */
  tokens?: 'o200k' | 'cl100k' | 'estimate';
}
/**
 * What a character list shows of a card file, read without building the card (much faster
 * than readCard): the values readCard gives. A lorebook file is an error.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { readCardSummary } from 'ccv3';
 *
 * const summary = readCardSummary(readFileSync('examples/ember.png'));
 * console.log(summary.name, summary.container, summary.entries); // => Ember Vale PNG 5
 * console.log(JSON.stringify(summary.tags)); // => ["example","fantasy","lighthouse"]
 * ```
 */
export declare function readCardSummary(bytes: Uint8Array, options?: ReadCardSummaryOptions): CardSummary;
/**
 * The files a card file carries besides the card (CHARX entries, PNG asset chunks), in file order.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { readCard, readCardFiles, writeCard } from 'ccv3';
 *
 * // A CHARX that carries an image for an `embeded://` asset (examples/ember.png's only asset is
 * // `ccdefault:`, the card's own image, so it carries no other file).
 * const card = readCard(readFileSync('examples/ember.png'));
 * card.data.assets.push({ type: 'icon', uri: 'embeded://assets/icon/images/lamp.png', name: 'lamp', ext: 'png' });
 * const lamp = { path: 'assets/icon/images/lamp.png', bytes: readFileSync('examples/ember.png') };
 * const charx = writeCard(card, { format: 'charx', files: [lamp] });
 * console.log(JSON.stringify(readCardFiles(charx).map((f) => f.path))); // => ["assets/icon/images/lamp.png"]
 * ```
 */
export declare function readCardFiles(bytes: Uint8Array): CardFile[];
/**
 * Reads a lorebook (lorebook_v3, bare book, SillyTavern World Info, NovelAI, Agnai, RisuAI).
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { readLorebook } from 'ccv3';
 *
 * const book = readLorebook(readFileSync('examples/world.json')); // SillyTavern World Info
 * console.log(book.entries.length, JSON.stringify(book.entries[0].keys)); // => 2 ["mainland","Harrowport"]
 * ```
 */
export declare function readLorebook(bytes: Uint8Array, options?: ReadOptions): Lorebook;
/**
 * Splits the decorator lines off an entry's content.
 *
 * @example
 * ```js
 * import { parseDecorators } from 'ccv3';
 *
 * const { decorators, content } = parseDecorators('@@depth 2\n@@role system\nThe lamp is lit.');
 * console.log(JSON.stringify(decorators)); // => [{"type":"depth","value":2},{"type":"role","value":"system"}]
 * console.log(content); // => The lamp is lit.
 * ```
 */
export declare function parseDecorators(content: string): ParsedDecorators;
/**
 * Writes decorators back as `@@` lines before `content`; the inverse of parseDecorators.
 *
 * @example
 * ```js
 * import { serializeDecorators } from 'ccv3';
 *
 * const text = serializeDecorators([{ type: 'depth', value: 2 }, { type: 'activate' }], 'The lamp is lit.');
 * console.log(JSON.stringify(text)); // => "@@depth 2\n@@activate\nThe lamp is lit."
 * ```
 */
export declare function serializeDecorators(decorators: Decorator[], content: string): string;
/**
 * Writes a card as PNG (ccv3 plus the V2 chara backfill), CHARX or JSON.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { readCard, readCardFiles, writeCard } from 'ccv3';
 *
 * const png = readFileSync('examples/ember.png');
 * const card = readCard(png);
 * const charx = writeCard(card, { format: 'charx', files: readCardFiles(png) }); // keeps the assets
 * console.log(readCard(charx).data.name); // => Ember Vale
 * const v2 = JSON.parse(new TextDecoder().decode(writeCard(card, { format: 'json-v2' })));
 * console.log(v2.spec, v2.spec_version); // => chara_card_v2 2.0
 * ```
 */
export declare function writeCard(card: CharacterCardV3, options: WriteCardOptions): Uint8Array;
/**
 * Writes a lorebook as lorebook_v3 JSON (default) or SillyTavern World Info.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { readLorebook, writeLorebook } from 'ccv3';
 *
 * const book = readLorebook(readFileSync('examples/world.json'));
 * const v3 = JSON.parse(new TextDecoder().decode(writeLorebook(book)));
 * console.log(v3.spec, v3.data.entries.length); // => lorebook_v3 2
 * const worldInfo = writeLorebook(book, { format: 'worldinfo' }); // SillyTavern's file again
 * console.log(readLorebook(worldInfo).entries.length); // => 2
 * ```
 */
export declare function writeLorebook(lorebook: Lorebook, options?: WriteLorebookOptions): Uint8Array;
/**
 * Validates a card's file bytes or a card object.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { validateCard } from 'ccv3';
 *
 * console.log(validateCard(readFileSync('examples/ember.png'))); // => []
 * const [first] = validateCard({ spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'Nameless' } });
 * console.log(first.severity, first.code, first.path); // => error missing-required-field data.description
 * ```
 */
export declare function validateCard(bytesOrCard: Uint8Array | CharacterCardV3 | { [key: string]: Json }): Diagnostic[];
/**
 * Validates a lorebook's file bytes or a lorebook object.
 *
 * @example
 * ```js
 * import { validateLorebook } from 'ccv3';
 *
 * const entry = { keys: ['lamp'], content: 'The lamp is lit.', enabled: true, insertion_order: 0, use_regex: false };
 * console.log(validateLorebook({ extensions: {}, entries: [{ ...entry, extensions: {} }] })); // => []
 * const problems = validateLorebook({ entries: [entry] }).map((d) => `${d.code} at ${d.path}`);
 * console.log(JSON.stringify(problems)); // => ["missing-required-field at extensions","missing-required-field at entries[0].extensions"]
 * ```
 */
export declare function validateLorebook(bytesOrLorebook: Uint8Array | Lorebook | { [key: string]: Json }): Diagnostic[];
/**
 * Lints a card: its lorebook and the macros and decorators of its text (issue 27).
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { lintCard } from 'ccv3';
 *
 * const findings = lintCard(readFileSync('examples/ember.png'), { app: 'sillytavern' });
 * console.log(JSON.stringify(findings.map((f) => f.code))); // => ["lore-budget-plan","decorator-ignored-by-app","decorator-ignored-by-app","decorator-ignored-by-app"]
 * console.log(findings[1].path); // => data.character_book.entries[1].content
 * console.log(findings[1].message); // => SillyTavern ignores @@depth; no fallback it knows follows
 * ```
 */
export declare function lintCard(input: AnalysisInput, options?: LintOptions): LintFinding[];
/**
 * Lints a lorebook (paths start at `data`).
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { lintLorebook } from 'ccv3';
 *
 * const findings = lintLorebook(readFileSync('examples/world.json'));
 * console.log(JSON.stringify(findings.map((f) => `${f.code} at ${f.path}`))); // => ["lore-budget-plan at data"]
 * ```
 */
export declare function lintLorebook(input: AnalysisInput, options?: LintOptions): LintFinding[];
/**
 * Which entry triggers which in a recursion step, of a lorebook or a card's book.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { loreGraph } from 'ccv3';
 *
 * const graph = loreGraph(readFileSync('examples/ember.png'));
 * console.log(graph.nodes.length, 'entries'); // => 5 entries
 * console.log(JSON.stringify(graph.edges)); // => [{"from":3,"to":0,"key":"Teeth"}]
 * ```
 */
export declare function loreGraph(input: AnalysisInput, options?: {}): LoreGraph;
/**
 * What SillyTavern, RisuAI, Agnai and any V2 reader do with a card or lorebook.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { portability } from 'ccv3';
 *
 * const findings = portability(readFileSync('examples/ember.png'), { apps: ['v2'] });
 * console.log(findings.length, findings[0].code, findings[0].path); // => 11 v3-field-dropped data.assets
 * ```
 */
export declare function portability(input: AnalysisInput, options?: PortabilityOptions): PortabilityFinding[];
/**
 * Compiles lorebooks once, for many scanLorebook calls.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { compileLorebooks, scanLorebook } from 'ccv3';
 *
 * const books = compileLorebooks([readFileSync('examples/ember.png'), readFileSync('examples/world.json')]);
 * const chat = [{ role: 'user', content: 'What are the Teeth?' }];
 * const first = scanLorebook({ books, chat });
 * chat.push({ role: 'assistant', content: 'Rocks off the point.' }, { role: 'user', content: 'And the lamp?' });
 * const second = scanLorebook({ books, chat, state: first.state }); // the next turn, same compiled books
 * books.free();
 * console.log(first.activated.length, second.activated.length); // => 2 3
 * ```
 */
export declare function compileLorebooks(books: BookInput | BookInput[]): CompiledLorebooks;
/**
 * Runs the lorebook engine over a chat: one turn. Pass `state` back in on the next turn.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { readCard, scanLorebook } from 'ccv3';
 *
 * const card = readCard(readFileSync('examples/ember.png'));
 * const scan = scanLorebook({
 *   books: [card.data.character_book],
 *   chat: [{ role: 'user', name: 'Sam', content: 'Tell me about the lighthouse lamp.' }],
 * });
 * console.log(JSON.stringify(scan.activated.map((e) => e.name))); // => ["Island","Old Sol"]
 * console.log(scan.activated[1].reason); // => key "lamp" in message 0
 * ```
 */
export declare function scanLorebook(request: ScanRequest): ScanResult;
/**
 * SillyTavern's World Info settings (`getWorldInfoSettings()`), context size and tokenizer model as scan options (`compat: 'sillytavern'`, `budget`, ...).
 *
 * @example
 * ```js
 * import { sillyTavernScanOptions } from 'ccv3';
 *
 * const options = sillyTavernScanOptions({ settings: { world_info_depth: 2, world_info_budget: 25 }, maxContext: 8192 });
 * console.log(options.compat, options.scanDepth, options.budget); // => sillytavern 2 2048
 * ```
 */
export declare function sillyTavernScanOptions(request: {
  settings: { [key: string]: Json };
  maxContext: number;
  tokenizerModel?: string;
  trigger?: string;
}): Omit<ScanOptions, 'chat'>;
/**
 * Builds a prompt (scan, then assemble within the context budget): one turn.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { buildPrompt, readCard } from 'ccv3';
 *
 * const card = readCard(readFileSync('examples/ember.png'));
 * const prompt = buildPrompt({ card, chat: [{ role: 'user', content: 'What are the Teeth?' }], user: 'Sam', maxContext: 4096 });
 * console.log(JSON.stringify(prompt.messages.map((m) => m.role))); // => ["system","assistant","user","system"]
 * console.log(prompt.tokens <= 4096); // => true
 * ```
 */
export declare function buildPrompt(request: BuildPromptRequest): PromptResult;
/**
 * Expands CBS macros (`{{char}}`, `{{user}}`, `{{random::a::b}}`, ...) in a text.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { expandMacros, readCard } from 'ccv3';
 *
 * const card = readCard(readFileSync('examples/ember.png'));
 * console.log(expandMacros('{{char}} greets {{user}}.', { card, user: 'Sam' })); // => Ember greets Sam.
 * console.log(expandMacros('{{upper::lamp}} {{roll::1}}')); // => LAMP 1
 * ```
 */
export declare function expandMacros(text: string, context?: MacroContext): string;
/**
 * Counts the tokens of a text ('o200k' by default).
 *
 * @example
 * ```js
 * import { countTokens } from 'ccv3';
 *
 * console.log(countTokens('The lamp of the lighthouse is lit.')); // => 8
 * console.log(countTokens('The lamp of the lighthouse is lit.', 'cl100k')); // => 9
 * ```
 */
export declare function countTokens(text: string, encoding?: Encoding): number;
/**
 * Registers a tokenizer vocabulary's bytes (the package's `vocab/*.vocab` files); Node does this on first need.
 *
 * @example
 * ```js
 * import { readFileSync } from 'node:fs';
 * import { createRequire } from 'node:module';
 * import { countTokens, registerVocabulary } from 'ccv3';
 *
 * // What a host without file access does (Node loads the shipped file by itself on first need).
 * const file = createRequire(import.meta.url).resolve('ccv3/vocab/cl100k_base.vocab');
 * registerVocabulary('cl100k', readFileSync(file));
 * console.log(countTokens('hello world', 'cl100k')); // => 2
 * ```
 */
export declare function registerVocabulary(encoding: Encoding, bytes: Uint8Array): void;
/**
 * The package version.
 *
 * @example
 * ```js
 * import { version } from 'ccv3';
 *
 * console.log(version); // the package.json version, e.g. 0.1.0
 * ```
 */
export declare const version: string;
