// Node entry (ES module): the same instance as require('ccv3').
import api from './index.cjs';

export const {
  readCard,
  readCardFiles,
  readCardSummary,
  readLorebook,
  parseDecorators,
  serializeDecorators,
  writeCard,
  writeLorebook,
  validateCard,
  validateLorebook,
  lintCard,
  lintLorebook,
  loreGraph,
  portability,
  scanLorebook,
  compileLorebooks,
  CompiledLorebooks,
  sillyTavernScanOptions,
  buildPrompt,
  expandMacros,
  countTokens,
  registerVocabulary,
  version,
} = api;
export default api;
