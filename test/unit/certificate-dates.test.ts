/**
 * Dates in the holder's locale (issue 50, item 1): `dateOrderFor` picks MM/DD/YYYY for a US
 * holder, DD/MM/YYYY for any other country (the named insured's when there is no holder), ISO
 * with no country; `orderedDate` reorders the date part and keeps the time.
 */
import fc from 'fast-check';
import { dateOrderFor } from '../../src/certificates/certificate-data';
import { orderedDate } from '../../src/pdf/certificate-format';

const address = (country: string) => ({ line1: '1 Main St', city: 'X', region: 'Y', postal_code: '1', country });
const holder = (country: string) => ({
  name: 'Venue',
  address: address(country),
  additionalInsured: false,
  waiverOfSubrogation: false,
  descriptionOfOperations: null,
});

test('when the holder is in the US, elsewhere, or absent, then the date order follows the holder, then the named insured, then ISO', () => {
  expect(dateOrderFor({ certificateHolder: holder('US'), namedInsured: { name: 'A', address: address('FR') } })).toBe('mdy');
  expect(dateOrderFor({ certificateHolder: holder('fr'), namedInsured: { name: 'A', address: address('US') } })).toBe('dmy');
  expect(dateOrderFor({ certificateHolder: null, namedInsured: { name: 'A', address: address('GB') } })).toBe('dmy');
  expect(dateOrderFor({ certificateHolder: null, namedInsured: { name: 'A' } })).toBe('iso');
});

test('when any local date-time is ordered, then its parts are those of the ISO text, in the order asked', () => {
  fc.assert(
    fc.property(fc.date({ min: new Date('1900-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }), (d) => {
      const iso = d.toISOString().slice(0, 16); // YYYY-MM-DDTHH:mm
      const [date, time] = iso.split('T') as [string, string];
      const [y, m, day] = date.split('-');
      expect(orderedDate(iso, 'mdy')).toBe(`${m}/${day}/${y} ${time}`);
      expect(orderedDate(iso, 'dmy')).toBe(`${day}/${m}/${y} ${time}`);
      expect(orderedDate(iso, 'iso')).toBe(`${date} ${time}`);
      expect(orderedDate(date, 'dmy')).toBe(`${day}/${m}/${y}`);
    }),
  );
  expect(orderedDate('not a date', 'mdy')).toBe('not a date');
});
