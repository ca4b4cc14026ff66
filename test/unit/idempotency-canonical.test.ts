/**
 * The body an idempotency key's requests are compared by (src/idempotency/middleware.ts): a JSON
 * body in canonical form, anything else as sent.
 */
import { canonicalBody, requestHash } from '../../src/idempotency/middleware';

test('when two JSON bodies hold the same parameters in another key order or spacing, then they hash the same', () => {
  const a = '{"b":1,"a":{"y":[3,{"q":1,"p":2}],"x":"s"}}';
  const b = '{ "a": { "x": "s", "y": [3, { "p": 2, "q": 1 }] },\n "b": 1 }';
  expect(canonicalBody(a)).toBe(canonicalBody(b));
  expect(requestHash('POST', '/api/v1/products', a)).toBe(requestHash('POST', '/api/v1/products', b));
});

test('when a value, an array order, the path or the method differs, then the hash differs', () => {
  const base = requestHash('POST', '/x', '{"a":[1,2]}');
  expect(requestHash('POST', '/x', '{"a":[2,1]}')).not.toBe(base);
  expect(requestHash('POST', '/x', '{"a":[1,2],"b":null}')).not.toBe(base);
  expect(requestHash('POST', '/y', '{"a":[1,2]}')).not.toBe(base);
  expect(requestHash('PATCH', '/x', '{"a":[1,2]}')).not.toBe(base);
});

test('when the body is not JSON or empty, then it is compared as sent', () => {
  expect(canonicalBody('not json {')).toBe('not json {');
  expect(canonicalBody('')).toBe('');
  expect(canonicalBody('  ')).toBe('');
  expect(requestHash('POST', '/x', 'a=1&b=2')).not.toBe(requestHash('POST', '/x', 'b=2&a=1'));
});
