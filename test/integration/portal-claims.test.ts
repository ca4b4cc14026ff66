/**
 * Claims in the agency portal (issue 51, item 3), in Chromium (puppeteer-core) against the local
 * OpenID provider, the real API, Temporal worker and PostgreSQL; axe-core finds no violation on
 * any page state. The agency's event product names an insurer, whose teammates sign in too: an
 * adjuster and a viewer. The adjuster lists the claims of the insurer's products and takes one
 * from submitted to approved for part of the amount through the claim page's forms (an empty
 * approval answered in the error summary first); the history names the adjuster. The insurer's
 * viewer and the agency's admin read the claim without the forms, and a decision they send by
 * hand is refused with 403, nothing changed. The agency's admin follows its claim read-only.
 */
import type { BrowserContext, Page } from 'puppeteer-core';
import {
  checkAxe,
  formFields,
  portalSuite,
  portalTab,
  submit,
  withCookies,
  type PortalStack,
  type PortalUser,
} from '../helpers/portal-stack';
import { buyAndPay, eventSelection, waitIssued } from '../helpers/certificates';
import { call, createRootAccountOfKind } from '../helpers/fixtures';
import { createAccountsRepository } from '../../src/accounts/repository';

let stack: PortalStack;
let claimId: number;
const adjuster: PortalUser = { email: '', name: 'Ines Adjuster', password: 'adjuster pass phrase 7', sub: '' };
const insurerViewer: PortalUser = { email: '', name: 'Ivo Viewer', password: 'insurer viewer phrase 8', sub: '' };

portalSuite(
  'claims',
  (s) => (stack = s),
  async (app, agency) => {
    const c = app.container;
    const insurer = await createRootAccountOfKind(c, 'insurer', 'Evergreen Mutual Insurance Co.', [{ slug: agency.slug }]);
    const named = await call(app.baseUrl, `/api/v1/products/${agency.eventProductId}`, {
      method: 'PATCH',
      key: agency.key,
      body: { insurerRootAccountID: insurer.id },
    });
    if (named.status !== 200) throw new Error(`naming the insurer: ${named.status} ${named.text}`);
    const accounts = createAccountsRepository(c.db);
    adjuster.email = `adjuster.${insurer.id}@evergreen.example`;
    insurerViewer.email = `viewer.${insurer.id}@evergreen.example`;
    await accounts.upsertAgent({ rootAccountId: insurer.id, name: adjuster.name, email: adjuster.email, portalRole: 'adjuster' });
    await accounts.upsertAgent({ rootAccountId: insurer.id, name: insurerViewer.name, email: insurerViewer.email });
    const teammates = await accounts.listTeammates(insurer.id);
    for (const u of [adjuster, insurerViewer]) u.sub = teammates.find((t) => t.email === u.email)!.idpTeammateUuid;
    return [adjuster, insurerViewer];
  },
);

const base = () => stack.app.baseUrl;
const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(stack.app.baseUrl, `/api/v1${path}`, { key: stack.agency.key, ...init });
const textOf = (tab: Page, selector: string) => tab.$eval(selector, (e) => (e as HTMLElement).innerText).catch(() => '');

beforeAll(async () => {
  // A two-day event (2027-05-01 and 02, America/Chicago), its clock after both days, and a claim on the first.
  const paid = await buyAndPay(stack.agency, eventSelection(stack.agency, { start: '2027-05-01', end: '2027-05-02' }));
  await waitIssued(stack.agency, paid.paymentIntent);
  const clock = await api(`/test_helpers/purchases/${paid.purchaseId}/test_clock`, {
    method: 'POST',
    body: { frozen_time: '2027-05-03T12:00:00Z' },
  });
  expect(clock.status).toBe(200);
  const filed = await api(`/purchases/${paid.purchaseId}/claims`, {
    method: 'POST',
    body: {
      incident_at: '2027-05-01T19:30:00-05:00',
      claim_type: 'property_damage',
      description: 'A storm flooded the marquee; the sound system was ruined.',
      claimant: { name: 'Kim Park', email: 'kim@example.com' },
      amount_claimed: 125_000,
    },
  });
  expect(filed.status).toBe(201);
  claimId = filed.body.data.id;
}, 90_000);

describe('an adjuster of the insurer the product names', () => {
  let tab: Page;
  portalTab({ stack: () => stack, path: '/portal/claims', as: adjuster }, (t) => (tab = t));

  test('lists the claim, acknowledges it, starts the review and approves part of the amount through the forms; an empty approval is answered in the error summary', async () => {
    expect(await textOf(tab, 'table')).toContain(`#${claimId}`);
    expect(await checkAxe(tab, 'claims')).toEqual([]);
    await tab.goto(`${base()}/portal/claims/${claimId}?mode=test`);
    for (const [action, status] of [
      ['acknowledge', 'acknowledged'],
      ['start_review', 'under review'],
    ]) {
      const sent = await submit(tab, `form:has(input[name="action"][value="${action}"])`);
      expect(sent).toEqual({ status: 303, location: `/portal/claims/${claimId}?mode=test` });
      expect(await textOf(tab, '#claim-status')).toBe(status);
    }
    const approve = 'form:has(input[name="action"][value="approve"])';
    expect((await submit(tab, approve)).status).toBe(400);
    expect(await textOf(tab, '#error-summary')).toContain('Enter the amount approved');
    expect(await textOf(tab, '#error-summary')).toContain('Enter the reason for the approval');
    expect(await checkAxe(tab, 'claim-approve-error')).toEqual([]);

    await tab.type('#approve-amount', '900.00');
    await tab.type('#approve-reason', 'The invoice covers 900.00');
    expect((await submit(tab, approve)).status).toBe(303);
    expect(await textOf(tab, '.notice')).toBe(`Claim #${claimId}: approved.`);
    expect(await textOf(tab, '#claim-status')).toBe('approved');
    expect(await textOf(tab, '#claim-approved')).toBe('$900.00');
    expect(await checkAxe(tab, 'claim-approved')).toEqual([]);

    const claim = (await api(`/claims/${claimId}`)).body.data;
    expect(claim).toMatchObject({ status: 'approved', approved_amount: 90_000, decision_reason: 'The invoice covers 900.00' });
    const teammate = `teammate-${(await createAccountsRepository(stack.app.container.db).findTeammateByIdpUuid(adjuster.sub))!.id}`;
    expect(claim.history.slice(1).map((e: { kind: string; actor: unknown }) => [e.kind, e.actor])).toEqual(
      ['acknowledged', 'under_review', 'approved'].map((k) => [k, { type: 'adjuster', id: teammate }]),
    );
  });
});

describe('a teammate without the adjuster role', () => {
  let tab: Page;
  let context: BrowserContext;
  portalTab({ stack: () => stack, path: '/portal/claims', as: insurerViewer }, (t, c) => ((tab = t), (context = c)));

  test('reads the claim without the forms, and a decision sent by hand is refused with 403, nothing changed', async () => {
    await tab.goto(`${base()}/portal/claims/${claimId}?mode=test`);
    expect(await tab.$('#decide-title')).toBeNull();
    expect(await textOf(tab, 'table')).toContain('approved');
    const csrf = (await formFields(tab, 'form[action="/portal/sign-out"]'))._csrf!;
    const refused = await withCookies(base(), context, `/portal/claims/${claimId}/actions?mode=test`, { _csrf: csrf, action: 'deny' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Your role (viewer) can only read.');
    expect((await api(`/claims/${claimId}`)).body.data.status).toBe('approved');
  });
});

describe('the agency’s admin', () => {
  let tab: Page;
  portalTab({ stack: () => stack, path: `/portal/claims?mode=test` }, (t) => (tab = t));

  test('follows its claim read-only: listed, its history shown, no decision forms', async () => {
    expect(await textOf(tab, 'table')).toContain(`#${claimId}`);
    await tab.goto(`${base()}/portal/claims/${claimId}?mode=test`);
    expect(await textOf(tab, '#claim-status')).toBe('approved');
    expect(await tab.$('#decide-title')).toBeNull();
  });
});
