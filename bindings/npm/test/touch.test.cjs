'use strict';
// Issue 29, read + touch everything: a small book whose entries all stand as the model keeps them
// is handed out as the card's text and built by JSON.parse on first access, like a big one; any
// entry the model repairs (or, with parseDecorators, splits) sends the card down the plain path.
// Either way readCard + JSON.stringify must give exactly what it gave for the WebAssembly core's
// read_card (the model read of the whole card as JSON text, what readCard parsed before), byte
// for byte.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('path');
const ccv3 = require('ccv3');

const raw = require(path.join(path.dirname(require.resolve('ccv3')), 'node', 'ccv3_wasm.js'));

// CRC-32 of PNG chunks (ISO 3309, as the PNG specification defines it).
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  Buffer.from(data).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

// A PNG (the image of one the package writes) whose only card chunk is `ccv3` holding `text`
// exactly as given, base64 as the V3 spec writes it.
const IMAGE = (() => {
  const png = ccv3.writeCard({ spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'I' } }, { format: 'png' });
  const kept = [png.subarray(0, 8)];
  for (let at = 8; at < png.length; ) {
    const len = Buffer.from(png.buffer, png.byteOffset).readUInt32BE(at);
    const type = Buffer.from(png.subarray(at + 4, at + 8)).toString('latin1');
    if (type !== 'tEXt' && type !== 'IEND') kept.push(png.subarray(at, at + 12 + len));
    at += 12 + len;
  }
  return Buffer.concat(kept);
})();
function pngOf(text) {
  const data = Buffer.concat([Buffer.from('ccv3\0', 'latin1'), Buffer.from(Buffer.from(text, 'utf8').toString('base64'), 'latin1')]);
  return Buffer.concat([IMAGE, chunk('tEXt', data), chunk('IEND', Buffer.alloc(0))]);
}

const entry = (i, extra = '') =>
  `{"keys":["k${i}","\\u00e9${i}"],"content":"Entry ${i}: caf\u00e9 \\"q\\" \\n","extensions":{"depth":${i},"x":null},` +
  `"enabled":${i % 2 === 0},"insertion_order":${i}.0,"use_regex":false,"name":"n${i}","priority":1e1,"id":${i % 2 ? `"s${i}"` : i}${extra}}`;
const cardText = (entries, book = '') =>
  `{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Small","description":"d \\ud83d\\ude00",` +
  `"tags":["a"],"character_book":{"name":"B"${book},"entries":[${entries.join(',')}],"z":1},"extensions":{"e":[1,{"f":2}]}}}`;

const asIs = Array.from({ length: 20 }, (_, i) => entry(i));
// Each a small card; `path`: the parts read_card_parts hands out with parseDecorators (true, false).
const cases = [
  ['every entry as it stands', cardText(asIs), ['as-is', 'as-is']],
  ['spaced text', cardText(asIs).replace(/,"/g, ' ,\n "').replace(/:/g, ' : '), ['as-is', 'as-is']],
  ['a decorator line', cardText([...asIs, entry(20).replace('Entry 20', '@@depth 3\\nEntry 20')]), ['plain', 'as-is']],
  ['a decorators field', cardText([...asIs, entry(20, ',"decorators":[]')]), ['plain', 'as-is']],
  ['a missing required field', cardText([...asIs, '{"keys":["m"],"content":"c"}']), ['plain', 'plain']],
  ['a field of the wrong type', cardText([...asIs, entry(20).replace('"enabled":true', '"enabled":"yes"')]), ['plain', 'plain']],
  ['a key written twice', cardText([...asIs, entry(20, ',"name":"again"')]), ['plain', 'plain']],
  ['an escaped key', cardText([...asIs, entry(20).replace('"name"', '"n\\u0061me"')]), ['as-is', 'as-is']],
  ['a key written twice, once escaped', cardText([...asIs, entry(20, ',"n\\u0061me":"again"')]), ['plain', 'plain']],
  ['an item that is not an object', cardText([...asIs, '3']), ['plain', 'plain']],
  ['an unknown key written twice', cardText([...asIs, entry(20, ',"zz":1,"zz":2')]), ['plain', 'plain']],
  // No string in the array, so where it ends is not found: the plain path.
  ['no entries', cardText([]), ['plain', 'plain']],
  ['a book field of the wrong type', cardText(asIs, ',"scan_depth":"3"'), ['as-is', 'as-is']],
];

function pathOf(parts) {
  // A small book read wholly as it stands: its entries' text as a string.
  if (typeof parts[2] === 'string' && parts[3] === undefined) return 'as-is';
  if (parts[2] !== undefined && parts[3] !== undefined) return parts[3].length === 2 ? 'as-is' : 'as-is + reread';
  if (parts[2] !== undefined) return 'later';
  return 'plain';
}

for (const [label, text, paths] of cases) {
  test(`a small card, ${label}: readCard + JSON.stringify is the model read, byte for byte`, () => {
    const png = pngOf(text);
    [true, false].forEach((parse, i) => {
      const want = JSON.parse(raw.read_card(png, parse));
      const got = JSON.stringify(ccv3.readCard(png, { parseDecorators: parse }));
      assert.ok(got === JSON.stringify(want), `parseDecorators ${parse}: ${got.slice(0, 300)}`);
      const card = ccv3.readCard(png, { parseDecorators: parse });
      assert.deepStrictEqual(card.data.character_book.entries, want.data.character_book.entries);
      assert.equal(pathOf(raw.read_card_parts(png, parse)), paths[i], `parseDecorators ${parse}`);
    });
  });
}

// The card around the entries (issue 29): a V3 card whose every field the model keeps as it is
// (SPEC_V3 "CharacterCard Object" types, required fields there, each key once) is handed out as
// its own text, with `[]` where the entries stand; anything the reader changes sends the card
// through the model. SillyTavern's top-level copies of the fields, unknown fields at each level,
// a key twice inside `extensions`, escapes and odd numbers all stand as they are.
const fullCard = (entries) =>
  '{"name":"Top","description":"top","creatorcomment":"c","avatar":"none","tags":["t"],' +
  '"spec":"chara_card_v3","spec_version":"3.0","zz_top":{"a":[1,2.5e3,-0.0]},' +
  '"data":{"name":"Ex\\u00e9 \\"q\\"","description":"d \\ud83d\\ude00","personality":"p","scenario":"s",' +
  '"first_mes":"hi","mes_example":"ex","creator_notes":"cn","system_prompt":"","post_history_instructions":"",' +
  '"alternate_greetings":["a","b"],"tags":[],"creator":"me","character_version":"1",' +
  '"extensions":{"talkativeness":"0.5","fav":false,"depth_prompt":{"depth":4,"prompt":"x"},"dup":1,"dup":2,' +
  '"big":123456789012345678901234567890,"f":1.0},' +
  '"group_only_greetings":[],"nickname":"","creator_notes_multilingual":{"fr":"bonjour"},' +
  '"source":["https://example.invalid"],"creation_date":1700000000,"modification_date":1.5,' +
  '"assets":[{"type":"icon","uri":"ccdefault:","name":"main","ext":"png","x":1}],"zz_data":null,' +
  '"character_book":{"name":"B","description":"","scan_depth":3,"token_budget":512,' +
  `"recursive_scanning":false,"extensions":{},"zz_book":[null],"entries":[${entries.join(',')}]}}}`;
const full = fullCard(asIs);
const edit = (from, to) => {
  assert.ok(full.includes(from), from);
  return full.replace(from, to);
};
const cardCases = [
  ['as it stands', full, true],
  ['spaced', full.replace(/,"/g, ' ,\n "'), true],
  ['V2', edit('chara_card_v3', 'chara_card_v2'), false],
  ['a required field missing', edit('"creator":"me",', ''), false],
  ['a field of the wrong type', edit('"tags":[],', '"tags":"a, b",'), false],
  ['a number as a string', edit('1700000000', '"1700000000"'), false],
  ['a null field', edit('"nickname":"",', '"nickname":null,'), false],
  ['a key written twice', edit('"scenario":"s",', '"scenario":"s","scenario":"t",'), false],
  ['a top-level key written twice', edit('"avatar":"none",', '"avatar":"none","avatar":"x",'), false],
  ['an unknown key written twice', edit('"zz_data":null,', '"zz_data":null,"zz_data":1,'), false],
  ['a numeric spec_version', edit('"spec_version":"3.0"', '"spec_version":3.0'), false],
  ['extensions not an object', edit('"extensions":{"talkativeness"', '"extensions":"{}","x":{"talkativeness"'), false],
  ['a hybrid field', edit('"nickname":"",', '').replace('"avatar"', '"nickname":"N","avatar"'), false],
  ['a book without extensions', edit('"extensions":{},"zz_book"', '"zz_book"'), false],
  ['an asset without ext', edit(',"ext":"png"', ''), false],
  ['an asset that is not an object', edit('"assets":[{', '"assets":[1,{'), false],
];

for (const [label, text, asItStands] of cardCases) {
  test(`a small V3 card, ${label}: the card read as it stands only when the model keeps it`, () => {
    const png = pngOf(text);
    [true, false].forEach((parse) => {
      const want = JSON.stringify(JSON.parse(raw.read_card(png, parse)));
      const got = JSON.stringify(ccv3.readCard(png, { parseDecorators: parse }));
      assert.ok(got === want, `parseDecorators ${parse}: ${got.slice(0, 300)}`);
      const parts = raw.read_card_parts(png, parse);
      assert.equal(typeof parts[2], 'string', `parseDecorators ${parse}`);
      assert.equal(parts[0] === text.replace(parts[2], '[]'), asItStands, `parseDecorators ${parse}`);
    });
  });
}

// ASCII entries (issue 29): the read core hands a book's entries text to the host's Latin-1
// decoder (Node's Buffer) when every byte of it is ASCII (escapes such as \u00e9 are ASCII text),
// else decodes it as UTF-8; either way the string is the same and readCard + JSON.stringify is
// the model read.
test('the entries text is handed to the Latin-1 decoder only when it is ASCII, the same text either way', () => {
  const readRaw = require(path.join(path.dirname(require.resolve('ccv3')), 'node', 'ccv3_read.js'));
  // No exponent (the fast check pass leaves those to the serde pass, which does not tell ASCII).
  const plain = (e) => e.replace('caf\u00e9', 'cafe \\u00e9').replace('1e1', '10');
  const ascii = asIs.map(plain);
  const texts = [
    ['ASCII entries', cardText(ascii), true],
    ['past ASCII outside the entries only', cardText(ascii).replace('"name":"Small"', '"name":"Sm\u00e4ll"'), true],
    ['one entry past ASCII', cardText([...ascii, plain(entry(20)).replace('cafe', 'caf\u00e9')]), false],
    ['past ASCII at the end of a long content', cardText([...ascii, plain(entry(20)).replace('cafe', `${'x'.repeat(40)}\u00e9`)]), false],
    ['an exponent (not told ASCII)', cardText(asIs.map((e) => e.replace('caf\u00e9', 'cafe'))), false],
  ];
  for (const [label, text, isAscii] of texts) {
    const png = pngOf(text);
    for (const parse of [true, false]) {
      let calls = 0;
      const latin1 = (bytes) => {
        calls++;
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
      };
      const parts = readRaw.read_card_parts(png, parse, latin1);
      assert.equal(calls, isAscii ? 1 : 0, `${label}, parseDecorators ${parse}`);
      assert.equal(typeof parts[2], 'string', label);
      assert.ok(parts[2] === readRaw.read_card_parts(png, parse)[2], label);
      const want = JSON.stringify(JSON.parse(raw.read_card(png, parse)));
      assert.ok(JSON.stringify(ccv3.readCard(png, { parseDecorators: parse })) === want, label);
    }
  }
});
