// Fogblast's rules and computer player compiled to WebAssembly (the
// `fogblast-wasm` crate). One JSON request in, one JSON answer out; see the
// crate's documentation for the operations. Works in a page, a worker and
// Node.js alike.

/**
 * Instantiates the module from its bytes (or a Response) and returns
 * `{ call(request) -> answer }`.
 */
export async function loadEngine(source, now = () => performance.now()) {
  const imports = { env: { fogblast_now_ms: now } };
  const { instance } =
    source instanceof Response
      ? await instantiateResponse(source, imports)
      : await WebAssembly.instantiate(source, imports);
  const wasm = instance.exports;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    call(request) {
      const bytes = encoder.encode(JSON.stringify(request));
      const ptr = wasm.fogblast_alloc(bytes.length);
      new Uint8Array(wasm.memory.buffer, ptr, bytes.length).set(bytes);
      const len = wasm.fogblast_call(ptr, bytes.length);
      const answer = new Uint8Array(wasm.memory.buffer, wasm.fogblast_answer_ptr(), len);
      return JSON.parse(decoder.decode(answer));
    },
  };
}

async function instantiateResponse(response, imports) {
  if (WebAssembly.instantiateStreaming) {
    try {
      return await WebAssembly.instantiateStreaming(response.clone(), imports);
    } catch {
      // A server without the wasm content type: fall back to bytes.
    }
  }
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}
