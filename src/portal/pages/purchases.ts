/**
 * Purchases: the API's search; one purchase (amounts, timeline, covered units, holders,
 * certificates with their links and QR codes); and, for an admin, the changes with a preview:
 * cancel covered units (the cancellation quote, then cancel at its price), add a certificate
 * holder, remove one (after a page naming it; its certificates are voided), endorse (the endorsement quote, then apply it). A cancellation or endorsement quote
 * records a key, so those go through the purchase's selling key (`sellingKeyOf`); everything is
 * on the audit log as the teammate. A preview's POST redirects (303) to the preview's own page
 * (the quote kept in the session), and carrying it out redirects to the purchase.
 */
import { formatMinorUnits } from '../../payments/checkout-link-email';
import type Router from '@koa/router';
import type { AppState } from '../../http/context';
import { modeOf, type KeptPreview, type PortalCtx, type PortalKit } from '../kit';
import type { CancellationQuote } from '../../purchases/schemas';
import type { Endorsement } from '../../endorsements/schemas';
import type { KeyMode } from '../../api-keys/secrets';
import { AppError } from '../../shared/errors';
import QRCode from 'qrcode';
import type { PurchaseDetail } from '../../purchases/schemas';
import { cancellableUnits, isInForce, type UnitStanding } from '../../purchases/rules';
import { CreateCertificateHolderRequest } from '../../certificate-holders/schemas';
import { EndorsementQuoteRequest } from '../../endorsements/schemas';
import {
  cancelFormPage,
  cancelPreviewPage,
  holderFormPage,
  purchasePage,
  purchasesPage,
  removeHolderPage,
  type CancellableUnit,
  type HolderForm,
} from '../views-purchases';
import { endorseFormPage, endorsePreviewPage } from '../views-endorsements';

export function registerPurchasePages(pages: Router<AppState>, kit: PortalKit): void {
  const { deps, frame, send, redirect, requireAdmin, record, viewOf, idParam, orNotFound, notFoundPage } = kit;
  pages.get('/purchases', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    const f = frame(ctx, 'Purchases', {
      active: 'purchases',
      modes: { current: mode, href: (m) => `/portal/purchases?mode=${m}${q ? `&q=${encodeURIComponent(q)}` : ''}` },
    });
    const empty = { total: 0, total_exact: true, page_index: 0, page_size: 50, has_more: false, purchases: [] };
    if (q.length > 200) return send(ctx, 400, purchasesPage(f, { mode, q, result: empty, error: 'Search for at most 200 characters.' }));
    const result = await deps.purchaseSearch.searchAccount(viewOf(ctx, mode), { search_text: q, page_size: 50, page_index: 0 });
    send(ctx, 200, purchasesPage(f, { mode, q, result }));
  });
  pages.get('/purchases/:id', async (rawCtx) => {
    const ctx = rawCtx as unknown as PortalCtx;
    const mode = modeOf(ctx.query.mode);
    const id = idParam(ctx);
    const view = viewOf(ctx, mode);
    const loaded = await orNotFound(ctx, 'purchase', `/portal/purchases?mode=${mode}`, () =>
      Promise.all([
        deps.purchases.get(view, id),
        deps.certificates.getCertificates({ mode }, { rootAccountId: view.rootAccountId, agentId: null }, { purchase_id: id }),
        deps.purchases.answers(view, id),
      ]),
    );
    if (!loaded) return;
    const [purchase, certificates, answers] = loaded;
    const qr = new Map<string, string>();
    for (const c of certificates.certificates) {
      qr.set(c.verification_url, await QRCode.toDataURL(c.verification_url, { errorCorrectionLevel: 'M', margin: 1, width: 192 }));
    }
    const admin = ctx.state.teammate!.portalRole === 'admin';
    const inForce = isInForce(purchase.status);
    const holders = await deps.certificateHolders.list(view, id);
    send(
      ctx,
      200,
      purchasePage(frame(ctx, `Purchase #${id}`, { active: 'purchases' }), {
        purchase,
        certificates,
        qr,
        mode,
        holders,
        answers,
        canChange: admin && inForce,
        canCancel: admin && cancellableOf(purchase).length > 0,
        cancellable: new Set(cancellableOf(purchase).map((u) => u.id)),
      }),
    );
  });

  /**
   * A preview's POST keeps its quote in the session (the newest 5) and redirects to its page, so a
   * reload shows the same quote instead of asking for a new one.
   */
  const keepPreview = (ctx: PortalCtx, preview: KeptPreview) => {
    ctx.session!.previews = [preview, ...(ctx.session!.previews ?? []).filter((p) => p.quoteId !== preview.quoteId)].slice(0, 5);
  };
  /**
   * An admin's route (`method` at `path`): `load` finds what it is about in the request's mode
   * (answering the not-found page itself and giving null when it cannot), then `handle` answers,
   * given the form's body (empty for a GET).
   */
  const adminRoute = <T>(
    method: 'get' | 'post',
    path: string,
    load: (ctx: PortalCtx, mode: KeyMode) => Promise<T | null>,
    handle: (ctx: PortalCtx, mode: KeyMode, found: T, body: Record<string, unknown>) => unknown,
  ) =>
    pages[method](path, requireAdmin, async (rawCtx) => {
      const ctx = rawCtx as unknown as PortalCtx;
      const mode = modeOf(ctx.query.mode);
      const found = await load(ctx, mode);
      if (found) await handle(ctx, mode, found, (ctx.request.body ?? {}) as Record<string, unknown>);
    });
  /** An admin's GET page at `path`, of what `load` finds (as adminRoute), sent 200 as `render` makes it. */
  const adminPage = <T>(
    path: string,
    load: (ctx: PortalCtx, mode: KeyMode) => Promise<T | null>,
    render: (ctx: PortalCtx, mode: KeyMode, found: T) => string,
  ) => adminRoute('get', path, load, (ctx, mode, found) => send(ctx, 200, render(ctx, mode, found)));
  /**
   * The kept preview the URL names (`:id`, `:quote`); null once the 404 page of a purchase this
   * account does not have, or the way back to the form (a preview no longer kept), is sent.
   */
  const keptPreview = async (ctx: PortalCtx, kind: KeptPreview['kind'], mode: KeyMode): Promise<KeptPreview | null> => {
    const purchase = await purchaseFor(ctx, mode);
    if (!purchase) return null;
    const id = purchase.id;
    const kept = ctx.session?.previews?.find((p) => p.kind === kind && p.quoteId === ctx.params.quote && p.purchaseId === id);
    if (kept) return kept;
    ctx.session!.flash = 'That preview is no longer kept: preview the change again.';
    redirect(ctx, `/portal/purchases/${id}/${kind}?mode=${mode}`);
    return null;
  };

  // Cancelling covered units: a form, a preview (the API's cancellation quote), then the cancel at that quote's price.
  const unitLabel = (i: PurchaseDetail['items'][number], u: PurchaseDetail['items'][number]['covered_units'][number]) =>
    `${i.product_name}: ${u.local_label}`;
  /** A unit as the API answered it, for the cancellable rule: anything but `active` (unpaid, held by a cancellation, refunded) counts as cancelled. */
  const standing = (u: PurchaseDetail['items'][number]['covered_units'][number]): UnitStanding => ({
    cancelled: u.state !== 'active',
    started: u.coverage_started,
  });
  const cancellableOf = (p: PurchaseDetail): CancellableUnit[] =>
    p.status === 'refunded'
      ? []
      : p.items.flatMap((i) => cancellableUnits(i.covered_units, standing).map((u) => ({ id: u.id, label: unitLabel(i, u) })));
  const purchaseFor = (ctx: PortalCtx, mode: KeyMode): Promise<PurchaseDetail | null> =>
    orNotFound(ctx, 'purchase', `/portal/purchases?mode=${mode}`, () => deps.purchases.get(viewOf(ctx, mode), idParam(ctx)));
  adminPage('/purchases/:id/cancel', purchaseFor, (ctx, mode, purchase) =>
    cancelFormPage(frame(ctx, `Cancel covered units of purchase #${purchase.id}`, { active: 'purchases' }), {
      purchaseId: purchase.id,
      mode,
      units: cancellableOf(purchase),
      chosen: /^\d{1,9}$/.test(String(ctx.query.unit)) ? Number(ctx.query.unit) : undefined,
    }),
  );
  adminRoute('post', '/purchases/:id/cancel/preview', purchaseFor, async (ctx, mode, purchase, body) => {
    const units = (Array.isArray(body.units) ? body.units : typeof body.units === 'string' ? [body.units] : []).map(String);
    const requestedBy = ['agency', 'buyer', 'insurer'].includes(String(body.requested_by))
      ? (String(body.requested_by) as 'agency')
      : 'agency';
    const reason = String(body.reason ?? '').trim();
    const offered = cancellableOf(purchase);
    const again = (error: string, errorAt?: 'reason') =>
      send(
        ctx,
        400,
        cancelFormPage(frame(ctx, `Cancel covered units of purchase #${purchase.id}`, { active: 'purchases' }), {
          purchaseId: purchase.id,
          mode,
          units: offered,
          error,
          errorAt,
          values: { units, requestedBy, reason },
        }),
      );
    if (units.length === 0) return again('Choose at least one covered unit to cancel.');
    if (!units.every((u) => offered.some((o) => String(o.id) === u))) return again('Choose covered units from the list.');
    if (reason.length > 500) return again('The reason is at most 500 characters.', 'reason');
    try {
      // A preview changes nothing but the stored quote (its price, held for a while): not an audited change.
      const quote = await deps.purchases.quoteCancellation(await deps.purchases.sellingKeyOf(viewOf(ctx, mode), purchase.id), purchase.id, {
        covered_unit_ids: units.map(Number),
        requested_by: requestedBy,
        reason: reason || undefined,
      });
      const labels = purchase.items.flatMap((i) => i.covered_units.map((u) => [u.id, unitLabel(i, u)] as [number, string]));
      const staying = purchase.items.flatMap((i) =>
        i.covered_units.filter((u) => u.state === 'active' && !units.includes(String(u.id))).map((u) => unitLabel(i, u)),
      );
      keepPreview(ctx, { kind: 'cancel', quoteId: quote.id, purchaseId: purchase.id, quote, labels, staying });
      redirect(ctx, `/portal/purchases/${purchase.id}/cancel/preview/${quote.id}?mode=${mode}`);
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return again(`No refund could be priced: ${err.message}.`);
      throw err;
    }
  });
  adminPage(
    '/purchases/:id/cancel/preview/:quote',
    (ctx, mode) => keptPreview(ctx, 'cancel', mode),
    (ctx, mode, kept) =>
      cancelPreviewPage(frame(ctx, `Refund preview for purchase #${kept.purchaseId}`, { active: 'purchases' }), {
        quote: kept.quote as CancellationQuote,
        mode,
        labels: new Map(kept.labels ?? []),
        staying: kept.staying ?? [],
      }),
  );
  /**
   * Does `act` to the purchase, on the audit log as `action` (with `details` of what it gave),
   * then goes back to the purchase page with `done`'s message. An AppError below 500 (the API
   * refused) is answered by `refused`: a string is flashed on the purchase page before its
   * message (`<refused>: <message>.`); a function answers itself. Other errors are thrown.
   */
  const onPurchase = async <T>(
    ctx: PortalCtx,
    mode: KeyMode,
    purchase: { id: number },
    o: {
      action: string;
      act: () => Promise<T>;
      details: (r: T) => Record<string, unknown>;
      done: (r: T) => string;
      refused: string | ((err: AppError) => unknown);
    },
  ) => {
    try {
      ctx.session!.flash = o.done(await record(ctx, o.action, { kind: 'purchase', id: String(purchase.id) }, o.act, o.details));
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      if (typeof o.refused !== 'string') return o.refused(err);
      ctx.session!.flash = `${o.refused}: ${err.message}.`;
    }
    redirect(ctx, `/portal/purchases/${purchase.id}?mode=${mode}`);
  };
  /**
   * Carries out a previewed quote (the form's `quote_id`, matching `pattern`) on the audit log as
   * `action`, then back to the purchase page with `done`'s message, or why nothing happened.
   */
  const carryOut = <T>(opts: {
    pattern: RegExp;
    action: string;
    nothing: string;
    act: (
      seller: Awaited<ReturnType<typeof deps.purchases.sellingKeyOf>>,
      purchaseId: number,
      quoteId: string,
      body: Record<string, unknown>,
    ) => Promise<T>;
    details: (r: T, quoteId: string) => Record<string, unknown>;
    done: (r: T) => string;
  }) =>
    async function (ctx: PortalCtx, mode: KeyMode, purchase: PurchaseDetail, body: Record<string, unknown>) {
      const quoteId = String(body.quote_id ?? '');
      const back = `/portal/purchases/${purchase.id}?mode=${mode}`;
      if (!opts.pattern.test(quoteId)) {
        ctx.session!.flash = `${opts.nothing}: preview it first.`;
        return redirect(ctx, back);
      }
      return onPurchase(ctx, mode, purchase, {
        action: opts.action,
        act: async () => opts.act(await deps.purchases.sellingKeyOf(viewOf(ctx, mode), purchase.id), purchase.id, quoteId, body),
        details: (x) => opts.details(x, quoteId),
        done: opts.done,
        refused: opts.nothing,
      });
    };
  adminRoute(
    'post',
    '/purchases/:id/cancel',
    purchaseFor,
    carryOut({
      pattern: /^cq_[0-9a-f]{24}$/,
      action: 'cancel_purchase_units',
      nothing: 'Nothing was cancelled',
      act: (seller, id, quoteId) => deps.purchases.cancel(seller, id, { quote_id: quoteId }),
      details: (c, quoteId) => ({ cancellation_id: c.id, quote_id: quoteId, status: c.status }),
      done: (c) => `Cancellation ${c.id} is ${c.status}: the refund and the voiding of the certificates follow.`,
    }),
  );

  // Certificate holders and endorsements, as the API's services do them, for the purchase's selling key.
  const activeUnits = (p: PurchaseDetail): CancellableUnit[] =>
    p.items.flatMap((i) => i.covered_units.filter((u) => u.state === 'active').map((u) => ({ id: u.id, label: unitLabel(i, u) })));
  const holderView = (ctx: PortalCtx, p: PurchaseDetail, mode: KeyMode, form: HolderForm, status = 200) =>
    send(
      ctx,
      status,
      holderFormPage(frame(ctx, `Add a certificate holder to purchase #${p.id}`, { active: 'purchases' }), {
        purchaseId: p.id,
        mode,
        units: activeUnits(p),
        form,
      }),
    );
  adminRoute('get', '/purchases/:id/holders/new', purchaseFor, (ctx, mode, purchase) =>
    holderView(ctx, purchase, mode, { values: { country: 'US' }, errors: {} }),
  );
  adminRoute('post', '/purchases/:id/holders', purchaseFor, async (ctx, mode, purchase, body) => {
    const names = ['name', 'line1', 'line2', 'city', 'region', 'postal_code', 'country', 'email', 'description_of_operations'];
    const flags = ['additional_insured', 'waiver_of_subrogation', 'notify_on_cancellation'];
    const values: Record<string, string> = {};
    for (const n of [...names, ...flags]) values[n] = typeof body[n] === 'string' ? (body[n] as string).trim() : '';
    const opt = (v: string) => (v === '' ? undefined : v);
    const parsed = CreateCertificateHolderRequest.safeParse({
      name: values.name,
      address: {
        line1: values.line1,
        line2: opt(values.line2!),
        city: values.city,
        region: values.region,
        postal_code: values.postal_code,
        country: values.country!.toUpperCase(),
      },
      email: opt(values.email!),
      description_of_operations: opt(values.description_of_operations!),
      additional_insured: values.additional_insured === 'yes',
      waiver_of_subrogation: values.waiver_of_subrogation === 'yes',
      notify_on_cancellation: values.notify_on_cancellation === 'yes',
    });
    if (!parsed.success) {
      const required: Record<string, string> = {
        name: 'Enter the name.',
        line1: 'Enter the first address line.',
        city: 'Enter the city.',
        region: 'Enter the state or region.',
        postal_code: 'Enter the postal code.',
      };
      const errors: Record<string, string> = {};
      for (const issue of parsed.error.issues) {
        const at = String(issue.path[issue.path.length - 1] ?? 'name');
        errors[at] ??=
          values[at] === '' && required[at] ? required[at] : `${issue.message.charAt(0).toUpperCase()}${issue.message.slice(1)}.`;
      }
      return holderView(ctx, purchase, mode, { values, errors }, 400);
    }
    return onPurchase(ctx, mode, purchase, {
      action: 'add_certificate_holder',
      act: () => deps.certificateHolders.add(viewOf(ctx, mode), purchase.id, parsed.data),
      details: (h) => ({ certificate_holder_id: h.id, certificates: h.certificates.length }),
      done: (h) => `${h.name} is added: ${h.certificates.length} certificate${h.certificates.length === 1 ? ' is' : 's are'} being issued.`,
      refused: (err) =>
        holderView(ctx, purchase, mode, { values, errors: {}, formError: `The holder was not added: ${err.message}.` }, 400),
    });
  });

  // Removing a holder (issue 53, item 7): asked first on a page naming it, then the API's removal (its certificates voided).
  const holderFor = async (ctx: PortalCtx, mode: KeyMode) => {
    const purchase = await purchaseFor(ctx, mode);
    if (!purchase) return null;
    const holderId = /^\d{1,9}$/.test(String(ctx.params.holderId)) ? Number(ctx.params.holderId) : 0;
    const holder = (await deps.certificateHolders.list(viewOf(ctx, mode), purchase.id)).find(
      (h) => h.id === holderId && h.status === 'active',
    );
    if (!holder) {
      notFoundPage(ctx, 'certificate holder', `/portal/purchases/${purchase.id}?mode=${mode}`);
      return null;
    }
    return { purchase, holder };
  };
  adminPage('/purchases/:id/holders/:holderId/remove', holderFor, (ctx, mode, found) =>
    removeHolderPage(frame(ctx, `Remove ${found.holder.name} from purchase #${found.purchase.id}?`, { active: 'purchases' }), {
      purchaseId: found.purchase.id,
      mode,
      holder: found.holder,
    }),
  );
  adminRoute('post', '/purchases/:id/holders/:holderId/remove', holderFor, (ctx, mode, { purchase, holder }) =>
    onPurchase(ctx, mode, purchase, {
      action: 'remove_certificate_holder',
      act: () => deps.certificateHolders.remove(viewOf(ctx, mode), purchase.id, holder.id),
      details: (h) => ({ certificate_holder_id: h.id, name: h.name }),
      done: (h) => `${h.name} is removed: its certificates on this purchase are void.`,
      refused: `${holder.name} was not removed`,
    }),
  );

  const notStartedDays = (p: PurchaseDetail): CancellableUnit[] =>
    p.items.flatMap((i) =>
      cancellableUnits(i.covered_units, standing)
        .filter((u) => u.kind === 'day')
        .map((u) => ({ id: u.id, label: unitLabel(i, u) })),
    );
  const notStartedTrips = (p: PurchaseDetail): CancellableUnit[] =>
    p.items.flatMap((i) =>
      cancellableUnits(i.covered_units, standing)
        .filter((u) => u.kind === 'trip')
        .map((u) => ({ id: u.id, label: unitLabel(i, u) })),
    );
  const endorseView = (
    ctx: PortalCtx,
    p: PurchaseDetail,
    mode: KeyMode,
    values: Record<string, string>,
    errors: Record<string, string>,
    formError?: string,
  ) =>
    send(
      ctx,
      formError || Object.keys(errors).length ? 400 : 200,
      endorseFormPage(frame(ctx, `Change purchase #${p.id}`, { active: 'purchases' }), {
        purchaseId: p.id,
        mode,
        days: notStartedDays(p),
        trips: notStartedTrips(p),
        dayItems: p.items.filter((i) => i.covered_units[0]?.kind === 'day').map((i) => ({ id: i.id, label: i.product_name })),
        tripItems: p.items.filter((i) => i.covered_units[0]?.kind === 'trip').map((i) => ({ id: i.id, label: i.product_name })),
        values,
        errors,
        formError,
      }),
    );
  adminRoute('get', '/purchases/:id/endorse', purchaseFor, (ctx, mode, purchase) => endorseView(ctx, purchase, mode, {}, {}));
  adminRoute('post', '/purchases/:id/endorse/preview', purchaseFor, async (ctx, mode, purchase, body) => {
    const values = {
      named_insured: String(body.named_insured ?? '').trim(),
      covered_unit_id: String(body.covered_unit_id ?? ''),
      start_date: String(body.start_date ?? '').trim(),
      move_trip: String(body.move_trip ?? ''),
      move_trip_start: String(body.move_trip_start ?? '').trim(),
      move_trip_end: String(body.move_trip_end ?? '').trim(),
      add_item: String(body.add_item ?? ''),
      add_start: String(body.add_start ?? '').trim(),
      add_end: String(body.add_end ?? '').trim(),
      trip_item: String(body.trip_item ?? ''),
      trip_start: String(body.trip_start ?? '').trim(),
      trip_end: String(body.trip_end ?? '').trim(),
    };
    const errors: Record<string, string> = {};
    const changes: unknown[] = [];
    /**
     * A change chosen from a list: a choice not `listed` puts `notListed` on the first field of
     * `needs`; else the first field of `needs` left empty gets its message; else `change()` is made.
     */
    const choose = (listed: boolean, notListed: string, needs: Partial<Record<keyof typeof values, string>>, change: () => unknown) => {
      const fields = Object.keys(needs) as Array<keyof typeof values>;
      const empty = fields.find((f) => !values[f]);
      if (!listed) errors[fields[0]!] = notListed;
      else if (empty) errors[empty] = needs[empty]!;
      else changes.push(change());
    };
    if (values.trip_item) {
      // A trip added is paid for first, so it goes in a change of its own.
      if (values.named_insured || values.covered_unit_id || values.add_item || values.move_trip)
        return endorseView(ctx, purchase, mode, values, {}, 'Add a trip in a change of its own, without other changes.');
      choose(
        purchase.items.some((i) => String(i.id) === values.trip_item && i.covered_units[0]?.kind === 'trip'),
        'Choose a product from the list.',
        { trip_start: 'Enter when the trip starts.', trip_end: 'Enter when the trip ends.' },
        () => ({
          type: 'add_covered_units',
          purchase_item_id: Number(values.trip_item),
          trips: [{ start: values.trip_start, end: values.trip_end }],
        }),
      );
    }
    if (values.add_item) {
      // Days added are paid for first, so they go in a change of their own.
      if (values.named_insured || values.covered_unit_id || values.move_trip)
        return endorseView(
          ctx,
          purchase,
          mode,
          values,
          {},
          'Add days in a change of their own, without correcting the name or moving a day.',
        );
      choose(
        purchase.items.some((i) => String(i.id) === values.add_item),
        'Choose a product from the list.',
        { add_start: 'Enter the first day to add.', add_end: 'Enter the last day to add.' },
        () => ({
          type: 'add_covered_units',
          purchase_item_id: Number(values.add_item),
          start_date: values.add_start,
          end_date: values.add_end,
        }),
      );
    }
    if (values.named_insured) changes.push({ type: 'named_insured', name: values.named_insured });
    if (values.covered_unit_id)
      choose(
        notStartedDays(purchase).some((d) => String(d.id) === values.covered_unit_id),
        'Choose a day from the list.',
        { start_date: 'Enter the new date.' },
        () => ({ type: 'move_covered_unit', covered_unit_id: Number(values.covered_unit_id), start_date: values.start_date }),
      );
    if (values.move_trip)
      choose(
        notStartedTrips(purchase).some((t) => String(t.id) === values.move_trip),
        'Choose a trip from the list.',
        { move_trip_start: 'Enter when the trip starts.', move_trip_end: 'Enter when the trip ends.' },
        () => ({
          type: 'move_covered_unit',
          covered_unit_id: Number(values.move_trip),
          trip: { start: values.move_trip_start, end: values.move_trip_end },
        }),
      );
    if (Object.keys(errors).length) return endorseView(ctx, purchase, mode, values, errors);
    if (changes.length === 0)
      return endorseView(
        ctx,
        purchase,
        mode,
        values,
        {},
        'Nothing to change: correct the name, move a day or a trip, add days or add a trip.',
      );
    const parsed = EndorsementQuoteRequest.safeParse({ changes });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const at = issue.path.includes('name')
          ? 'named_insured'
          : values.move_trip && !values.covered_unit_id
            ? 'move_trip_start'
            : values.trip_item
              ? 'trip_start'
              : values.add_item
                ? 'add_start'
                : 'start_date';
        errors[at] ??= `${issue.message.charAt(0).toUpperCase()}${issue.message.slice(1)}.`;
      }
      return endorseView(ctx, purchase, mode, values, errors);
    }
    try {
      const quote = await deps.endorsements.quote(
        await deps.purchases.sellingKeyOf(viewOf(ctx, mode), purchase.id),
        purchase.id,
        parsed.data,
      );
      keepPreview(ctx, { kind: 'endorse', quoteId: quote.id, purchaseId: purchase.id, quote });
      redirect(ctx, `/portal/purchases/${purchase.id}/endorse/preview/${quote.id}?mode=${mode}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return endorseView(ctx, purchase, mode, values, {}, `The change cannot be made: ${err.message}.`);
    }
  });
  adminPage(
    '/purchases/:id/endorse/preview/:quote',
    (ctx, mode) => keptPreview(ctx, 'endorse', mode),
    (ctx, mode, kept) =>
      endorsePreviewPage(frame(ctx, `Preview of the change to purchase #${kept.purchaseId}`, { active: 'purchases' }), {
        quote: kept.quote as Endorsement,
        mode,
      }),
  );
  adminRoute(
    'post',
    '/purchases/:id/endorse',
    purchaseFor,
    carryOut({
      pattern: /^eq_[0-9a-f]{24}$/,
      action: 'endorse_purchase',
      nothing: 'Nothing was changed',
      act: (seller, id, quoteId, body) =>
        deps.endorsements.endorse(seller, id, quoteId, body.payment === 'checkout_link' ? { method: 'checkout_link' } : undefined),
      details: (e) => ({ quote_id: e.id, status: e.status, reissues: e.reissues.length, payment: e.payment?.method ?? null }),
      done: (e) =>
        e.status === 'awaiting_payment'
          ? `A checkout link for ${formatMinorUnits(e.total_difference, e.currency)} is open until ${e.payment?.checkout_expires_at ?? ''}: ${e.payment?.checkout_url ?? ''} — send it to the buyer; the change takes effect once it is paid.`
          : `The change is applied: ${e.reissues.length} certificate${e.reissues.length === 1 ? ' is' : 's are'} reissued as a new version.`,
    }),
  );
}
