// Loads the ccv3 npm package's browser entry (WebAssembly core + glue) shipped in lib/ccv3/.
import init, * as ccv3 from './lib/ccv3/web/index.js';

let loading = null;

/** Resolves to the initialised package (its o200k and cl100k vocabularies loaded). */
export function loadCcv3() {
    if (!loading) {
        loading = (async () => {
            await init();
            await Promise.all([ccv3.loadTokenizer('cl100k'), ccv3.loadTokenizer('o200k')]);
            return ccv3;
        })();
    }
    return loading;
}
