import { displayPrefix, generateKeyValue, hashKeyValue, hashesEqual, parseKeyValue } from '../../src/api-keys/secrets';

describe('API key values', () => {
  test('when a value is generated, then its prefix tells the mode and it parses', () => {
    const live = generateKeyValue('live');
    const test = generateKeyValue('test');
    expect(live).toMatch(/^ik_live_[A-Za-z0-9_-]{43}$/);
    expect(test).toMatch(/^ik_test_[A-Za-z0-9_-]{43}$/);
    expect(parseKeyValue(live)).toEqual({ mode: 'live' });
    expect(parseKeyValue(test)).toEqual({ mode: 'test' });
    expect(generateKeyValue('live')).not.toBe(live);
  });

  test.each([[undefined], [''], ['ik_live_short'], ['ik_prod_' + 'a'.repeat(43)], ['ik_live_' + 'a'.repeat(43) + '!']])(
    'when the value is %p, then it does not parse',
    (v) => {
      expect(parseKeyValue(v)).toBeNull();
    },
  );

  test('when a value is hashed, then the hash is SHA-256 hex and comparisons are exact', () => {
    const v = generateKeyValue('live');
    const h = hashKeyValue(v);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(hashesEqual(h, hashKeyValue(v))).toBe(true);
    expect(hashesEqual(h, hashKeyValue(v + 'x'))).toBe(false);
    expect(hashesEqual(h, h.slice(0, 62))).toBe(false);
  });

  test('when a value is displayed, then only the mode prefix and four characters show', () => {
    const v = 'ik_test_abcdEFGH' + 'x'.repeat(35);
    expect(displayPrefix(v)).toBe('ik_test_abcd');
  });
});
