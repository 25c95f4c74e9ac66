import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The generated types reject what the server would: types-fixture.ts compiles as it is (so
// every `@ts-expect-error` line is an error), and without those directives it fails on exactly
// those lines (so no line is an error for a reason of its own, like a broken import).

const FIXTURE = path.resolve(import.meta.dirname, 'types-fixture.ts');
const STRIPPED = path.resolve(import.meta.dirname, 'types-fixture-stripped.ts');
const CLIENT_CONFIG = path.resolve(import.meta.dirname, '../../client/tsconfig.json');

/** The client's own compiler options (DOM, no Node types), so the fixture compiles as a browser integrator's code would. */
function clientOptions(): ts.CompilerOptions {
  const { config } = ts.readConfigFile(CLIENT_CONFIG, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, path.dirname(CLIENT_CONFIG));
  return { ...options, noEmit: true, rootDir: undefined, declaration: false };
}

describe("the client's types", () => {
  it('refuse a wrong path, a missing required body field, a wrong query type and a text path id', () => {
    const source = fs.readFileSync(FIXTURE, 'utf8');
    const lines = source.split('\n');
    const expected = lines.flatMap((line, i) => (line.trim().startsWith('// @ts-expect-error') ? [i + 2] : []));
    expect(expected.length).toBeGreaterThanOrEqual(4);
    const stripped = lines.map((line) => (line.trim().startsWith('// @ts-expect-error') ? '' : line)).join('\n');

    const host = ts.createCompilerHost(clientOptions());
    const read = host.getSourceFile.bind(host);
    host.getSourceFile = (name, language, ...rest) =>
      path.resolve(name) === STRIPPED ? ts.createSourceFile(name, stripped, language) : read(name, language, ...rest);
    host.fileExists = (
      (exists) => (name: string) =>
        path.resolve(name) === STRIPPED || exists(name)
    )(host.fileExists.bind(host));
    const program = ts.createProgram([FIXTURE, STRIPPED], clientOptions(), host);
    const diagnostics = ts.getPreEmitDiagnostics(program);
    const at = (file: string) =>
      diagnostics
        .filter((d) => d.file && path.resolve(d.file.fileName) === file)
        .map((d) => ({ line: d.file!.getLineAndCharacterOfPosition(d.start!).line + 1, text: ts.flattenDiagnosticMessageText(d.messageText, '\n') }));

    expect(at(FIXTURE)).toEqual([]);
    expect(diagnostics.filter((d) => !d.file || ![FIXTURE, STRIPPED].includes(path.resolve(d.file.fileName)))).toEqual([]);
    expect([...new Set(at(STRIPPED).map((d) => d.line))]).toEqual(expected);
  });
});
