/**
 * Claims (issue 51, items 1 and 2): first notice of loss on a purchase, its reads, comments, the
 * product's claim settings, and the test-mode helper that moves a claim through its states.
 *
 * Filing decides, in this order (each refusal an AppError):
 * 1. The purchase is the key's (account, mode, teammate), else 404 NOT_FOUND.
 * 2. The incident is not in the future (the purchase's test clock, when it has one, is its now),
 *    else 400 VALIDATION_ERROR; the currency, when sent, is the purchase's, else 400 VALIDATION_ERROR.
 * 3. It falls in a covered unit of the purchase (start inclusive, end exclusive; of
 *    `covered_unit_id` when sent) that was sold (the purchase paid), else 400 INCIDENT_NOT_COVERED
 *    naming the covered windows; when units of several products cover it, `covered_unit_id` or a
 *    claim type only one of them offers decides, else 400 VALIDATION_ERROR naming the candidates.
 * 4. That unit was not cancelled and the purchase not refunded in full, else 409 COVERED_UNIT_CANCELLED.
 * 5. The claim type is in the product's list, else 400 VALIDATION_ERROR naming the list.
 * 6. No open (not closed) claim holds the same unit and incident day, else 409 DUPLICATE_CLAIM
 *    naming it. The same Idempotency-Key again answers the claim it filed.
 * The claim is then written `submitted` with the unit's current certificate number and its
 * acknowledgement deadline (the product's business days), and its workflow `claim-<id>` is
 * started; every later status is written by that workflow. Attachments are answered with signed
 * upload URLs: their bytes go straight to storage, never through the API; reading a claim checks
 * the ones still awaited against storage (type and size as declared).
 */
import { createHash } from 'node:crypto';
import type { Principal } from '../api-keys/service';
import { AppError, notFound } from '../shared/errors';
import type { ObjectStore } from '../storage/object-store';
import type { SaleRepository } from '../purchases/sale-repository';
import type { PurchaseRecord } from '../purchases/purchase-record';
import { purchaseScopeOf } from '../purchases/service';
import type { CertificatesRepository } from '../certificates/repository';
import type { ClaimActionInput, ClaimActor } from '../../workflows/claim-contracts';
import type { ClaimAttachmentRecord, ClaimEventRecord, ClaimRecord, ClaimsRepository, NewAttachment } from './repository';
import type { ClaimWorkflows } from './workflow-client';
import { claimFacts } from './claim-object';
import {
  ATTACHMENT_LIMITS,
  addBusinessDays,
  attachmentVerdict,
  claimSettingsOf,
  incidentDayOf,
  unitsCovering,
  type ClaimSettings,
  type UnitWindow,
} from './rules';
import type { Claim, ClaimActionRequest, ClaimSettingsView, CreateClaimRequest, UpdateClaimSettingsRequest } from './schemas';

export interface ClaimServiceDeps {
  claims: ClaimsRepository;
  sales: Pick<SaleRepository, 'findInScope' | 'findById' | 'itemDetails'>;
  certificates: Pick<CertificatesRepository, 'listForPurchase'>;
  /** Answers the product in the caller's scope, or throws 404 NOT_FOUND (the products service's `get`). */
  assertProductInScope: (principal: Principal, productId: number) => Promise<unknown>;
  store: Pick<ObjectStore, 'signedUploadUrl' | 'stat'>;
  workflows: ClaimWorkflows;
  /** The kind of root account `id` (agency, insurer, mga), or null when there is none. */
  accountKind: (rootAccountId: number) => Promise<'agency' | 'insurer' | 'mga' | null>;
  now?: () => Date;
}

/** How a key sees a claim: the agency that owns it, or an adjuster of the insurer or MGA its product names. */
export type ClaimViewer = 'agency' | 'adjuster';

/** Who acts: the key (its id), or `actorId` when given (a portal teammate: `teammate-<agent id>`). */
const actorOf = (principal: Principal, type: ClaimActor['type'] = 'api_key', actorId?: string): ClaimActor => ({
  type,
  id: actorId ?? String(principal.apiKeyId),
});

/** `claims/<claimId>/attachments/<attachmentIndex>-<safe file name>`: where an attachment is uploaded. */
export function attachmentKey(claimId: number, index: number, fileName: string): string {
  const safe =
    fileName
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^[._-]+/, '')
      .slice(0, 120) || 'file';
  return `claims/${claimId}/attachments/${index + 1}-${safe}`;
}

export function createClaimService(deps: ClaimServiceDeps) {
  const now = deps.now ?? (() => new Date());

  async function ownedPurchase(principal: Principal, purchaseId: number): Promise<PurchaseRecord> {
    const p = await deps.sales.findInScope(purchaseId, purchaseScopeOf(principal));
    if (!p) throw notFound('purchase', purchaseId);
    return p;
  }

  /**
   * Claim `claimId` as the key sees it: its agency's (purchase in the key's scope), or an adjuster's
   * (the key's account is the insurer or MGA of the claim's product, same mode); 404 NOT_FOUND
   * otherwise (another agency, another insurer).
   */
  async function visibleClaim(principal: Principal, claimId: number): Promise<{ claim: ClaimRecord; as: ClaimViewer }> {
    const c = await deps.claims.find(claimId);
    if (c && c.mode === principal.mode && c.rootAccountId !== principal.rootAccountId) {
      const parties = await deps.claims.partiesOf(c.productLineId);
      if (parties.insurer === principal.rootAccountId || parties.mga === principal.rootAccountId) return { claim: c, as: 'adjuster' };
    }
    return { claim: await ownedClaim(principal, claimId), as: 'agency' };
  }

  /** Claim `claimId` when its purchase is in the key's scope; 404 NOT_FOUND otherwise. */
  async function ownedClaim(principal: Principal, claimId: number): Promise<ClaimRecord> {
    const c = await deps.claims.find(claimId);
    if (!c || c.rootAccountId !== principal.rootAccountId || c.mode !== principal.mode) throw notFound('claim', claimId);
    if (!(await deps.sales.findInScope(c.purchaseId, purchaseScopeOf(principal)))) throw notFound('claim', claimId);
    return c;
  }

  async function settingsOf(productLineIds: number[]): Promise<Map<number, ClaimSettings>> {
    const stored = await deps.claims.settings(productLineIds);
    return new Map(productLineIds.map((id) => [id, claimSettingsOf(stored.get(id))]));
  }

  /** Checks the attachments still awaited against storage (metadata only) and records what is found. */
  async function settleAttachments(list: ClaimAttachmentRecord[]): Promise<ClaimAttachmentRecord[]> {
    return Promise.all(
      list.map(async (a) => {
        if (a.status !== 'awaiting_upload') return a;
        const verdict = attachmentVerdict(a, await deps.store.stat(a.storageKey));
        if (!verdict) return a;
        await deps.claims.settleAttachment(a.id, verdict);
        return { ...a, ...verdict, rejectionReason: verdict.status === 'rejected' ? verdict.reason : null };
      }),
    );
  }

  async function toAttachment(c: ClaimRecord, a: ClaimAttachmentRecord): Promise<Claim['attachments'][number]> {
    const awaited = a.status === 'awaiting_upload' && c.status !== 'closed';
    const upload = awaited
      ? await deps.store.signedUploadUrl(a.storageKey, {
          expiresInSeconds: ATTACHMENT_LIMITS.uploadUrlSeconds,
          contentType: a.contentType,
          maxBytes: a.declaredSizeBytes,
        })
      : null;
    return {
      id: a.id,
      file_name: a.fileName,
      content_type: a.contentType,
      size_bytes: a.sizeBytes ?? a.declaredSizeBytes,
      status: a.status,
      rejection_reason: a.rejectionReason,
      upload: upload
        ? {
            method: 'PUT',
            url: upload.url,
            headers: upload.headers,
            expires_at: new Date(now().getTime() + ATTACHMENT_LIMITS.uploadUrlSeconds * 1000).toISOString(),
          }
        : null,
    };
  }

  const toEvent = (e: ClaimEventRecord): NonNullable<Claim['history']>[number] => ({
    seq: e.seq,
    kind: e.kind,
    from_status: e.fromStatus,
    to_status: e.toStatus,
    actor: e.actor,
    note: e.note,
    data: e.data,
    created_at: e.createdAt.toISOString(),
  });

  /** The wire shape of claim `c` (with its history when `withHistory`). */
  async function view(c: ClaimRecord, withHistory: boolean): Promise<Claim> {
    const [attachments, events, items] = await Promise.all([
      deps.claims.attachments(c.id).then(settleAttachments),
      withHistory ? deps.claims.events(c.id) : Promise.resolve([]),
      deps.sales.itemDetails(c.purchaseId),
    ]);
    const unit = items.flatMap((i) => i.units).find((u) => u.id === c.coveredUnitId);
    return {
      ...claimFacts(c),
      covered_unit_label: unit?.localLabel ?? '',
      description: c.description,
      claimant: c.claimant,
      payout_account: c.payoutAccount,
      payout_failure: c.payoutFailure,
      attachments: await Promise.all(attachments.map((a) => toAttachment(c, a))),
      ...(withHistory ? { history: events.map(toEvent) } : {}),
      created_at: c.createdAt.toISOString(),
      updated_at: c.updatedAt.toISOString(),
    };
  }

  /** Which unit of `p` the claim is against (steps 3 to 5 of the module's rules). */
  async function coveringUnit(
    p: PurchaseRecord,
    body: CreateClaimRequest,
    incidentAt: Date,
  ): Promise<{ unit: UnitWindow; settings: ClaimSettings }> {
    const items = await deps.sales.itemDetails(p.id);
    const units: UnitWindow[] = items.flatMap((i) =>
      i.units.map((u) => ({
        id: u.id,
        productLineId: i.productLineId,
        startsAt: u.startsAt,
        endsAt: u.endsAt,
        timeZone: u.timeZone,
        localLabel: u.localLabel,
        cancelled: u.cancelledAt !== null,
      })),
    );
    const named = body.covered_unit_id === undefined ? units : units.filter((u) => u.id === body.covered_unit_id);
    if (body.covered_unit_id !== undefined && named.length === 0)
      throw new AppError('VALIDATION_ERROR', `covered_unit_id: purchase ${p.id} has no covered unit ${body.covered_unit_id}`, {
        details: [{ path: 'covered_unit_id', message: `purchase ${p.id} has no covered unit ${body.covered_unit_id}` }],
      });
    const covering = p.paidAt ? unitsCovering(named, incidentAt) : [];
    if (covering.length === 0) {
      const windows = named.map((u) => `${u.startsAt.toISOString()} to ${u.endsAt.toISOString()}`).join('; ');
      throw new AppError(
        'INCIDENT_NOT_COVERED',
        p.paidAt
          ? `The incident at ${incidentAt.toISOString()} is outside the purchase’s cover (${windows || 'no covered units'})`
          : `Purchase ${p.id} was never paid: nothing was in force at ${incidentAt.toISOString()}`,
        { details: [{ path: 'incident_at', message: 'not inside a covered unit of the purchase' }] },
      );
    }
    const settings = await settingsOf([...new Set(covering.map((u) => u.productLineId))]);
    let candidates = covering;
    if (candidates.length > 1) {
      const offering = candidates.filter((u) => settings.get(u.productLineId)!.claimTypes.includes(body.claim_type));
      if (offering.length > 0) candidates = offering;
    }
    if (candidates.length > 1)
      throw new AppError(
        'VALIDATION_ERROR',
        `covered_unit_id: the incident falls in covered units ${candidates.map((u) => u.id).join(', ')}; name one`,
        {
          details: [{ path: 'covered_unit_id', message: `one of ${candidates.map((u) => u.id).join(', ')}` }],
        },
      );
    const unit = candidates[0]!;
    if (unit.cancelled || p.status === 'refunded')
      throw new AppError(
        'COVERED_UNIT_CANCELLED',
        p.status === 'refunded'
          ? `Purchase ${p.id} was refunded in full: covered unit ${unit.id} (${unit.localLabel}) was not in force at the incident`
          : `Covered unit ${unit.id} (${unit.localLabel}) was cancelled: it was not in force at the incident`,
      );
    const own = settings.get(unit.productLineId)!;
    if (!own.claimTypes.includes(body.claim_type))
      throw new AppError('VALIDATION_ERROR', `claim_type: must be one of the product’s claim types: ${own.claimTypes.join(', ')}`, {
        details: [{ path: 'claim_type', message: `must be one of ${own.claimTypes.join(', ')}` }],
      });
    return { unit, settings: own };
  }

  async function getSettings(principal: Principal, productId: number): Promise<ClaimSettingsView> {
    await deps.assertProductInScope(principal, productId);
    const s = (await settingsOf([productId])).get(productId)!;
    return { product_id: productId, claim_types: s.claimTypes, acknowledgement_business_days: s.acknowledgementBusinessDays };
  }

  return {
    /** Refuses (404 NOT_FOUND) a purchase outside the key's scope: checked before the body, so another account's id reads 404 whatever is sent. */
    async assertPurchaseOwned(principal: Principal, purchaseId: number): Promise<void> {
      await ownedPurchase(principal, purchaseId);
    },

    /** The test helper's scope: 404 ROUTE_NOT_FOUND for a live key, 404 NOT_FOUND for a claim outside the key's scope. */
    async assertTestClaimOwned(principal: Principal, claimId: number): Promise<void> {
      if (principal.mode !== 'test') throw new AppError('ROUTE_NOT_FOUND', 'Test helpers answer test-mode API keys only');
      await ownedClaim(principal, claimId);
    },

    /**
     * Files a claim on purchase `purchaseId` (the module's rules); answers it `submitted` with its
     * history and an upload URL per attachment. `idempotencyKey` (the request's Idempotency-Key)
     * makes a retry answer the same claim. `filedBy` `buyer`: filed on the buyer's own claim page
     * (the history's filing names the buyer, not the key).
     */
    async file(
      principal: Principal,
      purchaseId: number,
      body: CreateClaimRequest,
      idempotencyKey?: string,
      filedBy?: 'buyer',
    ): Promise<{ claim: Claim; created: boolean }> {
      const p = await ownedPurchase(principal, purchaseId);
      const requestKey = idempotencyKey
        ? createHash('sha256').update(`claim|${principal.rootAccountId}|${principal.mode}|${idempotencyKey}`).digest('hex')
        : null;
      const incidentAt = new Date(body.incident_at);
      const clock = p.testClockAt ?? now();
      if (incidentAt.getTime() > clock.getTime())
        throw new AppError('VALIDATION_ERROR', `incident_at: must not be in the future (now is ${clock.toISOString()})`, {
          details: [{ path: 'incident_at', message: 'must not be in the future' }],
        });
      if (body.currency !== undefined && body.currency !== p.currency)
        throw new AppError('VALIDATION_ERROR', `currency: must be the purchase’s currency, ${p.currency}`, {
          details: [{ path: 'currency', message: `must be ${p.currency}` }],
        });
      const { unit, settings } = await coveringUnit(p, body, incidentAt);
      const certificate = (await deps.certificates.listForPurchase(p.id)).find(
        (c) => c.coveredUnitId === unit.id && !c.voidedAt && !c.supersededAt,
      );
      const attachments: NewAttachment[] = body.attachments.map((a) => ({
        fileName: a.file_name,
        contentType: a.content_type,
        declaredSizeBytes: a.size_bytes,
      }));
      const outcome = await deps.claims.file(
        {
          rootAccountId: p.rootAccountId,
          mode: p.mode,
          agentId: p.agentId,
          apiKeyId: principal.apiKeyId,
          purchaseId: p.id,
          coveredUnitId: unit.id,
          productLineId: unit.productLineId,
          certificateNumber: certificate?.certificateNumber ?? null,
          incidentAt,
          incidentDay: incidentDayOf(incidentAt, unit.timeZone),
          claimType: body.claim_type,
          description: body.description,
          claimant: { name: body.claimant.name, email: body.claimant.email, phone: body.claimant.phone ?? null },
          payoutAccount: body.claimant.payout_account ?? null,
          amountClaimedMinor: body.amount_claimed,
          currency: p.currency,
          acknowledgementDueAt: addBusinessDays(now(), settings.acknowledgementBusinessDays),
          requestKey,
          ...(filedBy ? { filedBy } : {}),
        },
        attachments,
        (claimId, index, a) => attachmentKey(claimId, index, a.fileName),
      );
      if ('openClaim' in outcome)
        throw new AppError(
          'DUPLICATE_CLAIM',
          `Claim ${outcome.openClaim} is already open on covered unit ${unit.id} for ${incidentDayOf(incidentAt, unit.timeZone)}: add to it (comments) instead of filing again`,
          { details: [{ path: 'incident_at', message: `claim ${outcome.openClaim} is open on the same covered unit and day` }] },
        );
      const id = 'filed' in outcome ? outcome.filed : outcome.sameRequest;
      const claim = (await deps.claims.find(id))!;
      // The owner from now on (a retry of the same request attaches to the run it started).
      await deps.workflows.start(claim);
      return { claim: await view(claim, true), created: 'filed' in outcome };
    },

    /** The purchase's claims, newest first (without their histories). */
    async listForPurchase(principal: Principal, purchaseId: number): Promise<Claim[]> {
      await ownedPurchase(principal, purchaseId);
      const claims = await deps.claims.listForPurchase(purchaseId);
      return Promise.all(claims.map((c) => view(c, false)));
    },

    /** One claim with its history (its agency's key, or an adjuster's of its product's insurer or MGA). */
    async get(principal: Principal, claimId: number): Promise<Claim> {
      return view((await visibleClaim(principal, claimId)).claim, true);
    },

    /** Refuses (404 NOT_FOUND) a claim the key neither owns nor decides. */
    async assertClaimVisible(principal: Principal, claimId: number): Promise<void> {
      await visibleClaim(principal, claimId);
    },

    /**
     * A page of the claims the key sees, newest first (without histories): an insurer's or MGA's
     * key, the claims of products naming it; an agency's, its own (a teammate's key, theirs).
     */
    async list(
      principal: Principal,
      q: { status?: ClaimRecord['status']; pageSize: number; pageIndex: number },
    ): Promise<{ items: Claim[]; total: number }> {
      const agency = (await deps.accountKind(principal.rootAccountId)) === 'agency';
      const { claims, total } = await deps.claims.list(
        { rootAccountId: principal.rootAccountId, mode: principal.mode, as: agency ? 'agency' : 'party' },
        {
          ...(q.status ? { status: q.status } : {}),
          agentId: agency ? principal.agentId : null,
          limit: q.pageSize,
          offset: q.pageIndex * q.pageSize,
        },
      );
      return { items: await Promise.all(claims.map((c) => view(c, false))), total };
    },

    /** Adds a comment to the claim's history (through its workflow): the agency's, or an adjuster's; answers the claim. */
    async comment(principal: Principal, claimId: number, text: string): Promise<Claim> {
      const { claim: c, as } = await visibleClaim(principal, claimId);
      await deps.workflows.comment(c, { actor: actorOf(principal, as === 'adjuster' ? 'adjuster' : 'api_key'), text });
      return view((await deps.claims.find(claimId))!, true);
    },

    /**
     * An adjuster's decision (`body.action`, through the claim's workflow and its validator): only a
     * key of the insurer or MGA the claim's product names. The agency's own key gets 403
     * CLAIM_DECISION_NOT_ALLOWED; any other key 404 NOT_FOUND. Answers the claim with its history.
     * `actorId` names who acted in the history when it is not the key (the portal's adjuster: `teammate-<agent id>`).
     */
    async decide(principal: Principal, claimId: number, body: ClaimActionRequest, actorId?: string): Promise<Claim> {
      const { claim: c, as } = await visibleClaim(principal, claimId);
      if (as !== 'adjuster')
        throw new AppError(
          'CLAIM_DECISION_NOT_ALLOWED',
          `Claim ${claimId} is decided by the insurer or MGA its product names; the agency follows it and comments`,
        );
      if (body.action === 'record_payment' && body.reference === undefined)
        throw new AppError('VALIDATION_ERROR', 'reference: a payment recorded by hand needs its reference', {
          details: [{ path: 'reference', message: 'required for record_payment' }],
        });
      await deps.workflows.act(c, {
        action: body.action as ClaimActionInput['action'],
        actor: actorOf(principal, 'adjuster', actorId),
        ...(body.amount !== undefined ? { amountMinor: body.amount } : {}),
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
        ...(body.reason_code !== undefined ? { reasonCode: body.reason_code } : {}),
        ...(body.reference !== undefined ? { reference: body.reference } : {}),
      });
      return view((await deps.claims.find(claimId))!, true);
    },

    /**
     * Test-mode helper: takes `body.action` on the claim as an adjuster would (through its
     * workflow's update and validator). ROUTE_NOT_FOUND (404) for a live key. A payment without a
     * reference gets one made up (`test_claim_payment_<claim>`).
     */
    async act(principal: Principal, claimId: number, body: ClaimActionRequest): Promise<Claim> {
      if (principal.mode !== 'test') throw new AppError('ROUTE_NOT_FOUND', 'Test helpers answer test-mode API keys only');
      const c = await ownedClaim(principal, claimId);
      const input: ClaimActionInput = {
        action: body.action as ClaimActionInput['action'],
        actor: actorOf(principal, 'test_helper'),
        ...(body.amount !== undefined ? { amountMinor: body.amount } : {}),
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
        ...(body.reason_code !== undefined ? { reasonCode: body.reason_code } : {}),
        ...(body.action === 'record_payment' ? { reference: body.reference ?? `test_claim_payment_${c.id}` } : {}),
      };
      await deps.workflows.act(c, input);
      return view((await deps.claims.find(claimId))!, true);
    },

    /** The product's claim settings (the defaults until set); 404 outside the key's scope. */
    getSettings,

    /** Changes what is sent of the product's claim settings; claims filed from then on use them. 404 outside the key's scope. */
    async updateSettings(principal: Principal, productId: number, body: UpdateClaimSettingsRequest): Promise<ClaimSettingsView> {
      await deps.assertProductInScope(principal, productId);
      const current = (await settingsOf([productId])).get(productId)!;
      await deps.claims.saveSettings(productId, {
        claimTypes: body.claim_types ?? current.claimTypes,
        acknowledgementBusinessDays: body.acknowledgement_business_days ?? current.acknowledgementBusinessDays,
      });
      return getSettings(principal, productId);
    },
  };
}

export type ClaimService = ReturnType<typeof createClaimService>;
