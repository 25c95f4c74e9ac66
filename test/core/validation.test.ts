import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { compileValidator, showError, toErrorDetails, toFieldErrors } from '../../src/core/validation.js';

// Schema failures are located by structure (element index, field) and shown as params only
// at the end: the two must agree.

const Body = Type.Object(
  {
    items: Type.Array(Type.Object({ name: Type.String(), tags: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: false }), { minItems: 1 }),
  },
  { additionalProperties: false },
);
const validate = compileValidator(Body);

function failures(body: unknown) {
  expect(validate(body)).toBe(false);
  return validate.errors ?? [];
}

describe('toFieldErrors', () => {
  it('tells the element and the field of a failure inside the named list', () => {
    const errors = failures({ items: [{ name: 'a' }, { tags: ['x', 3] }], colour: 'red' });
    const located = toFieldErrors(errors, 'items').map(({ index, field, below, code }) => ({ index, field, below, code }));
    expect(located).toEqual(
      expect.arrayContaining([
        { index: 1, field: 'name', below: undefined, code: 'missing' },
        { index: 1, field: 'tags', below: '[1]', code: 'invalid_type' },
        { index: undefined, field: 'colour', below: undefined, code: 'unknown_parameter' },
      ]),
    );
    expect(
      toFieldErrors(errors, 'items')
        .map((e) => showError(e, 'items').param)
        .sort(),
    ).toEqual(['colour', 'items[1].name', 'items[1].tags[1]']);
  });

  it('shows the same params with or without the list named', () => {
    const errors = failures({ items: [{ name: 1 }, 'x'] });
    expect(toFieldErrors(errors, 'items').map((e) => showError(e, 'items'))).toEqual(toErrorDetails(errors));
    expect(toErrorDetails(errors).map((d) => d.param)).toEqual(['items[0].name', 'items[1]']);
  });

  it('calls a failure of the body itself `body`', () => {
    expect(toErrorDetails(failures([1]))).toEqual([{ param: 'body', code: 'invalid_type', message: 'the request body must be an object' }]);
    expect(toFieldErrors(failures({ items: [] }), 'items')).toEqual([{ field: 'items', code: 'too_few', message: 'items must have at least 1 element' }]);
  });
});
