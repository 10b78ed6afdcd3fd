// A real `fogblast up` for one test file: every service in one process on
// embedded stores, listening on a free loopback port, its archive in a
// temporary SQLite file. The binary comes from FOGBLAST_BIN (the cargo test
// target passes CARGO_BIN_EXE_fogblast) or target/debug/fogblast.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './paths.js';

export function binary() {
  const bin = process.env.FOGBLAST_BIN || join(process.env.CARGO_TARGET_DIR || join(REPO, 'target'), 'debug', 'fogblast');
  if (!existsSync(bin)) {
    throw new Error(`no fogblast binary at ${bin}: build it (cargo build -p fogblast) or set FOGBLAST_BIN`);
  }
  return bin;
}

/**
 * Starts `fogblast up` (with `extraArgs` after its own); resolves once
 * /readyz answers. `tournamentMinMinutes` lets arenas be that short (the
 * server's floor is 10 minutes; a test's arena lasts one).
 */
export async function startServer({ extraArgs = [], tournamentMinMinutes = null } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'fogblast-browser-'));
  const short = tournamentMinMinutes == null ? [] : ['--tournament-min-minutes', String(tournamentMinMinutes)];
  // Its own live store too: the default file in the working directory would
  // carry one file's games in progress into the next file's server.
  const args = ['up', '--listen', '127.0.0.1:0', '--database-url', `sqlite:${join(dir, 'fogblast.db')}?mode=rwc`, '--live-store', join(dir, 'live.db'), '--engine-workers', '1', ...short, ...extraArgs];
  const child = spawn(binary(), args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, RUST_BACKTRACE: '1' } });
  const lines = [];
  let exited = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  // Never outlive the test process, whatever ends it.
  const reap = () => {
    if (exited === null) child.kill('SIGKILL');
  };
  process.once('exit', reap);
  const addr = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fogblast up did not start in 20 s:\n${lines.join('\n')}`)), 20_000);
    const take = (chunk) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line) continue;
        lines.push(line);
        if (lines.length > 2000) lines.shift();
        const m = /gateway listening addr=(\S+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('exit', () => {
      clearTimeout(timer);
      reject(new Error(`fogblast up exited before listening:\n${lines.join('\n')}`));
    });
  });
  const url = `http://${await addr}`;
  for (let i = 0; ; i++) {
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) break;
    } catch {
      // not yet
    }
    if (i > 200) throw new Error(`${url}/readyz never answered:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    logs: (n = 40) => lines.slice(-n).join('\n'),
    async stop() {
      if (exited === null) {
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await done;
        clearTimeout(timer);
      }
      process.removeListener('exit', reap);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
