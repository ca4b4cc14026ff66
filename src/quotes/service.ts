/**
 * The quote surface (spec §4.4 steps 1–2, §5.5): the approved catalog with question templates,
 * and validation + pricing of the buyer's answers into a purchase.
 *
 * Visibility: a key quotes only product lines approved for its root account, active, with a
 * question set, in its own mode (a live key never sees a test product; a test key only test
 * products), narrowed to the key's own product list when it has one (spec §5.1), and its root
 * account's bundles in its mode whose every product it may quote.
 *
 * Bundles sold as bundles: the catalog lists them after the product lines
 * (`product_line_is_bundle: true`, the id being the bundle's), with one question template that
 * holds every question of its products once (the primary product's wording first) and the sum of
 * their default prices. A selected item `{ product_line_template_id: <bundle id>,
 * product_line_is_bundle: true, … }` answers that template once; each product of the bundle is
 * validated with the answers to its own questions and becomes an item of the purchase (the
 * primary product first), all paid in one checkout. At most one bundle per purchase.
 * Errors (bare body, spec §7.2): SELLER_NOT_FOUND (404) when `idp_root_account_uuid` is not the
 * key's account; ACCESS_TOKEN_INVALID/EXPIRED (401) from the buyer check; VALIDATION_ERROR (400)
 * with `errors: [{ product_line_template_id, question, reason }]` listing every problem at once.
 * Money: minor units throughout; the catalog's default price is major units for display.
 */
import { AppError } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import type { QuestionSetsRepository } from '../question-sets/repository';
import { isTripExcess } from '../question-sets/definition';
import { toMajorUnits } from '../shared/money';
import { validateAnswers, type AnswerProblem, type ValidatedAnswers } from './answers';
import { MAX_CHARGE_MINOR, priceQuote } from './pricing';
import type { QuotableBundle, QuotableProduct, QuotableScope, QuotesRepository } from './repository';
import type { Question, QuestionSetDefinition } from '../question-sets/definition';
import type { SaleRepository } from '../purchases/sale-repository';
import { insertHoldersFromAnswers } from '../certificate-holders/repository';
import { taxLineObject } from '../taxes/premium-tax';
import type { CatalogRequest, CatalogResponse, CheckoutResponse, ValidateRequest } from './schemas';
import type { CheckoutSession } from '../../workflows/contracts';
import type { PurchaseStartFacts } from '../purchases/workflow-client';
import type { ItemTax, TaxPricer } from '../taxes/service';

/** What the quote service needs to know about the buyer behind a token. */
export interface VerifiedBuyer {
  buyerId: number;
  email: string;
}
export type VerifyBuyer = (principal: Principal, idpAccntUuid: string, accessToken: string) => Promise<VerifiedBuyer>;

const scopeOf = (p: Principal): QuotableScope => ({ rootAccountId: p.rootAccountId, apiKeyId: p.apiKeyId, testMode: p.mode === 'test' });

/** Keys of a selected item that are not answers. */
const ITEM_KEYS = ['product_line_template_id', 'product_line_is_trip_excess_product', 'product_line_is_bundle'];

/** A bundle's one template: every question and agreement of its products once, by id, the first product's first. */
function bundleTemplate(defs: QuestionSetDefinition[]): { questions: Question[]; agreements: QuestionSetDefinition['agreements'] } {
  const questions = new Map<string, Question>();
  const agreements = new Map<string, QuestionSetDefinition['agreements'][number]>();
  for (const def of defs) {
    for (const q of def.questions) if (!questions.has(q.id)) questions.set(q.id, q);
    for (const a of def.agreements) if (!agreements.has(a.id)) agreements.set(a.id, a);
  }
  return { questions: [...questions.values()], agreements: [...agreements.values()] };
}

export function createQuoteService(deps: {
  quotes: QuotesRepository;
  /** The purchase's owner, which records the priced quote. */
  sales: Pick<SaleRepository, 'create'>;
  questionSets: QuestionSetsRepository;
  verifyBuyer: VerifyBuyer;
  /** Starts (or attaches to) the purchase workflow and returns its checkout session. */
  startCheckout: (purchase: PurchaseStartFacts) => Promise<CheckoutSession>;
  maxCoveredUnits: number;
  /** Prices premium tax on the items of taxed products (src/taxes/); absent: nothing is taxed. */
  taxes?: Pick<TaxPricer, 'priceItems'>;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());

  async function assertOwnAccount(principal: Principal, idpRootAccountUuid: string): Promise<void> {
    const own = await deps.quotes.idpRootAccountUuid(principal.rootAccountId);
    if (!own || own !== idpRootAccountUuid.toLowerCase()) {
      throw new AppError('SELLER_NOT_FOUND', 'No root account with that idp_root_account_uuid for this API key');
    }
  }

  return {
    /** Step 1: one page (zero-based) of the products this key may quote, with their templates. */
    async catalog(principal: Principal, req: CatalogRequest): Promise<CatalogResponse> {
      await assertOwnAccount(principal, req.idp_root_account_uuid);
      const limit = req.connected_ins_products_pagination_response_length_limit;
      const scope = scopeOf(principal);
      const offset = req.selected_table_page * limit;
      // Product lines first, then bundles: one list, paged as one.
      const page = await deps.quotes.listQuotable(scope, limit, offset);
      const bundles = await deps.quotes.listQuotableBundles(scope, limit - page.items.length, Math.max(0, offset - page.total));
      const products = new Map(page.items.map((p) => [p.id, p]));
      const missing = [...new Set(bundles.items.flatMap((b) => b.productIds))].filter((id) => !products.has(id));
      for (const [id, p] of await deps.quotes.findQuotable(scope, missing)) products.set(id, p);
      const sets = await deps.questionSets.findMany([...new Set([...products.values()].map((p) => p.questionSetId))]);
      const defOf = (p: QuotableProduct) => sets.get(p.questionSetId)!.definition;
      const total = page.total + bundles.total;
      return {
        rich_ins_product_pagination_total_approved_products: total,
        rich_ins_product_pagination_total_approved_products_pages: Math.ceil(total / limit),
        rich_ins_product_pagination_selected_page: req.selected_table_page,
        rich_ins_product_pagination_response_limit_per_page: limit,
        rich_ins_product_array_of_objects: [
          ...page.items.map((p) => {
            const def = defOf(p);
            return {
              product_line_meta_data: { product_line_id: p.id, product_line_array_of_agreements: def.agreements },
              product_line_name: p.customerName,
              product_line_description: p.description,
              product_line_default_price: toMajorUnits(p.defaultPriceMinor),
              product_line_currency: p.currency,
              product_line_is_recurring: p.isRecurring,
              product_line_is_trip_excess_product: isTripExcess(def),
              product_line_is_bundle: false,
              product_line_insurer_name: p.insurerName,
              product_line_question_template: { question_set_id: p.questionSetId, questions: def.questions },
            };
          }),
          ...bundles.items.map((b) => {
            const members = b.productIds.map((id) => products.get(id)!);
            const primary = members[0]!;
            const template = bundleTemplate(members.map(defOf));
            return {
              product_line_meta_data: { product_line_id: b.id, product_line_array_of_agreements: template.agreements },
              product_line_name: b.customerName,
              product_line_description: b.description,
              product_line_default_price: toMajorUnits(members.reduce((sum, p) => sum + p.defaultPriceMinor, 0)),
              product_line_currency: primary.currency,
              product_line_is_recurring: primary.isRecurring,
              product_line_is_trip_excess_product: isTripExcess(defOf(primary)),
              product_line_is_bundle: true,
              product_line_insurer_name: primary.insurerName,
              product_line_question_template: { question_set_id: primary.questionSetId, questions: template.questions },
              bundle_products: members.map((p, i) => ({
                product_line_id: p.id,
                product_line_name: p.customerName,
                product_line_is_primary: i === 0,
                product_line_default_price: toMajorUnits(p.defaultPriceMinor),
                product_line_is_trip_excess_product: isTripExcess(defOf(p)),
              })),
            };
          }),
        ],
      };
    },

    /**
     * Step 2: checks the buyer's token, validates every selected product line's answers
     * against its template, expands coverage into covered units, prices the quote, records the
     * purchase, and starts its purchase workflow, which creates the checkout session returned.
     */
    async validateAndPrice(principal: Principal, req: ValidateRequest): Promise<CheckoutResponse> {
      const buyer = await deps.verifyBuyer(principal, req.idp_accnt_uuid, req.access_token);
      const scope = scopeOf(principal);
      const isBundleItem = (s: Record<string, unknown>) => s.product_line_is_bundle === true;
      const idOf = (s: Record<string, unknown>) =>
        Number.isInteger(s.product_line_template_id) ? (s.product_line_template_id as number) : -1;
      const bundles = await deps.quotes.findQuotableBundles(scope, req.selected_product_lines_to_purchase.filter(isBundleItem).map(idOf));
      const ids = [
        ...req.selected_product_lines_to_purchase.filter((s) => !isBundleItem(s)).map(idOf),
        ...[...bundles.values()].flatMap((b) => b.productIds),
      ];
      const products = await deps.quotes.findQuotable(scope, ids);
      const sets = await deps.questionSets.findMany([...new Set([...products.values()].map((p) => p.questionSetId))]);
      const limits = { now: now(), maxUnits: deps.maxCoveredUnits };

      const problems: AnswerProblem[] = [];
      const validated: { productId: number; v: ValidatedAnswers; inBundle: boolean }[] = [];
      const seen = new Set<number>();
      let soldBundle: QuotableBundle | null = null;

      /** A bundle's item: each product validated with the answers to its own questions; problems named by the bundle's id, once. */
      const validateBundle = (bundle: QuotableBundle, selected: Record<string, unknown>, i: number) => {
        const members = bundle.productIds.map((id) => products.get(id)!);
        const defs = members.map((p) => sets.get(p.questionSetId)!.definition);
        const template = bundleTemplate(defs);
        const own: AnswerProblem[] = [];
        const problem = (question: string, reason: string) => {
          if (!own.some((p) => p.question === question && p.reason === reason))
            own.push({ product_line_template_id: bundle.id, question, reason });
        };
        const tripExcess = isTripExcess(defs[0]!);
        if (selected.product_line_is_trip_excess_product !== tripExcess)
          problem(
            'product_line_is_trip_excess_product',
            tripExcess ? 'this bundle is a trip-excess product' : 'this bundle is not a trip-excess product',
          );
        const questionIds = new Set(template.questions.map((q) => q.id));
        for (const key of Object.keys(selected))
          if (!ITEM_KEYS.includes(key) && !questionIds.has(key)) problem(key, 'not a question of this bundle’s template');
        const results = members.map((product, m) => {
          const def = defs[m]!;
          const answers = Object.fromEntries(def.questions.filter((q) => q.id in selected).map((q) => [q.id, selected[q.id]]));
          const raw = { ...answers, product_line_template_id: product.id, product_line_is_trip_excess_product: isTripExcess(def) };
          return { product, r: validateAnswers(product.id, def, raw, limits) };
        });
        for (const { r } of results) if (!r.ok) for (const p of r.problems) problem(p.question, p.reason);
        for (const { product } of results)
          if (seen.has(product.id))
            problem('product_line_template_id', `item ${i + 1}: the bundle's product line ${product.id} is selected more than once`);
        if (own.length) {
          problems.push(...own);
          return;
        }
        for (const { product, r } of results) {
          seen.add(product.id);
          if (r.ok) validated.push({ productId: product.id, v: r.value, inBundle: true });
        }
      };

      req.selected_product_lines_to_purchase.forEach((selected, i) => {
        const ref = idOf(selected);
        if (selected.product_line_is_bundle !== undefined && typeof selected.product_line_is_bundle !== 'boolean') {
          problems.push({ product_line_template_id: ref, question: 'product_line_is_bundle', reason: `item ${i + 1}: must be a boolean` });
          return;
        }
        if (isBundleItem(selected)) {
          const bundle = bundles.get(ref);
          if (!bundle) {
            problems.push({
              product_line_template_id: ref,
              question: 'product_line_template_id',
              reason: `item ${i + 1}: not a bundle this API key may quote`,
            });
            return;
          }
          if (soldBundle) {
            problems.push({
              product_line_template_id: ref,
              question: 'product_line_is_bundle',
              reason: `item ${i + 1}: at most one bundle per purchase`,
            });
            return;
          }
          soldBundle = bundle;
          validateBundle(bundle, selected, i);
          return;
        }
        const { product_line_is_bundle: _flag, ...answersOfItem } = selected;
        const product = products.get(ref);
        if (!product) {
          problems.push({
            product_line_template_id: ref,
            question: 'product_line_template_id',
            reason: `item ${i + 1}: not a product line this API key may quote`,
          });
          return;
        }
        if (seen.has(ref)) {
          problems.push({
            product_line_template_id: ref,
            question: 'product_line_template_id',
            reason: `item ${i + 1}: product line selected more than once`,
          });
          return;
        }
        seen.add(ref);
        const r = validateAnswers(ref, sets.get(product.questionSetId)!.definition, answersOfItem, limits);
        if (r.ok) validated.push({ productId: ref, v: r.value, inBundle: false });
        else problems.push(...r.problems);
      });
      // The bundle's products first (its primary product leads), then product lines bought beside it.
      validated.sort((a, b) => Number(b.inBundle) - Number(a.inBundle));
      const bundle = soldBundle as QuotableBundle | null;

      const currencies = new Set(validated.map((x) => products.get(x.productId)!.currency));
      if (currencies.size > 1)
        problems.push({
          product_line_template_id: validated[0]!.productId,
          question: 'product_line_template_id',
          reason: 'selected product lines are priced in different currencies',
        });

      // A subscription renews its whole purchase every month: recurring and one-time products
      // are bought separately (decision, docs/decisions.md).
      const recurring = new Set(validated.map((x) => products.get(x.productId)!.isRecurring));
      if (recurring.size > 1) {
        problems.push({
          product_line_template_id: validated.find((x) => products.get(x.productId)!.isRecurring)!.productId,
          question: 'product_line_template_id',
          reason: 'recurring (subscription) and one-time product lines cannot be bought together; buy them in separate purchases',
        });
      }

      let priced: ReturnType<typeof priceQuote> | null = null;
      // Premium tax per item (none for products without a tax setting), added to the total after the platform fee.
      let tax: { items: ItemTax[]; taxMinor: number } = { items: validated.map(() => ({ taxMinor: 0, lines: [] })), taxMinor: 0 };
      if (!problems.length) {
        priced = priceQuote(
          validated.map(({ productId, v }) => ({
            unitPriceMinor: products.get(productId)!.defaultPriceMinor,
            units: v.units.length,
            priceFactor: v.priceFactor,
          })),
          principal.platformFeeBps,
        );
        // A subscription's renewals are not priced with tax, so a recurring purchase is not taxed (a recurring product cannot be set to be).
        const taxed =
          deps.taxes && !recurring.has(true)
            ? await deps.taxes.priceItems(
                validated.map(({ productId, v }, i) => ({
                  productLineId: productId,
                  premiumMinor: priced!.lines[i]!.amountMinor,
                  namedInsured: v.namedInsured,
                  certificateHolder: v.certificateHolder,
                })),
                products.get(validated[0]!.productId)!.currency,
                limits.now,
              )
            : null;
        if (taxed && !taxed.ok)
          problems.push(
            ...taxed.problems.map((p) => ({ product_line_template_id: p.productLineId, question: p.question, reason: p.reason })),
          );
        if (taxed?.ok) tax = taxed;
        priced = { ...priced, totalMinor: priced.totalMinor + tax.taxMinor };
        if (priced.totalMinor > MAX_CHARGE_MINOR) {
          problems.push({
            product_line_template_id: validated[0]!.productId,
            question: 'product_line_template_id',
            reason: `total ${priced.totalMinor} exceeds the largest single charge (${MAX_CHARGE_MINOR} minor units)`,
          });
        }
      }
      if (problems.length || !priced) {
        throw new AppError('VALIDATION_ERROR', `${problems.length} problem(s) with the buyer's answers`, { extra: { errors: problems } });
      }

      const currency = products.get(validated[0]!.productId)!.currency;
      const purchaseId = await deps.sales.create(
        {
          rootAccountId: principal.rootAccountId,
          apiKeyId: principal.apiKeyId,
          agentId: principal.agentId,
          buyerId: buyer.buyerId,
          buyerEmail: buyer.email,
          savePaymentMethod: req.save_payment_method ?? false,
          metadata: req.metadata ?? {},
          billing: recurring.has(true) ? 'subscription' : 'one_time',
          mode: principal.mode,
          currency,
          subtotalMinor: priced.subtotalMinor,
          platformFeeBps: principal.platformFeeBps,
          platformFeeMinor: priced.platformFeeMinor,
          taxMinor: tax.taxMinor,
          totalMinor: priced.totalMinor,
          bundle: bundle ? { id: bundle.id, name: bundle.customerName } : null,
          items: validated.map(({ productId, v, inBundle }, i) => ({
            productLineId: productId,
            inBundle,
            isTripExcess: v.isTripExcess,
            unitPriceMinor: priced!.lines[i]!.unitPriceMinor,
            units: v.units,
            priceFactor: v.priceFactor,
            amountMinor: priced!.lines[i]!.amountMinor,
            taxMinor: tax.items[i]!.taxMinor,
            taxLines: tax.items[i]!.lines.length ? tax.items[i]!.lines : null,
            answers: v.answers,
            namedInsured: v.namedInsured,
            certificateHolder: v.certificateHolder,
          })),
        },
        insertHoldersFromAnswers,
      );

      const session = await deps.startCheckout({
        id: purchaseId,
        rootAccountId: principal.rootAccountId,
        mode: principal.mode,
        totalMinor: priced.totalMinor,
        currency,
        buyerEmail: buyer.email,
        status: 'quoted',
      });
      return {
        id: session.id,
        url: session.url,
        payment_intent: session.payment_intent,
        subscription_invoice: session.subscription_invoice ?? null,
        amount_total: session.amount_total,
        currency: session.currency,
        expires_at: session.expires_at,
        purchase_id: purchaseId,
        status: 'awaiting_payment',
        amount_subtotal: priced.subtotalMinor,
        platform_fee: { bps: principal.platformFeeBps, amount: priced.platformFeeMinor },
        amount_tax: tax.taxMinor,
        tax_lines: validated.flatMap(({ productId }, i) =>
          tax.items[i]!.lines.map((l) => ({ product_line_id: productId, ...taxLineObject(l) })),
        ),
        bundle: bundle ? { id: bundle.id, name: bundle.customerName } : null,
        line_items: validated.map(({ productId, inBundle }, i) => ({
          product_line_id: productId,
          in_bundle: inBundle,
          units: priced!.lines[i]!.units,
          unit_amount: priced!.lines[i]!.unitPriceMinor,
          price_factor: priced!.lines[i]!.priceFactor,
          amount: priced!.lines[i]!.amountMinor,
        })),
        product_line_data: validated.map(({ productId, v }) => ({
          product_line_id: productId,
          product_line_is_trip_excess_product: v.isTripExcess,
        })),
        certificate_coverage_datetimes: validated.flatMap(({ productId, v }) =>
          v.units.map((u) => ({
            product_line_id: productId,
            unit_index: u.index,
            starts_at: u.startsAt.toISOString(),
            ends_at: u.endsAt.toISOString(),
            time_zone: u.timeZone,
            local_label: u.localLabel,
          })),
        ),
      };
    },
  };
}

export type QuoteService = ReturnType<typeof createQuoteService>;
