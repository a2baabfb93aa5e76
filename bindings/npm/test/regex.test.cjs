'use strict';
// Regex keys that need backtracking (lookaround, backreferences) in the npm core. The core leaves
// `regress` out for size (issue 11, section 5: core under 2.5 MB) and checks their ECMAScript
// syntax with the JavaScript engine's own RegExp (ccv3_lore::set_regex_syntax_check), as
// SillyTavern's browser does (SillyTavern 1.12 world-info.js: keys of the `/pattern/flags` form
// are `new RegExp(pattern, flags)`; an invalid one matches nothing).
const test = require('node:test');
const assert = require('node:assert/strict');
const ccv3 = require('ccv3');

function entry(key, content, i) {
  return { keys: [key], content, enabled: true, insertion_order: i, use_regex: false, extensions: {} };
}

test('backtracking regex keys: valid ones match, invalid ones match nothing', () => {
  const book = {
    name: 'Regex',
    extensions: {},
    entries: [
      entry('/(?<=fire )dragon/i', 'lookbehind', 0),
      entry('/(\\w+) and \\1/', 'backreference', 1),
      entry('/(?<=fire dragon/', 'unclosed group', 2),
      entry('/(?<=a)\\k<missing>/u', 'unknown group name', 3),
    ],
  };
  const chat = [{ role: 'user', name: 'U', content: 'A Fire dragon, tea and tea.' }];
  const r = ccv3.scanLorebook({ books: [book], chat });
  assert.deepEqual(r.activated.map((a) => a.content).sort(), ['backreference', 'lookbehind']);
});
