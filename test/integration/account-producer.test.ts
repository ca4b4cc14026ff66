/**
 * The producer block (issue 50, item 1, its first part) against the real stack: the agency's
 * address, phone, email and licence number are read and changed through `GET`/`PATCH
 * /api/v1/account` (a field left out keeps its value, null clears it) and printed in the
 * producer box of the certificates issued after the change.
 */
import { useAgencyStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { buyAndPay, eventSelection, waitIssued, type Agency } from '../helpers/certificates';
import { download, pdfText } from '../helpers/documents';

jest.setTimeout(120_000);

const stack = useAgencyStack();
let agency: Agency;

const account = (body?: unknown) =>
  call(stack.app.baseUrl, '/api/v1/account', body === undefined ? { key: agency.key } : { method: 'PATCH', key: agency.key, body });

const PRODUCER = {
  address: { line1: '12 Harbor St', line2: 'Suite 400', city: 'Boston', region: 'MA', postal_code: '02110', country: 'US' },
  phone: '+1 617 555 0142',
  email: 'certificates@harborpine.example',
  licence_number: 'MA-1987654',
};

beforeAll(() => {
  ({ agency } = stack);
});

test('when the producer block is set, changed in part and cleared through /api/v1/account, then GET shows each state and bad values are refused', async () => {
  expect((await account()).body.data.producer).toEqual({ address: null, phone: null, email: null, licence_number: null });

  const set = await account({ producer: PRODUCER });
  expect(set.status).toBe(200);
  expect(set.body.data.producer).toEqual(PRODUCER);
  expect((await account()).body.data.producer).toEqual(PRODUCER);
  // A setting alone leaves the producer as it was; a producer field alone leaves the rest.
  await account({ settings: { send_buyer_email_after_payment: true } });
  expect((await account({ producer: { phone: '+1 617 555 0199' } })).body.data.producer).toEqual({ ...PRODUCER, phone: '+1 617 555 0199' });
  expect((await account({ producer: { phone: null } })).body.data.producer).toEqual({ ...PRODUCER, phone: null });

  for (const bad of [{ email: 'not an email' }, { phone: '' }, { address: { line1: 'x' } }, { fax: '1' }]) {
    expect(await account({ producer: bad })).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
  }
  // A change that names nothing to change (an empty object; a body that is not JSON reads so) is refused too.
  expect(await account({})).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
  expect((await account({ producer: PRODUCER })).body.data.producer).toEqual(PRODUCER);
});

test('when a certificate is issued after the producer block is set, then its producer box prints the address, phone, email and licence number', async () => {
  expect((await account({ producer: PRODUCER })).status).toBe(200);
  const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-07-10', end: '2027-07-10' }));
  const body = await waitIssued(agency, paid.paymentIntent);
  const text = pdfText(await download(body.certificates[0].download_url), 'raw');
  const producer = text.slice(text.indexOf('PRODUCER'), text.indexOf('INSURED'));
  for (const line of [
    'Harbor & Pine Insurance Agency',
    '12 Harbor St',
    'Suite 400',
    'Boston, MA 02110',
    'Phone +1 617 555 0142 · Email certificates@harborpine.example · Licence no. MA-1987654',
  ]) {
    expect(producer).toContain(line);
  }
});
