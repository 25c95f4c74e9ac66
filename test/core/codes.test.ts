import { describe, expect, it } from 'vitest';
import { CODE_ALPHABET, CODE_LENGTH, generateCode, generateCodes } from '../../src/core/codes.js';

describe('generateCodes', () => {
  it('draws as many codes as asked, each of 12 characters of the alphabet after the prefix', () => {
    const pattern = new RegExp(`^[${CODE_ALPHABET}]{${CODE_LENGTH}}$`);
    const codes = generateCodes(5000);
    expect(codes).toHaveLength(5000);
    for (const code of codes) expect(code).toMatch(pattern);
    // 31^12 codes: a repeat among 5000 would mean the bytes are reused.
    expect(new Set(codes).size).toBe(5000);
    for (const code of generateCodes(3, 'VIP-')) expect(code).toMatch(new RegExp(`^VIP-[${CODE_ALPHABET}]{${CODE_LENGTH}}$`));
    expect(generateCodes(0)).toEqual([]);
    expect(generateCode('X')).toMatch(new RegExp(`^X[${CODE_ALPHABET}]{${CODE_LENGTH}}$`));
  });

  it('uses every character of the alphabet in every position', () => {
    const seen = Array.from({ length: CODE_LENGTH }, () => new Set<string>());
    for (const code of generateCodes(2000)) [...code].forEach((ch, i) => seen[i]!.add(ch));
    for (const position of seen) expect(position.size).toBe(CODE_ALPHABET.length);
  });
});
