/**
 * The buyer's own claim page (issue 51, item 1): behind the signed link of the proof-of-coverage
 * email (./buyer-link.ts), the buyer files a claim on their purchase without the agency.
 *
 * - `show(token)`: the form: the covered units still in force (cancelled ones are not offered),
 *   the claim types of the purchase's products, and the claims already filed on the purchase with
 *   their status. Changes nothing.
 * - `submit(token, form)`: checks the form (every mistake at once, in the buyer's words, keyed by
 *   field), turns the incident's local date and time into an instant in the chosen unit's time
 *   zone and the amount typed in major units ("1250.00") into integer minor units (exactly, from
 *   the text), then files the claim through the claims service's `file`, the same rules and
 *   workflow as `POST /api/v1/purchases/{id}/claims`: the refusals come back as mistakes of the
 *   field they are about (INCIDENT_NOT_COVERED: the date; COVERED_UNIT_CANCELLED: the unit;
 *   DUPLICATE_CLAIM: the form). The form's per-render nonce is the request's idempotency key, so a
 *   form sent twice (a double click, a reload) answers the same claim.
 *
 * The claim is filed under the API key that sold the purchase (the agency the buyer contracted
 * with), as the withdrawal page acts; its history names the buyer as the filer (actor `buyer`). Attachments are not
 * taken here: uploads go straight to storage by signed URL, which a page without scripts cannot
 * do, so photos and receipts are sent through the agency (the API's attachments).
 */
import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import { z } from 'zod';
import { AppError } from '../shared/errors';
import type { SaleRepository } from '../purchases/sale-repository';
import type { PurchaseRecord } from '../purchases/purchase-record';
import { principalOf } from '../withdrawals/service';
import type { ClaimsRepository } from './repository';
import type { ClaimService } from './service';
import { claimSettingsOf } from './rules';
import { CreateClaimRequest } from './schemas';
import { verifyClaimToken } from './buyer-link';

/** The form's fields, as posted (every value text). */
export const CLAIM_FORM_FIELDS = [
  'covered_unit',
  'incident_date',
  'incident_time',
  'claim_type',
  'description',
  'name',
  'email',
  'phone',
  'amount',
] as const;
export type ClaimFormField = (typeof CLAIM_FORM_FIELDS)[number];
export type ClaimFormValues = Partial<Record<ClaimFormField, string>>;

/** A covered unit the buyer may claim on. */
export interface ClaimableUnit {
  id: number;
  productName: string;
  label: string;
  timeZone: string;
  startsAt: Date;
  endsAt: Date;
}

/** A claim already filed on the purchase, as the page lists it. */
export interface FiledClaim {
  id: number;
  unitLabel: string;
  claimType: string;
  status: string;
  amountMinor: number;
  currency: string;
  acknowledgementDueAt: Date;
}

/** What the page shows. */
export type BuyerClaimView =
  | { kind: 'not_found' }
  | { kind: 'not_paid' | 'no_cover'; purchaseId: number; testMode: boolean }
  | {
      kind: 'form';
      purchaseId: number;
      testMode: boolean;
      currency: string;
      units: ClaimableUnit[];
      claimTypes: string[];
      claims: FiledClaim[];
      values: ClaimFormValues;
      /** Mistakes by field, and one about the form as a whole. */
      errors: Partial<Record<ClaimFormField, string>>;
      formError?: string;
      /** 400: a mistake of the form; 409: refused as it stands (a duplicate, a cancelled unit). */
      refused?: 400 | 409;
      nonce: string;
    }
  | { kind: 'filed'; purchaseId: number; testMode: boolean; claim: FiledClaim; again: boolean };

const NONCE = /^[0-9a-f]{32}$/;

/** `text` in the currency's major units ("1250", "1250.5", "1250.50") as integer minor units, or null. */
export function minorUnitsOfText(text: string, currency: string): number | null {
  const digits = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).resolvedOptions()
    .maximumFractionDigits!;
  const m = (digits > 0 ? new RegExp(`^(\\d{1,11})(?:\\.(\\d{1,${digits}}))?$`) : /^(\d{1,11})()$/).exec(text.replace(/,/g, ''));
  if (!m) return null;
  return Number(m[1]) * 10 ** digits + Number((m[2] ?? '').padEnd(digits, '0') || 0);
}

/** A purchase the page may take a claim on, with what its form offers. */
interface Opened {
  p: PurchaseRecord;
  units: ClaimableUnit[];
  claimTypes: string[];
  claims: FiledClaim[];
}

export function createBuyerClaimService(deps: {
  sales: Pick<SaleRepository, 'findById' | 'itemDetails'>;
  claims: Pick<ClaimsRepository, 'settings' | 'listForPurchase'>;
  claimService: Pick<ClaimService, 'file'>;
  /** The buyer links' key (WITHDRAWAL_LINK_KEY). */
  key: string;
}) {
  /** The purchase a token opens with what its form offers, or the view that ends there. */
  async function open(token: string): Promise<{ view: BuyerClaimView } | Opened> {
    const id = verifyClaimToken(deps.key, token);
    const p = id === null ? undefined : await deps.sales.findById(id);
    if (!p) return { view: { kind: 'not_found' } };
    const testMode = p.mode === 'test';
    if (!p.paidAt) return { view: { kind: 'not_paid', purchaseId: p.id, testMode } };
    const items = await deps.sales.itemDetails(p.id);
    const units: ClaimableUnit[] =
      p.status === 'refunded'
        ? []
        : items.flatMap((i) =>
            i.units
              .filter((u) => u.cancelledAt === null)
              .map((u) => ({
                id: u.id,
                productName: i.productName,
                label: u.localLabel,
                timeZone: u.timeZone,
                startsAt: u.startsAt,
                endsAt: u.endsAt,
              })),
          );
    if (units.length === 0) return { view: { kind: 'no_cover', purchaseId: p.id, testMode } };
    const productIds = [...new Set(items.map((i) => i.productLineId))];
    const stored = await deps.claims.settings(productIds);
    const claimTypes = [...new Set(productIds.flatMap((id) => claimSettingsOf(stored.get(id)).claimTypes))];
    const labels = new Map(items.flatMap((i) => i.units.map((u) => [u.id, u.localLabel] as const)));
    const claims: FiledClaim[] = (await deps.claims.listForPurchase(p.id)).map((c) => ({
      id: c.id,
      unitLabel: labels.get(c.coveredUnitId) ?? '',
      claimType: c.claimType,
      status: c.status,
      amountMinor: c.amountClaimedMinor,
      currency: c.currency,
      acknowledgementDueAt: c.acknowledgementDueAt,
    }));
    return { p, units, claimTypes, claims };
  }

  const formView = (o: Opened, values: ClaimFormValues, more: Partial<Extract<BuyerClaimView, { kind: 'form' }>> = {}): BuyerClaimView => ({
    kind: 'form',
    purchaseId: o.p.id,
    testMode: o.p.mode === 'test',
    currency: o.p.currency,
    units: o.units,
    claimTypes: o.claimTypes,
    claims: o.claims,
    values,
    errors: {},
    nonce: randomBytes(16).toString('hex'),
    ...more,
  });

  /** The form's mistakes in the buyer's words, and the API body when there are none. */
  function check(o: Opened, v: ClaimFormValues) {
    const errors: Partial<Record<ClaimFormField, string>> = {};
    const unit = o.units.find((u) => String(u.id) === v.covered_unit);
    if (!unit) errors.covered_unit = 'Select the day or trip of cover the incident happened in';
    if (!/^\d{4}-\d{2}-\d{2}$/.test(v.incident_date ?? '')) errors.incident_date = 'Enter the date of the incident, for example 2027-05-01';
    if (!/^\d{2}:\d{2}$/.test(v.incident_time ?? '')) errors.incident_time = 'Enter the time of the incident, for example 19:30';
    let incidentAt: string | null = null;
    if (unit && !errors.incident_date && !errors.incident_time) {
      const local = DateTime.fromISO(`${v.incident_date}T${v.incident_time}`, { zone: unit.timeZone });
      if (local.isValid) incidentAt = local.toISO({ suppressMilliseconds: true });
      else errors.incident_date = 'Enter a real date and time, for example 2027-05-01 at 19:30';
    }
    if (!o.claimTypes.includes(v.claim_type ?? '')) errors.claim_type = 'Select what kind of loss it was';
    if (!v.description) errors.description = 'Describe what happened';
    else if (v.description.length > 4000) errors.description = 'The description must be 4000 characters or fewer';
    if (!v.name) errors.name = 'Enter your full name';
    else if (v.name.length > 200) errors.name = 'Your name must be 200 characters or fewer';
    if (
      !z
        .email()
        .max(254)
        .safeParse(v.email ?? '').success
    )
      errors.email = 'Enter an email address in the correct format, like name@example.com';
    if (v.phone && (v.phone.length < 3 || v.phone.length > 40))
      errors.phone = 'Enter a phone number of 3 to 40 characters, or leave it empty';
    const amount = minorUnitsOfText(v.amount ?? '', o.p.currency);
    if (amount === null || amount < 1) errors.amount = 'Enter the amount you are claiming as a number, like 1250.00';
    if (Object.keys(errors).length > 0) return { errors };
    const body = CreateClaimRequest.safeParse({
      incident_at: incidentAt,
      covered_unit_id: unit!.id,
      claim_type: v.claim_type,
      description: v.description,
      claimant: { name: v.name, email: v.email, ...(v.phone ? { phone: v.phone } : {}) },
      amount_claimed: amount,
    });
    if (!body.success)
      return {
        errors: { amount: body.error.issues.some((i) => i.path[0] === 'amount_claimed') ? 'The amount is too large' : undefined },
        formError: body.error.issues[0]?.message,
      };
    return { errors, body: body.data, unit: unit! };
  }

  /** The refusal of the claims service as the mistake of the field it is about, or undefined for any other error. */
  function refusalOf(
    err: unknown,
    unit: ClaimableUnit,
  ): Pick<Extract<BuyerClaimView, { kind: 'form' }>, 'errors' | 'formError' | 'refused'> | undefined {
    if (!(err instanceof AppError)) return undefined;
    const local = (d: Date) => DateTime.fromJSDate(d, { zone: unit.timeZone }).toFormat('yyyy-MM-dd HH:mm');
    switch (err.code) {
      case 'INCIDENT_NOT_COVERED':
        return {
          errors: {
            incident_date: `The incident must be within the cover you chose: ${local(unit.startsAt)} to ${local(unit.endsAt)} (${unit.timeZone})`,
          },
          refused: 400,
        };
      case 'COVERED_UNIT_CANCELLED':
        return { errors: { covered_unit: 'That cover was cancelled, so no claim can be made on it' }, refused: 409 };
      case 'DUPLICATE_CLAIM':
        return {
          errors: {},
          formError:
            'A claim on that day of cover is already open (listed below). The insurer is handling it: you do not need to claim again.',
          refused: 409,
        };
      case 'VALIDATION_ERROR': {
        const path = (err.details as Array<{ path?: string }> | undefined)?.[0]?.path;
        if (path === 'incident_at')
          return { errors: { incident_date: 'The date and time of the incident must be in the past' }, refused: 400 };
        if (path === 'claim_type')
          return { errors: { claim_type: 'That kind of loss is not covered by the product you chose' }, refused: 400 };
        return { errors: {}, formError: err.message, refused: 400 };
      }
      default:
        return undefined;
    }
  }

  return {
    /** The page of `token`: the form, or why there is none. */
    async show(token: string): Promise<BuyerClaimView> {
      const o = await open(token);
      return 'view' in o ? o.view : formView(o, {});
    },

    /** Files the claim the form describes (see the module comment); the form again with its mistakes, or the claim filed. */
    async submit(token: string, form: Record<string, unknown>): Promise<BuyerClaimView> {
      const o = await open(token);
      if ('view' in o) return o.view;
      const values: ClaimFormValues = Object.fromEntries(
        CLAIM_FORM_FIELDS.map((f) => [f, typeof form[f] === 'string' ? (form[f] as string).trim() : '']),
      );
      const checked = check(o, values);
      if (!checked.body) return formView(o, values, { errors: checked.errors, formError: checked.formError, refused: 400 });
      const nonce = typeof form.submission === 'string' && NONCE.test(form.submission) ? form.submission : undefined;
      try {
        const { claim, created } = await deps.claimService.file(
          principalOf(o.p),
          o.p.id,
          { ...checked.body, attachments: [] },
          nonce ? `buyer-claim-page:${nonce}` : undefined,
          'buyer',
        );
        return {
          kind: 'filed',
          purchaseId: o.p.id,
          testMode: o.p.mode === 'test',
          again: !created,
          claim: {
            id: claim.id,
            unitLabel: claim.covered_unit_label,
            claimType: claim.claim_type,
            status: claim.status,
            amountMinor: claim.amount_claimed,
            currency: claim.currency,
            acknowledgementDueAt: new Date(claim.acknowledgement_due_at),
          },
        };
      } catch (err) {
        const refusal = refusalOf(err, checked.unit);
        if (!refusal) throw err;
        const again = await open(token);
        return formView('view' in again ? o : again, values, refusal);
      }
    },
  };
}

export type BuyerClaimService = ReturnType<typeof createBuyerClaimService>;
