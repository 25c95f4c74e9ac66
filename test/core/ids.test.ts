import { describe, expect, it } from 'vitest';
import { parseRemoteId } from '../../src/core/ids.js';
import { parseCustomerIdentifier } from '../../src/customers/repository.js';

describe('parseRemoteId', () => {
  it('takes positive decimal integers below 2^53 and nothing else', () => {
    expect(parseRemoteId('1')).toBe(1);
    expect(parseRemoteId('7012345678')).toBe(7012345678);
    expect(parseRemoteId(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    for (const text of ['0', '-1', '01', '1.0', '1e3', ' 1', '', String(Number.MAX_SAFE_INTEGER + 1), '12345678901234567'])
      expect(parseRemoteId(text)).toBeNull();
  });
});

describe('parseCustomerIdentifier', () => {
  it('reads an e-mail (lower-cased) when there is an @, else a remote_id', () => {
    expect(parseCustomerIdentifier(' Ada@Example.com ')).toEqual({ email: 'ada@example.com' });
    expect(parseCustomerIdentifier('42')).toEqual({ remoteId: 42 });
    expect(parseCustomerIdentifier('ada')).toBeNull();
    expect(parseCustomerIdentifier('a\u0000@example.com')).toBeNull();
  });
});
