// Gives the page's rules (js/rules.js) the wasm module the gateway's build
// made, as the page has it after `loadRules`, so the model and the replay are
// tested with the very rules they use. The module is the one
// services/gateway/build_wasm.rs builds: under $CARGO_TARGET_DIR or the
// workspace's target/, or wherever $FOGBLAST_WASM points.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../../../../crates/wasm/js/fogblast-wasm.js';
import { useRules } from '../js/rules.js';

const workspace = fileURLToPath(new URL('../../../../', import.meta.url));
const built = 'wasm/wasm32-unknown-unknown/release/fogblast_wasm.wasm';
const candidates = [process.env.FOGBLAST_WASM, process.env.CARGO_TARGET_DIR && `${process.env.CARGO_TARGET_DIR}/${built}`, `${workspace}target/${built}`];
const path = candidates.find((p) => p && existsSync(p));
if (!path) {
  throw new Error(`no rules module at ${candidates.filter(Boolean).join(' or ')}: build it with \`cargo build -p fogblast-gateway\` (or cargo build --release -p fogblast-wasm --target wasm32-unknown-unknown --target-dir target/wasm)`);
}

export const rules = await loadEngine(readFileSync(path));
useRules(rules);
