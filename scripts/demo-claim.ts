/**
 * The claim step of `npm run demo` (scripts/demo.ts; issue 51, item 6), through the public API
 * with the typed client and test-mode helpers only: the event purchase's test clock is moved to
 * the end of its first covered day (so an incident that day is in the past), a claim is filed for
 * a storm that evening, and the test helper takes the insurer's part (acknowledge, review, approve
 * part of the amount, record the payment) until the claim reads `paid`; its history is printed.
 * Amounts in minor units. @throws {ApiError} when the API refuses a step, Error when the claim
 * does not end paid.
 */
import { randomUUID } from 'node:crypto';
import { ok, type ApiClient } from '../clients/typescript';

type Say = (line: string) => void;

/** Files a claim on the first covered unit of purchase `purchaseId` and moves it to paid; answers the claim's id. */
export async function claimPaidOut(api: ApiClient, purchaseId: number, say: Say): Promise<number> {
  const params = { path: { id: String(purchaseId) } };
  const unit = (await ok(api.GET('/api/v1/purchases/{id}', { params }))).data.items[0]!.covered_units[0]!;
  await ok(api.POST('/api/v1/test_helpers/purchases/{id}/test_clock', { params, body: { frozen_time: unit.ends_at } }));
  say(`  the purchase's test clock moved to ${unit.ends_at}, the end of ${unit.local_label}`);
  const incidentAt = new Date(Date.parse(unit.ends_at) - 4 * 3_600_000).toISOString();
  const filed = (
    await ok(
      api.POST('/api/v1/purchases/{id}/claims', {
        params: { ...params, header: { 'Idempotency-Key': randomUUID() } },
        body: {
          incident_at: incidentAt,
          claim_type: 'property_damage',
          description: 'A storm tore the marquee; the rented sound system was soaked.',
          claimant: { name: 'Jordan Lee', email: 'jordan.lee@example.com' },
          amount_claimed: 125_000,
        },
      }),
    )
  ).data;
  say(
    `  claim ${filed.id}: ${filed.status}, ${filed.amount_claimed} ${filed.currency} claimed on ${filed.covered_unit_label} (certificate ${filed.certificate_number ?? 'none'})`,
  );
  const claimParams = { path: { id: String(filed.id) } };
  const act = (body: { action: 'acknowledge' | 'start_review' | 'approve' | 'record_payment'; amount?: number; reason?: string }) =>
    ok(api.POST('/api/v1/test_helpers/claims/{id}/actions', { params: claimParams, body }));
  await act({ action: 'acknowledge' });
  await act({ action: 'start_review' });
  await act({ action: 'approve', amount: 90_000, reason: 'Sound system depreciated; marquee repair in full' });
  const paid = (await act({ action: 'record_payment' })).data;
  for (const e of paid.history ?? [])
    say(
      `  #${e.seq} ${e.kind.padEnd(10)} ${e.from_status ?? ''}${e.from_status ? ' → ' : ''}${e.to_status ?? ''}  by ${e.actor.type}${e.note ? `: ${e.note}` : ''}`,
    );
  if (paid.status !== 'paid') throw new Error(`claim ${paid.id} ended ${paid.status}, not paid`);
  say(
    `  claim ${paid.id}: paid ${paid.approved_amount} ${paid.currency} of ${paid.amount_claimed} claimed (payment ${paid.payment_reference})`,
  );
  return paid.id;
}
