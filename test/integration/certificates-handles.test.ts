/**
 * getCertificates by any handle (teammate and root surfaces) against the real servers: the
 * purchase is named by `purchase_id`, `checkout_session_id` or `payment_intent`; the caller's
 * scope is part of the lookup; an unpaid or issuing purchase answers 200 with empty lists and
 * its status, never 404; another account's purchase reads exactly like one that does not exist.
 */
import type { TestApp } from '../helpers/app';
import { useAgencyStack } from '../helpers/stack';
import { eventually } from '../helpers/worker';
import { call, createKey } from '../helpers/fixtures';
import { deliverWebhook, sessionCompletedEvent } from '../helpers/purchases';
import { eventSelection, quoteForNewBuyer, type Agency } from '../helpers/certificates';

jest.setTimeout(120_000);

const stack = useAgencyStack({ other: 'Other Coast Agency' });
let app: TestApp;
let agency: Agency;
let other: Agency;

beforeAll(() => {
  ({ app, agency, other } = stack);
});

async function quote(a: Agency) {
  const { quote: res } = await quoteForNewBuyer(a, [eventSelection(a, { start: '2027-09-01', end: '2027-09-02' })]);
  expect(res.status).toBe(200);
  return { purchaseId: res.body.purchase_id as number, sessionId: res.body.id as string };
}

const teammate = (a: Agency, handle: Record<string, unknown>, key = a.key) =>
  call(app.baseUrl, '/platform-agency-certs/getCertificates', {
    method: 'POST',
    key,
    body: { idp_teammate_uuid: a.teammateUuid, ...handle },
  });
const root = (a: Agency, handle: Record<string, unknown>) =>
  call(app.baseUrl, '/platform-agency-root-certs/getCertificates', {
    method: 'POST',
    key: a.key,
    body: { idp_root_account_uuid: a.rootUuid, ...handle },
  });

/** The bare 404 body with the id the caller sent replaced, to compare two answers word for word. */
const shapeOf = (res: { status: number; body: any }, sentId: string) => ({
  status: res.status,
  body: { ...res.body, message: String(res.body.message).replace(sentId, '<id>') },
});

describe('getCertificates by any handle', () => {
  let purchaseId: number;
  let sessionId: string;

  beforeAll(async () => {
    ({ purchaseId, sessionId } = await quote(agency));
  });

  test('when the purchase is not paid yet, then each handle answers 200 with empty lists, status unpaid and the purchase status', async () => {
    let row = await app.container.db('purchases').where({ id: purchaseId }).first('payment_intent_id');
    if (!row.payment_intent_id) {
      // stripe-mock reports a payment intent at checkout; the real processor may report one before payment
      // only later (or on a direct card attempt). Either way an unpaid purchase can be named by it.
      await app.container
        .db('purchases')
        .where({ id: purchaseId })
        .update({ payment_intent_id: `pi_open_${purchaseId}` });
      row = { payment_intent_id: `pi_open_${purchaseId}` };
    }
    const handles: Record<string, unknown>[] = [
      { purchase_id: purchaseId },
      { checkout_session_id: sessionId },
      { payment_intent: row.payment_intent_id },
    ];
    for (const handle of handles) {
      for (const res of [await teammate(agency, handle), await root(agency, handle)]) {
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          purchase_id: purchaseId,
          checkout_session_id: sessionId,
          payment_intent: row.payment_intent_id,
          status: 'unpaid',
          purchase_status: 'awaiting_payment',
          certificate_count: 0,
          certificates: [],
          payment_zip_url: null,
          product_zips: [],
        });
      }
    }
  });

  test('when the purchase is paid and issued, then every handle returns the same certificates', async () => {
    expect((await deliverWebhook(app, sessionCompletedEvent(purchaseId, sessionId))).status).toBe(200);
    const issued = await eventually(async () => {
      const res = await teammate(agency, { purchase_id: purchaseId });
      // The certificates are listed once issuance completes; the lifecycle status follows a moment later.
      return res.body.status === 'issued' && res.body.purchase_status === 'issued' ? res.body : null;
    });
    expect(issued).toMatchObject({
      purchase_id: purchaseId,
      checkout_session_id: sessionId,
      payment_intent: `pi_paid_${purchaseId}`,
      purchase_status: 'issued',
      certificate_count: 2,
    });
    const numbers = issued.certificates.map((c: { certificate_number: string }) => c.certificate_number);
    for (const handle of [{ checkout_session_id: sessionId }, { payment_intent: `pi_paid_${purchaseId}` }]) {
      const res = await root(agency, handle);
      expect(res.status).toBe(200);
      expect(res.body.certificates.map((c: { certificate_number: string }) => c.certificate_number)).toEqual(numbers);
    }
  });

  test('when no handle or more than one is sent, on either surface, then 400 VALIDATION_ERROR in the bare shape naming the three fields', async () => {
    const bodies = [
      {},
      { purchase_id: purchaseId, checkout_session_id: sessionId },
      { purchase_id: purchaseId, payment_intent: `pi_paid_${purchaseId}` },
      { checkout_session_id: sessionId, payment_intent: `pi_paid_${purchaseId}` },
      { purchase_id: purchaseId, checkout_session_id: sessionId, payment_intent: `pi_paid_${purchaseId}` },
    ];
    for (const surface of [teammate, root]) {
      for (const body of bodies) {
        const res = await surface(agency, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          code: 'VALIDATION_ERROR',
          message: expect.stringContaining('send exactly one of purchase_id, checkout_session_id or payment_intent'),
          details: [expect.objectContaining({ message: 'send exactly one of purchase_id, checkout_session_id or payment_intent' })],
        });
      }
    }
    expect((await teammate(agency, { purchase_id: 0 })).status).toBe(400);
    expect((await teammate(agency, { purchase_id: '1' })).status).toBe(400);
    expect((await teammate(agency, { checkout_session_id: 'cs test' })).status).toBe(400);
    expect((await teammate(agency, { purchase_id: purchaseId, extra: 1 })).body.code).toBe('VALIDATION_ERROR');
  });

  test('when another account names this purchase by any handle, on either surface, then 404 NOT_FOUND exactly as for a purchase that exists nowhere', async () => {
    const sent = [{ purchase_id: purchaseId }, { checkout_session_id: sessionId }, { payment_intent: `pi_paid_${purchaseId}` }];
    const absent = [{ purchase_id: 2_000_000_000 }, { checkout_session_id: 'cs_nowhere' }, { payment_intent: 'pi_nowhere' }];
    for (const surface of [teammate, root]) {
      for (const [i, handle] of sent.entries()) {
        const theirs = await surface(other, handle);
        const nowhere = await surface(other, absent[i]!);
        expect(theirs).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
        // The same body, word for word, but for the id the caller sent.
        expect(shapeOf(theirs, String(Object.values(handle)[0]))).toEqual(shapeOf(nowhere, String(Object.values(absent[i]!)[0])));
      }
    }
  });

  test("when another teammate or the other mode's key names this purchase by any handle, then 404 NOT_FOUND", async () => {
    const rootAccountId = (await app.container.db('root_accounts').where({ idp_root_account_uuid: agency.rootUuid }).first('id'))
      .id as number;
    const liveKey = (await createKey(app.container, { rootAccountId, mode: 'live' })).key;
    for (const handle of [{ purchase_id: purchaseId }, { checkout_session_id: sessionId }, { payment_intent: `pi_paid_${purchaseId}` }]) {
      const otherTeammate = await call(app.baseUrl, '/platform-agency-certs/getCertificates', {
        method: 'POST',
        key: agency.key,
        body: { idp_teammate_uuid: agency.otherTeammateUuid, ...handle },
      });
      expect(otherTeammate).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
      expect(await teammate(agency, handle, liveKey)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
      expect(await teammate(agency, { ...handle, idp_accnt_uuid: '00000000-0000-4000-8000-000000000000' })).toMatchObject({
        status: 404,
        body: { code: 'NOT_FOUND' },
      });
    }
  });

  test("when another account's newer purchase holds the same payment intent, then each caller still gets its own purchase", async () => {
    const theirs = await quote(other);
    // The same processor payment intent on two accounts' purchases (a replayed or misattributed event).
    await app.container
      .db('purchases')
      .where({ id: theirs.purchaseId })
      .update({ payment_intent_id: `pi_paid_${purchaseId}` });
    const mine = await teammate(agency, { payment_intent: `pi_paid_${purchaseId}` });
    expect(mine.body).toMatchObject({ purchase_id: purchaseId, status: 'issued' });
    const otherView = await teammate(other, { payment_intent: `pi_paid_${purchaseId}` });
    expect(otherView.body).toMatchObject({ purchase_id: theirs.purchaseId, status: 'unpaid', certificate_count: 0 });
  });
});

describe('a payment intent shared by two purchases of one account', () => {
  // The processor's test mode (stripe-mock here) gives every checkout the same payment intent; a
  // lookup by it must never pick one of the two silently.
  const shared = `pi_shared_${process.pid}_${Date.now()}`;
  let first: { purchaseId: number; sessionId: string };
  let second: { purchaseId: number; sessionId: string };
  let theirs: { purchaseId: number; sessionId: string };

  beforeAll(async () => {
    first = await quote(agency);
    second = await quote(agency);
    theirs = await quote(other);
    for (const p of [first, second])
      expect((await deliverWebhook(app, sessionCompletedEvent(p.purchaseId, p.sessionId, undefined, shared))).status).toBe(200);
    await eventually(async () => {
      const rows = await app.container
        .db('purchases')
        .whereIn('id', [first.purchaseId, second.purchaseId])
        .where({ status: 'issued', payment_intent_id: shared });
      return rows.length === 2;
    }, 60_000);
    // Another account's purchase with the same payment intent is not the caller's: never counted, never listed.
    await app.container.db('purchases').where({ id: theirs.purchaseId }).update({ payment_intent_id: shared });
  });

  const proofEmail = (handle: Record<string, unknown>) =>
    call(app.baseUrl, '/platform-agency-certs/teamEmailProofofCoverage', {
      method: 'POST',
      key: agency.key,
      body: { idp_teammate_uuid: agency.teammateUuid, email_addresses: ['venue@hall.example'], ...handle },
    });
  const invoice = (handle: Record<string, unknown>) =>
    call(app.baseUrl, '/platform-agency-root-certs/getInvoiceData', {
      method: 'POST',
      key: agency.key,
      body: { idp_root_account_uuid: agency.rootUuid, ...handle },
    });

  test('when any certificate operation is named by the shared payment intent, then 409 AMBIGUOUS_PAYMENT_INTENT lists both purchases, newest first, and nothing is sent', async () => {
    const emailsBefore = Number(
      (await app.container
        .db('proof_of_coverage_emails')
        .whereIn('purchase_id', [first.purchaseId, second.purchaseId])
        .where('after_payment', false) // the buyers' own emails after payment are not this call's
        .count('* as n')
        .first())!.n,
    );
    for (const res of [
      await teammate(agency, { payment_intent: shared }),
      await root(agency, { payment_intent: shared }),
      await proofEmail({ payment_intent: shared }),
      await invoice({ payment_intent: shared }),
    ]) {
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        code: 'AMBIGUOUS_PAYMENT_INTENT',
        message: expect.stringContaining('belongs to 2 of your purchases'),
        candidates: [
          { purchase_id: second.purchaseId, checkout_session_id: second.sessionId, status: 'issued', created_at: expect.any(String) },
          { purchase_id: first.purchaseId, checkout_session_id: first.sessionId, status: 'issued', created_at: expect.any(String) },
        ],
      });
    }
    expect(
      Number(
        (await app.container
          .db('proof_of_coverage_emails')
          .whereIn('purchase_id', [first.purchaseId, second.purchaseId])
          .where('after_payment', false)
          .count('* as n')
          .first())!.n,
      ),
    ).toBe(emailsBefore);
  });

  test('when each purchase is named by its purchase_id or checkout_session_id, then every operation resolves that purchase and no other', async () => {
    for (const p of [first, second]) {
      for (const handle of [{ purchase_id: p.purchaseId }, { checkout_session_id: p.sessionId }]) {
        const certs = await teammate(agency, handle);
        expect(certs.body).toMatchObject({
          purchase_id: p.purchaseId,
          checkout_session_id: p.sessionId,
          payment_intent: shared,
          status: 'issued',
        });
        const email = await proofEmail(handle);
        expect(email.status).toBe(200);
        expect(email.body).toMatchObject({
          purchase_id: p.purchaseId,
          checkout_session_id: p.sessionId,
          payment_intent: shared,
          emails: [{ to: 'venue@hall.example', status: 'queued' }],
        });
        const inv = await invoice(handle);
        expect(inv.body).toMatchObject({ purchase_id: p.purchaseId, payment_intent: shared });
      }
    }
  });

  test("when the other account names the same payment intent, then it gets its one purchase (the first account's two are not its candidates)", async () => {
    const res = await teammate(other, { payment_intent: shared });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ purchase_id: theirs.purchaseId });
  });

  test('when test purchases are paid through the test helper, then each gets a payment intent of its own, and a lookup by it finds that purchase', async () => {
    const a = await quote(agency);
    const b = await quote(agency);
    const paid: string[] = [];
    for (const p of [a, b]) {
      const res = await call(app.baseUrl, `/api/v1/test_helpers/purchases/${p.purchaseId}/pay`, {
        method: 'POST',
        key: agency.key,
        body: {},
      });
      expect(res.status).toBe(200);
      expect(res.body.data.payment_intent).toMatch(/^pi_testhelper_/);
      paid.push(res.body.data.payment_intent as string);
    }
    expect(paid[0]).not.toBe(paid[1]);
    for (const [i, p] of [a, b].entries()) {
      const found = await eventually(async () => {
        const res = await teammate(agency, { payment_intent: paid[i] });
        return res.status === 200 && res.body.payment_intent === paid[i] ? res.body : null;
      }, 60_000);
      expect(found.purchase_id).toBe(p.purchaseId);
    }
  });
});

describe('getCertificates while a purchase is between states', () => {
  // The status is set on the row directly, so each state is read without racing the workflow.
  const at = async (status: string, paid: boolean) => {
    const { purchaseId } = await quote(agency);
    await app.container
      .db('purchases')
      .where({ id: purchaseId })
      .update({ status, paid_at: paid ? new Date() : null });
    return purchaseId;
  };

  test.each([
    {
      when: 'the purchase is paid and its certificates are still being issued',
      then: '200 pending with empty lists',
      row: { status: 'awaiting_certificates', paid: true },
      answer: { status: 'pending', urls_expire_at: null, payment_zip_url: null, product_zips: [] },
    },
    {
      when: 'the checkout expired unpaid',
      then: '200 unpaid with purchase_status expired, never 404',
      row: { status: 'expired', paid: false },
      answer: { status: 'unpaid' },
    },
  ])('when $when, then $then, on both surfaces', async ({ row, answer }) => {
    const purchaseId = await at(row.status, row.paid);
    for (const res of [await teammate(agency, { purchase_id: purchaseId }), await root(agency, { purchase_id: purchaseId })]) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        purchase_id: purchaseId,
        purchase_status: row.status,
        certificate_count: 0,
        certificates: [],
        ...answer,
      });
    }
  });
});

describe('the OpenAPI document', () => {
  test('when read, then getCertificates on both surfaces takes the three handles, says which statuses are final and when to retry, and cites no spec sections', async () => {
    const doc = (await call(app.baseUrl, '/openapi.json')).body;
    const resolve = (schema: any) => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
    for (const path of ['/platform-agency-certs/getCertificates', '/platform-agency-root-certs/getCertificates']) {
      const op = doc.paths[path].post;
      const request = resolve(op.requestBody.content['application/json'].schema);
      expect(Object.keys(request.properties)).toEqual(expect.arrayContaining(['purchase_id', 'checkout_session_id', 'payment_intent']));
      expect(request.required).not.toEqual(expect.arrayContaining(['purchase_id']));
      const response = resolve(op.responses['200'].content['application/json'].schema);
      expect(response.properties.purchase_status.enum.sort()).toEqual([
        'awaiting_certificates',
        'awaiting_payment',
        'cancelled',
        'expired',
        'failed',
        'issued',
        'paid',
        'partly_cancelled',
        'quoted',
        'refunded',
      ]);
      expect(response.properties.status.description).toMatch(/Final: `issued`.*`voided`/);
      expect(response.properties.status.description).toContain('retry with backoff');
      expect(response.properties.payment_intent.type).toEqual(['string', 'null']);
      expect(response.properties.checkout_session_id.type).toEqual(['string', 'null']);
      expect(op.description).toContain('`purchase_id` (keep this one');
      expect(op.responses['400'].description).toContain('none or more than one of purchase_id, checkout_session_id and payment_intent');
      expect(JSON.stringify([op, request, response])).not.toMatch(/§|SPEC\.md/);
    }
  });
});
