import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { parsePageRequest } from '../../src/http/pagination.js';

// The mode rules of docs/pagination.md on query strings alone, without a database.

const parse = (query: string, sortable: readonly string[] = ['id', 'created_at']) => parsePageRequest(new URLSearchParams(query), sortable);

function refused(query: string): { param: string; code: string; message: string }[] {
  try {
    parse(query);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('invalid_parameter');
    return (error as AppError).details ?? [];
  }
  throw new Error(`${query} was accepted`);
}

describe('parsePageRequest', () => {
  it('defaults to offset mode, page 1, 25 per page, by ID ascending', () => {
    expect(parse('')).toEqual({ mode: 'offset', page: 1, perPage: 25, sort: 'id', direction: 'asc' });
  });

  it('chooses cursor mode for since_id or limit, with since_id 0 and limit 25 by default', () => {
    expect(parse('pagination[limit]=10')).toEqual({ mode: 'cursor', sinceId: 0, limit: 10 });
    expect(parse('pagination[since_id]=7&sort[order_type]=nope')).toEqual({ mode: 'cursor', sinceId: 7, limit: 25 });
  });

  it('chooses offset mode whenever per_page is given, and ignores the cursor parameters then', () => {
    expect(
      parse('pagination[per_page]=50&pagination[since_id]=x&pagination[limit]=0&pagination[page]=3&sort[order_type]=created_at&sort[order_direction]=desc'),
    ).toEqual({
      mode: 'offset',
      page: 3,
      perPage: 50,
      sort: 'created_at',
      direction: 'desc',
    });
  });

  it('reads a since_id beyond every ID as the end of the list', () => {
    expect(parse('pagination[since_id]=99999999999999999999')).toEqual({ mode: 'cursor', sinceId: Number.MAX_SAFE_INTEGER, limit: 25 });
  });

  it('names every bad parameter of the mode used', () => {
    expect(refused('pagination[page]=0&pagination[per_page]=251&sort[order_type]=email&sort[order_direction]=up')).toEqual([
      { param: 'pagination[page]', code: 'invalid_value', message: 'pagination[page] must be an integer between 1 and 500, got "0"' },
      { param: 'pagination[per_page]', code: 'invalid_value', message: 'pagination[per_page] must be an integer between 1 and 250, got "251"' },
      { param: 'sort[order_type]', code: 'invalid_value', message: 'sort[order_type] must be one of: id, created_at; got "email"' },
      { param: 'sort[order_direction]', code: 'invalid_value', message: 'sort[order_direction] must be one of: asc, desc; got "up"' },
    ]);
    expect(refused('pagination[since_id]=-1&pagination[limit]=1.5')).toEqual([
      { param: 'pagination[since_id]', code: 'invalid_value', message: 'pagination[since_id] must be an integer at least 0, got "-1"' },
      { param: 'pagination[limit]', code: 'invalid_value', message: 'pagination[limit] must be an integer between 1 and 250, got "1.5"' },
    ]);
  });

  it('refuses a parameter given twice', () => {
    expect(refused('pagination[limit]=1&pagination[limit]=2')).toEqual([
      { param: 'pagination[limit]', code: 'repeated', message: 'pagination[limit] must be given once' },
    ]);
  });
});
