// TypeScript declarations for `import ... from 'ccv3'` in Node (the ES module entry, index.mjs):
// the same functions and types as the CommonJS entry (index.d.ts), plus the default export.
export * from './index.js';
import * as ccv3 from './index.js';
export default ccv3;
