// The only SillyTavern modules imported directly (beside `SillyTavern.getContext()`), for values
// its context does not give. Checked on SillyTavern 1.19.0 (see the README).
//   getWorldInfoSettings (public/scripts/world-info.js): the World Info settings the scan used.
//   getMaxPromptTokens (public/script.js): the context size `Generate` passes to the scan, for
//   the dry-run button (a real generation hands it to the extension's generate interceptor).
export { getWorldInfoSettings } from '../../../world-info.js';
export { getMaxPromptTokens } from '../../../../script.js';
