import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errorStatus, errorType } from '../../src/errors.js';

// docs/errors.md is what API users read: its table of codes must say what src/errors.ts does.

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('docs/errors.md', () => {
  it('lists every error code with its status and type, and no other', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| `([a-z_]+)` \|/gm)].map(([, code, status, type]) => ({ code, status: Number(status), type }));
    expect(rows).toEqual(ERROR_CODES.map((code) => ({ code, status: errorStatus(code), type: errorType(code) })));
  });

  it('links only to pages that exist', () => {
    for (const page of fs.readdirSync(path.join(ROOT, 'docs'))) {
      const text = fs.readFileSync(path.join(ROOT, 'docs', page), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([a-z-]+\.md)(#[a-z-]+)?\)/g))
        expect(fs.existsSync(path.join(ROOT, 'docs', target!)), `${page} links ${target}`).toBe(true);
    }
  });
});
