// Compares SillyTavern's own macro engine (engine.mjs) with `ccv3 cbs --dialect sillytavern` on
// the cases of cases.jsonl (one {"text"} per line), and prints every difference (our own code).
// Usage: node compare.mjs ST_PACKAGE_DIR CCV3_BINARY [CASES]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [stRoot, ccv3, casesPath = fileURLToPath(new URL('./cases.jsonl', import.meta.url))] =
    process.argv.slice(2);
const input = readFileSync(casesPath, 'utf8');
const cases = input.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

const st = spawnSync(process.execPath, [fileURLToPath(new URL('./engine.mjs', import.meta.url)), stRoot], {
    input,
    encoding: 'utf8',
    env: process.env,
});
if (st.status !== 0) {
    console.error(st.stderr);
    process.exit(2);
}
const stOut = st.stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).output);

let same = 0;
const diffs = [];
// A case's `mes_example` goes to ccv3 in a card.
const scratch = mkdtempSync(join(tmpdir(), 'st-engine-compare-'));
cases.forEach((c, i) => {
    const args = ['cbs', c.text, '--dialect', 'sillytavern', '--char', 'Alice', '--user', 'Bob'];
    if (c.mes_example !== undefined) {
        const card = join(scratch, `card-${i}.json`);
        const data = { name: 'Alice', mes_example: c.mes_example };
        writeFileSync(card, JSON.stringify({ spec: 'chara_card_v3', spec_version: '3.0', data }));
        args.push('--card', card);
    }
    const r = spawnSync(ccv3, args, {
        encoding: 'utf8',
    });
    const ours = r.stdout;
    if (ours === stOut[i]) same += 1;
    else diffs.push({ text: c.text, sillytavern: stOut[i], ccv3: ours, note: c.note });
});
rmSync(scratch, { recursive: true, force: true });
for (const d of diffs) console.log(JSON.stringify(d));
console.log(`${same}/${cases.length} cases give the same text`);
