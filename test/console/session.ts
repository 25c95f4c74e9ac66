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
  /** No text or control of `box` (a table's region, an open dialog) lies outside it or overflows its own box, at 1280 px and at 390 px. */
  expectInside(box: Locator, name: string): Promise<void>;
  /** No word of the console's own ("Percentage off", "Adjustment") in `box` is broken across lines, at 1280 px and at 390 px. */
  expectWholeWords(box: Locator, name: string): Promise<void>;
  /** No name of one word in `box` (a webhook's topic, a token's scope: customer.vip_tier_changed) is broken across lines, at 1280 px and at 390 px. */
  expectWholeNames(box: Locator, name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * What of an element's drawn descendants lies outside its box, or overflows its own box
 * (text cut or spilling): each as a line naming it. A closed dialog and a visually hidden table
 * head are not drawn, so they are passed over.
 */
const OUTSIDE = `(root) => {
  // What is not drawn (a closed <details>'s table) has no box to leave.
  if (!root.checkVisibility()) return [];
  const box = root.getBoundingClientRect();
  const said = (el) => el.tagName.toLowerCase() + ' "' + (el.textContent ?? '').trim().slice(0, 40) + '"';
  const wide = (el) => el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && !['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const found = [];
  if (root.scrollWidth > root.clientWidth + 1) found.push(said(root) + ' is ' + root.scrollWidth + ' px wide in ' + root.clientWidth + ' px');
  for (const el of root.querySelectorAll('*')) {
    if (!el.checkVisibility() || (el.closest('thead')?.getBoundingClientRect().width ?? 2) <= 1) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < box.left - 1 || r.right > box.right + 1) found.push(said(el) + ' spans ' + Math.round(r.left) + '-' + Math.round(r.right) + ' px outside ' + Math.round(box.left) + '-' + Math.round(box.right) + ' px');
    else if (wide(el)) found.push(said(el) + ' overflows: ' + el.scrollWidth + ' px in ' + el.clientWidth + ' px');
  }
  return found;
}`;

/**
 * The words of `root` broken across lines ("Percenta / ge off"): each word of letters in a text
 * of words alone (not an e-mail, a code or a key, which may break anywhere) whose letters lie on
 * more than one line.
 */
const SPLIT_WORDS = `(root) => {
  const found = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement?.checkVisibility() || !/^[\\p{L}\\s,.:'’()%-]+$/u.test(node.data)) continue;
    for (const m of node.data.matchAll(/\\p{L}{2,}/gu)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (lines.size > 1) found.push(m[0] + ' in "' + node.data.trim().slice(0, 40) + '"');
    }
  }
  return found;
}`;

/** The texts of `root` that are one word with no space (a name such as customer.vip_tier_changed) and lie on more than one line. */
const SPLIT_NAMES = `(root) => {
  const found = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const name = node.data.trim();
    if (!node.parentElement?.checkVisibility() || name === '' || /\\s/.test(name)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    if (new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size > 1) found.push(name);
  }
  return found;
}`;

/**
 * On a phone, where each row of a table is a card: each cell whose column name (its ::before,
 * data-label) takes more lines than the cell is tall, so that it runs over the next cell, or
 * whose name breaks inside a word ("Redemption s"; after a hyphen is fine). The name is measured in a copy of its box.
 */
const LABELS_OVERRUN = `(root) => {
  const found = [];
  for (const td of root.querySelectorAll('td[data-label]')) {
    if (!td.checkVisibility() || td.dataset.label === '') continue;
    const before = getComputedStyle(td, '::before');
    const copy = document.createElement('div');
    copy.textContent = td.dataset.label;
    for (const p of ['width', 'font-family', 'font-size', 'font-weight', 'font-style', 'line-height', 'overflow-wrap', 'word-break', 'letter-spacing']) copy.style.setProperty(p, before.getPropertyValue(p));
    Object.assign(copy.style, { position: 'absolute', visibility: 'hidden', left: '0', top: '0' });
    document.body.append(copy);
    const needed = copy.getBoundingClientRect().height;
    const range = document.createRange();
    const split = [...copy.textContent.matchAll(/[^\\s-]+/g)].some((word) => {
      range.setStart(copy.firstChild, word.index);
      range.setEnd(copy.firstChild, word.index + word[0].length);
      return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size > 1;
    });
    copy.remove();
    const style = getComputedStyle(td);
    const inner = td.getBoundingClientRect().height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    const said = '"' + td.dataset.label + '" (' + (td.textContent ?? '').trim().slice(0, 30) + ')';
    if (needed > inner + 1) found.push(said + ' needs ' + Math.round(needed) + ' px in a cell ' + Math.round(inner) + ' px tall');
    if (split) found.push(said + ' breaks inside a word');
  }
  return found;
}`;

/** At 1280 px, then at 390 px, what `probe` (a function of the box's element, as text) finds in `box`: none, or the test fails naming them. */
async function expectNoneAtBothWidths(page: Page, box: Locator, probe: string, name: string): Promise<void> {
  const size = page.viewportSize()!;
  try {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await expect
        .poll(() => box.evaluate(new Function('root', `return (${probe})(root)`) as (root: unknown) => string[]), { message: `${name} at ${width} px` })
        .toEqual([]);
    }
  } finally {
    await page.setViewportSize(size);
  }
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
          // A chart's canvas follows the window a frame later (ResizeObserver).
          await expect.poll(() => page.evaluate<number>('document.documentElement.scrollWidth'), { message: name }).toBeLessThanOrEqual(390);
          // Each card's column names stay beside their own cell, whole.
          await expect
            .poll(() => page.locator('body').evaluate(new Function('root', `return (${LABELS_OVERRUN})(root)`) as (root: unknown) => string[]), {
              message: `${name}: column names on the cards`,
            })
            .toEqual([]);
          await session.expectAccessible(`${name}-390px`);
        } finally {
          await page.setViewportSize(size);
        }
      },
      expectInside: (box, name) => expectNoneAtBothWidths(page, box, OUTSIDE, name),
      expectWholeWords: (box, name) => expectNoneAtBothWidths(page, box, SPLIT_WORDS, name),
      expectWholeNames: (box, name) => expectNoneAtBothWidths(page, box, SPLIT_NAMES, name),
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
