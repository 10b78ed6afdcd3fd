// Runs the browser engine under Node.js for tests and benchmarks: the wasm
// file is the first argument, requests arrive as JSON lines on stdin, and
// each answer goes out as one JSON line `{ "answer": ..., "ms": ... }`.
// Appended to fogblast-wasm.js, whose `loadEngine` it uses.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const engine = await loadEngine(readFileSync(process.argv[process.argv.length - 1]));
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const started = performance.now();
  const answer = engine.call(JSON.parse(line));
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ answer, ms }) + '\n');
}
