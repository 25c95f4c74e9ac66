import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Browser, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { CONSOLE_DIR } from '../../src/console/routes.js';
import { setup, type SetupOptions, type TestContext } from '../helpers/app.js';
import { launchBrowser, screenshot, screenshotDir, seriousA11yViolations } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';

// One server and one signed-in browser page per test file of the console's areas: the file's
// `it` blocks run in order on it, as one person's session.

export interface ConsoleSession {
  t: TestContext;
  page: Page;
  base: string;
  /** Goes to a console route (`#/programme/rewards`) and waits for its heading. */
  open(hash: string, heading: string): Promise<void>;
  /** The API's error shown beside a field: the field is marked invalid and reads it out (aria-describedby). */
  fieldError(field: Locator): Promise<string | null>;
  /** axe finds no serious or critical violation; a screenshot is kept. */
  expectAccessible(name: string): Promise<void>;
  /** Nothing but the tables is wider than a 390 px screen. */
  expectFitsPhone(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function openConsole(options: SetupOptions = {}): Promise<ConsoleSession> {
  if (!fs.existsSync(`${CONSOLE_DIR}/index.html`)) throw new Error(`${CONSOLE_DIR} is not built: run npm run build (npm test does it)`);
  const t = await setup(options);
  let browser: Browser | undefined;
  try {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${base}/console/#token=${encodeURIComponent(t.token)}`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    const shots = screenshotDir();
    const session: ConsoleSession = {
      t,
      page,
      base,
      async open(hash, heading) {
        await page.evaluate(`window.location.hash = ${JSON.stringify(hash)}`);
        await page
          .getByRole('heading', { name: heading, level: 1 })
          .waitFor({ timeout: 10_000 })
          .catch(async (error: unknown) => {
            // Say what the page shows instead: an error in words is quicker to read than a timeout.
            throw new Error(`no heading ${JSON.stringify(heading)} at ${hash}; the page says: ${await page.evaluate<string>('document.body.innerText')}`, {
              cause: error,
            });
          });
      },
      async fieldError(field) {
        await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
        return page.locator(`[id="${await field.getAttribute('aria-describedby')}"]`).textContent();
      },
      async expectAccessible(name) {
        expect(await seriousA11yViolations(page), `axe on ${name}`).toEqual([]);
        await screenshot(page, shots, `${TEST_DIALECT}-${name}`);
      },
      async expectFitsPhone(name) {
        const size = page.viewportSize()!;
        await page.setViewportSize({ width: 390, height: 844 });
        try {
          expect(await page.evaluate<number>('document.documentElement.scrollWidth'), name).toBeLessThanOrEqual(390);
          await session.expectAccessible(`${name}-390px`);
        } finally {
          await page.setViewportSize(size);
        }
      },
      async close() {
        await browser?.close();
        await t.close();
      },
    };
    return session;
  } catch (error) {
    await browser?.close();
    await t.close();
    throw error;
  }
}
