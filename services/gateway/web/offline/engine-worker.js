// The computer player for offline games, in a Web Worker so a long search
// never freezes the page. Messages in: `{ id, request }`; out: `{ id, answer }`.
import { loadEngine } from './fogblast-wasm.js';

const engine = fetch(new URL('fogblast.wasm', import.meta.url)).then((response) => loadEngine(response));

self.onmessage = async (event) => {
  const { id, request } = event.data;
  try {
    const answer = (await engine).call(request);
    self.postMessage({ id, answer });
  } catch (error) {
    self.postMessage({ id, answer: { ok: false, error: String(error) } });
  }
};
