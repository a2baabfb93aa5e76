// The lintCard call as the web page makes it while the user types (issue 27): the card object
// read once, then an edit of entry 0's keys before each call (as the page's speed test types
// into it); prints the median, fastest and slowest call and the load average.
//
// node bindings/npm/bench/lint-edit.cjs PKG CARD [N]
//   PKG: a build of the package (target/bindings/npm); CARD: the 8.6 MB card with a 2,000-entry
//   book (python3 ../shared/peers/gen.py --out DIR: DIR/card_5MB_post.png); N calls (15).
//   DUMP=FILE writes the last call's findings there (to compare two builds).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const [pkg, card, n = '15'] = process.argv.slice(2);
if (!pkg || !card) {
  console.error('usage: node lint-edit.cjs PKG CARD [N]');
  process.exit(2);
}
const ccv3 = require(path.resolve(pkg));
const doc = ccv3.readCard(fs.readFileSync(card));
const options = { tokenizer: 'o200k' };
const entry = doc.data.character_book.entries[0];
const key = entry.keys[0];
let found;
for (let i = 0; i < 3; i++) found = ccv3.lintCard(doc, options);
const times = [];
for (let i = 0; i < Number(n); i++) {
  entry.keys[0] = key + 'harbour'.slice(0, (i % 7) + 1);
  const t0 = process.hrtime.bigint();
  found = ccv3.lintCard(doc, options);
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
times.sort((a, b) => a - b);
const ms = (x) => x.toFixed(1);
console.log(`${pkg}: lintCard median ${ms(times[times.length >> 1])} ms, fastest ${ms(times[0])}, slowest ${ms(times[times.length - 1])} (${found.length} findings; load average ${os.loadavg()[0].toFixed(1)})`);
if (process.env.DUMP) fs.writeFileSync(process.env.DUMP, JSON.stringify(found));
