import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Browser } from 'playwright-core';
import { connect } from '../src/db/connect.js';
import { CONSOLE_DIR } from '../src/console/routes.js';
import type { Benchmark } from './index.js';
import { launchBrowser } from './lib/browser.js';
import { benchShop, scratchDatabase } from './lib/scratch.js';
import { startServer } from './lib/server.js';
import { benchArgs, median, postHistory } from './reports.js';

// `npm run bench -- console [sqlite|postgres] [--events N]`: the console's JavaScript, gzipped
// (budget 250 KB), and in Chromium the time from navigation to the Overview's three charts
// drawn (target under 1 s, console/README.md) for a shop with 1,000,000 events, beside the
// same page for a shop with none and the reports API calls the page makes, alternated in one run.

const CUSTOMERS = 1000;
const SAMPLES = 15;
const BUDGET_KB = 250;
const TARGET_MS = 1000;
const TOKEN_KEY = 'loyalty.console.token';

/** The gzipped size of every script of the built console, in KB. */
function bundleKb(): number {
  const assets = path.join(CONSOLE_DIR, 'assets');
  const scripts = fs.readdirSync(assets).filter((f) => f.endsWith('.js'));
  return scripts.reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(path.join(assets, f)), { level: 9 }).length, 0) / 1024;
}

// Runs in the page before its scripts: notes when the third chart is drawn (the Overview sets
// data-drawn on each chart's figure once Chart.js has drawn it, without animation).
const WATCH = `window.__drawnAt = null;
new MutationObserver((_, observer) => {
  if (document.querySelectorAll('figure[data-drawn]').length === 3) { window.__drawnAt = performance.now(); observer.disconnect(); }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-drawn'] });`;

interface Sample {
  drawn: number;
  /** The slowest reports API call of the page, start to end. */
  api: number;
}

/** One cold load of the Overview (a fresh browser context: no cache, the token in sessionStorage). */
async function loadOverview(browser: Browser, url: string, token: string): Promise<Sample> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    await context.addInitScript(`sessionStorage.setItem(${JSON.stringify(TOKEN_KEY)}, ${JSON.stringify(token)}); ${WATCH}`);
    const page = await context.newPage();
    await page.goto(`${url}/console/#/`);
    // Polled from outside (the page's policy forbids evaluating strings in it); the time is the page's own.
    const deadline = Date.now() + 60_000;
    while ((await page.evaluate('window.__drawnAt')) === null) {
      if (Date.now() > deadline) throw new Error('the Overview drew no charts within a minute');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return await page.evaluate<Sample>(`({
      drawn: window.__drawnAt,
      api: Math.max(...performance.getEntriesByType('resource').filter((e) => e.name.includes('/reports/')).map((e) => e.responseEnd - e.startTime)),
    })`);
  } finally {
    await context.close();
  }
}

async function runDialect(dialect: 'sqlite' | 'postgres', events: number): Promise<void> {
  const scratch = await scratchDatabase(dialect, 'console');
  const shops: { name: string; token: string }[] = [];
  try {
    const database = connect(scratch.url);
    const now = Date.now();
    try {
      for (const count of [events, 0]) {
        const { shop, token } = await benchShop(database, CUSTOMERS, now);
        const started = performance.now();
        await postHistory(database, shop.id, count, now);
        process.stdout.write(`  ${count.toLocaleString('en-US')} events posted in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
        shops.push({ name: `${count.toLocaleString('en-US')} events`, token });
      }
    } finally {
      await database.close();
    }
    const server = await startServer(scratch.url, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
    const browser = await launchBrowser();
    const samples = shops.map(() => [] as Sample[]);
    try {
      for (const shop of shops) await loadOverview(browser, server.url, shop.token);
      // Alternated, so that both shops see the same machine.
      for (let i = 0; i < SAMPLES; i++) for (let k = 0; k < shops.length; k++) samples[k]!.push(await loadOverview(browser, server.url, shops[k]!.token));
    } finally {
      await browser.close();
      await server.stop();
    }
    const lines = shops.map((shop, k) => {
      const drawn = median(samples[k]!.map((s) => s.drawn));
      const api = median(samples[k]!.map((s) => s.api));
      const verdict = k === 0 ? (drawn.median < TARGET_MS ? `ok (< ${TARGET_MS} ms)` : `ABOVE ${TARGET_MS} ms`) : '';
      return `  ${shop.name.padEnd(18)} charts drawn: median ${drawn.median.toFixed(0)} ms, p99 ${drawn.p99.toFixed(0)} ms; slowest reports call: median ${api.median.toFixed(1)} ms  ${verdict}`;
    });
    const ratio = median(samples[0]!.map((s) => s.drawn)).median / median(samples[1]!.map((s) => s.drawn)).median;
    process.stdout.write(
      [
        `console on ${dialect}: navigation to the Overview's charts drawn, a fresh context each, ${SAMPLES} loads per shop, alternated`,
        ...lines,
        `  ratio to the empty shop ${ratio.toFixed(2)}`,
        '',
      ].join('\n'),
    );
  } finally {
    await scratch.drop();
  }
}

export const consoleBench: Benchmark = {
  description:
    "The console's JavaScript gzipped, and the Overview drawn in Chromium for a shop with 1,000,000 events against an empty one [sqlite|postgres] [--events N]",
  async run(args) {
    const kb = bundleKb();
    process.stdout.write(`console JavaScript: ${kb.toFixed(1)} KB gzipped (budget ${BUDGET_KB} KB) ${kb <= BUDGET_KB ? 'ok' : 'ABOVE BUDGET'}\n`);
    const { dialects, events } = benchArgs(args);
    for (const dialect of dialects) await runDialect(dialect, events);
  },
};
