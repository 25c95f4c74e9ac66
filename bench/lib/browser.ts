import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

// The machine's Chromium (Debian's `chromium`), driven by playwright-core, which never
// downloads a browser of its own: for the console's browser tests and its benchmark.

export const BROWSER_CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => Boolean(p));

export const BROWSER_PATH: string | null = BROWSER_CANDIDATES.find((p) => fs.existsSync(p)) ?? null;

export function launchBrowser(): Promise<Browser> {
  if (BROWSER_PATH === null) throw new Error(`no Chromium at ${BROWSER_CANDIDATES.join(', ')} (apt-get install chromium, or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: BROWSER_PATH,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}
