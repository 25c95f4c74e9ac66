import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe } from 'vitest';
import { BROWSER_CANDIDATES as CANDIDATES, BROWSER_PATH } from '../../bench/lib/browser.js';

// A real browser for the user-interface tests: the machine's Chromium (bench/lib/browser.ts).
// Where none is installed the tests say so and skip, unless LOYALTY_REQUIRE_BROWSER=1 (CI),
// where a missing browser fails.

export { BROWSER_PATH, launchBrowser } from '../../bench/lib/browser.js';
const REQUIRED = process.env.LOYALTY_REQUIRE_BROWSER === '1';

/** `describe`, or `describe.skip` with a line saying why when no browser is installed (a failure under LOYALTY_REQUIRE_BROWSER=1). */
export function describeInBrowser(name: string, body: () => void): void {
  if (BROWSER_PATH === null) {
    if (REQUIRED) throw new Error(`LOYALTY_REQUIRE_BROWSER=1 but no Chromium at ${CANDIDATES.join(', ')} (apt-get install chromium, or set CHROMIUM_PATH)`);
    process.stderr.write(`${name}: skipped, no Chromium installed (looked at ${CANDIDATES.join(', ')})\n`);
    describe.skip(name, body);
    return;
  }
  describe(name, body);
}

/** Where screenshots go: SCREENSHOT_DIR, else a temporary folder (printed either way). */
export function screenshotDir(): string {
  const dir = process.env.SCREENSHOT_DIR ? path.resolve(process.env.SCREENSHOT_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-screenshots-'));
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export async function screenshot(page: Page, dir: string, name: string): Promise<string> {
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  process.stdout.write(`screenshot: ${file}\n`);
  return file;
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. It is evaluated through
 * the DevTools protocol, so the page's Content-Security-Policy stays on while it runs.
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<AxeViolation[]>(`axe.run(document).then((result) => result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target) + ": " + n.failureSummary),
  })))`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
