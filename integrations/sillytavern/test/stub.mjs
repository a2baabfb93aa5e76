// An OpenAI-compatible chat completion backend for the tests: deterministic replies (the n-th
// request of a chat gets REPLIES[n % length]) that name no World Info key.
import http from 'node:http';

const REPLIES = ['I see.', 'Go on.', 'That is interesting.', 'Tell me more.', 'Understood.'];

/** Starts the stub on a free localhost port; resolves to {url, requests, close}. */
export function startStub() {
    const requests = [];
    const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c) => { body += c; });
        req.on('end', () => {
            res.setHeader('Content-Type', 'application/json');
            if (req.method === 'GET' && req.url.endsWith('/models')) {
                res.end(JSON.stringify({ object: 'list', data: [{ id: 'stub-model', object: 'model' }] }));
                return;
            }
            if (req.method === 'POST' && req.url.endsWith('/chat/completions')) {
                let parsed = {};
                try { parsed = JSON.parse(body); } catch (_) { /* counted as an empty request */ }
                requests.push(parsed);
                const content = REPLIES[(requests.length - 1) % REPLIES.length];
                res.end(JSON.stringify({
                    id: `stub-${requests.length}`, object: 'chat.completion', created: 0, model: 'stub-model',
                    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
                    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
                }));
                return;
            }
            res.statusCode = 404;
            res.end('{}');
        });
    });
    return new Promise((resolve) => {
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address();
            resolve({ url: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise((r) => server.close(r)) });
        });
    });
}
