/**
 * The bordereau's CSV text (`csvRecords`, activities/bordereau-files.ts) against csv-stringify
 * (the writer before, kept here as the reference) and csv-parse, for any text: quotes, commas,
 * CR, LF, spaces, empty fields, non-Latin characters, one record or many. It is csv-stringify's
 * text whenever no field holds a CR or LF without the other, and csv-parse always reads back the
 * records; csv-stringify leaves a field with a lone CR or LF unquoted, which no reader can split
 * back (the last test shows it), so there the field is quoted as RFC 4180 asks.
 */
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { csvRecords } from '../../activities/bordereau-files';
import { BORDEREAU_COLUMNS } from '../../src/reports/bordereau';

const field = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('a', '1', '"', ',', '\r', '\n', '\r\n', ' ', '\t', "'", '=', '-', 'é', '日', '😀'), maxLength: 8 }),
);
const records = fc.array(fc.array(field, { minLength: BORDEREAU_COLUMNS.length, maxLength: BORDEREAU_COLUMNS.length }), { maxLength: 6 });
const loneBreak = (v: string) => /\r(?!\n)|(?<!\r)\n/.test(v);

test('when any records are written, then csv-parse reads them back, and the text is csv-stringify’s unless a field holds a lone CR or LF', () => {
  fc.assert(
    fc.property(records, (rs) => {
      const text = csvRecords(rs);
      if (rs.length) expect(parse(text, { relax_column_count: false })).toEqual(rs);
      else expect(text).toBe('');
      if (!rs.some((r) => r.some(loneBreak))) expect(text).toBe(stringify(rs, { record_delimiter: 'windows' }));
    }),
    { numRuns: 500 },
  );
  const header = [BORDEREAU_COLUMNS.map((c) => c.name)];
  expect(csvRecords(header)).toBe(stringify(header, { record_delimiter: 'windows' }));
});

test('when a field holds a lone line feed, then it is quoted: csv-stringify’s text for it cannot be read back', () => {
  const rs = [
    ['x', 'Unit 4\nMain St', 'y'],
    ['1', '2', '3'],
  ];
  expect(csvRecords(rs)).toBe('x,"Unit 4\nMain St",y\r\n1,2,3\r\n');
  expect(parse(csvRecords(rs))).toEqual(rs);
  expect(() => parse(stringify(rs, { record_delimiter: 'windows' }))).toThrow(/Invalid Record Length/);
});
