// Where things are: the repository root and the screenshots folder.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export const SCREENSHOTS =
  process.env.FOGBLAST_SCREENSHOTS || join(process.env.CARGO_TARGET_DIR || join(REPO, 'target'), 'browser-screenshots');

export const CHROMIUM = process.env.FOGBLAST_CHROMIUM || '/usr/bin/chromium';
