import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAIN } from '../../bench/lib/server.js';

// The commands README.md and docs/operations.md tell an operator to type exist as written: a
// path given to node is one the build makes, and each `loyalty` command is one the CLI has.

const ROOT = new URL('../../', import.meta.url);
const DOCS = ['README.md', 'docs/operations.md'].map((file) => ({ file, text: fs.readFileSync(new URL(file, ROOT), 'utf8') }));

const help = (command: string) =>
  new Promise<number>((resolve) => execFile(process.execPath, [MAIN, command, '--help'], (error) => resolve(error ? Number(error.code) : 0)));

describe('the install and command lines of the docs', () => {
  it('never send the reader to node_modules/.bin/loyalty, which npm does not make for the package itself', () => {
    for (const { file, text } of DOCS) expect(text, file).not.toContain('node_modules/.bin/loyalty');
  });

  it('start node on files the build makes', () => {
    const paths = DOCS.flatMap(({ text }) => [...text.matchAll(/\bnode (?:--[\w-]+(?:=\S+)? )*([\w./-]+\.js)\b/g)].map((m) => m[1]!));
    expect(paths.length).toBeGreaterThanOrEqual(4);
    for (const file of new Set(paths)) expect(fs.existsSync(new URL(file, ROOT)), file).toBe(true);
  });

  it('name loyalty commands that exist', async () => {
    const commands = new Set(DOCS.flatMap(({ text }) => [...text.matchAll(/^loyalty ([a-z]+)/gm)].map((m) => m[1]!)));
    expect([...commands]).toEqual(expect.arrayContaining(['serve', 'migrate', 'backup', 'restore']));
    for (const command of commands) expect(await help(command), command).toBe(0);
  });
});
