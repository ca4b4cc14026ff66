/**
 * `queryInt` and `queryBool`: query-string values (always text) become numbers and booleans,
 * anything but plain decimal digits is refused, and the OpenAPI document shows the integer type.
 */
import { z } from 'zod';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import '../../src/http/openapi';
import { queryBool, queryInt } from '../../src/http/query';

const messages = (r: { success: boolean; error?: z.ZodError }) => r.error?.issues.map((i) => i.message) ?? [];

describe('queryInt', () => {
  const page = queryInt(1, 100);

  test('when the value is decimal digits in range, then it parses to that number', () => {
    expect(page.parse('1')).toBe(1);
    expect(page.parse('100')).toBe(100);
    expect(queryInt(-5, 5).parse('-5')).toBe(-5);
    expect(page.parse('007')).toBe(7);
  });

  test('when the value is not plain decimal digits, then "must be an integer"', () => {
    for (const bad of ['', ' 5', '1.5', '1e3', 'abc', '0x10', '12345678901']) {
      expect(messages(page.safeParse(bad))).toEqual(['must be an integer']);
    }
  });

  test('when the parameter is repeated (an array), then it is refused as not text', () => {
    expect(messages(page.safeParse(['1', '2']))).toEqual(['Invalid input: expected string, received array']);
  });

  test('when the value is out of range, then the range is named', () => {
    expect(messages(page.safeParse('0'))).toEqual([expect.stringContaining('>=1')]);
    expect(messages(page.safeParse('101'))).toEqual([expect.stringContaining('<=100')]);
  });

  test('when the value is missing and there is a default, then the default applies', () => {
    expect(z.object({ p: page.default(20) }).parse({})).toEqual({ p: 20 });
  });

  test('when rendered in OpenAPI, then it is an integer with its bounds', () => {
    const registry = new OpenAPIRegistry();
    registry.registerPath({
      method: 'get',
      path: '/x',
      request: { query: z.object({ p: page.default(20), q: queryBool.optional() }) },
      responses: { 200: { description: 'ok' } },
    });
    const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({ openapi: '3.1.0', info: { title: 't', version: '1' } });
    const params = doc.paths!['/x']!.get!.parameters as { name: string; schema: unknown }[];
    expect(params.find((p) => p.name === 'p')!.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
  });
});

describe('queryBool', () => {
  test('when the value is exactly true or false, then it parses; anything else is refused', () => {
    expect(queryBool.parse('true')).toBe(true);
    expect(queryBool.parse('false')).toBe(false);
    expect(messages(queryBool.safeParse('TRUE'))).toEqual(['must be "true" or "false"']);
  });
});
