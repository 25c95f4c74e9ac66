import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

// package.json names a license: the file that grants it ships beside it.

describe('license', () => {
  it('has the LICENSE file that package.json names', () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { license: string };
    expect(pkg.license).toBe('MIT');
    expect(fs.readFileSync(new URL('../../LICENSE', import.meta.url), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) \d{4} .+\n\nPermission is hereby granted, free of charge/,
    );
  });
});
