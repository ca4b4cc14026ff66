/**
 * `npm run demo`: the main job end to end, as an agent's server does it, through the public
 * HTTP API only (issue 8 "Demo"), with the typed client of `clients/typescript/` (every call's
 * path, body and answer are checked against the OpenAPI document when this file typechecks):
 *
 *  1. create two products (a per-day product and a trip product, on the seeded templates) and a
 *     bundle of both;
 *  2. connect a buyer and load the catalog with the question templates;
 *  3. answer the templates (answers built from each template's questions) for a 3-day purchase
 *     and a 2-trip purchase, and get their checkout sessions;
 *  4. pay each purchase with the test-mode helper, which sends the processor's signed
 *     `checkout.session.completed` through the webhook handling (stripe-mock sends no webhooks);
 *  5. wait for the certificates with the spec's backoff rule (§4.5: up to two minutes), download
 *     every PDF and zip into `demo-output/`, and print a summary with each purchase's Temporal UI
 *     link;
 *  6. add the 3-day event's venue as a certificate holder (additional insured, waiver of
 *     subrogation, a description of operations naming the event and the venue), wait until its
 *     certificates are issued, download them into `demo-output/` and print their numbers;
 *  7. move the event's first day a day earlier (endorsement_quote, then endorse), wait until the new
 *     certificate versions are stored, print each old → new number and the old version's
 *     verification page state (superseded);
 *  8. preview the cancellation of the 3-day event's last day, print the refund, cancel it, wait
 *     until the refund is done and print that day's certificate's verification page state (voided);
 *  8b. file a claim on the 3-day event's first day (its test clock moved past it) and move it to paid
 *     with the test-mode claim helper, printing its history (scripts/demo-claim.ts);
 *  9. when an insurer appointed the account (`GET /api/v1/parties`; the seed appoints one, and step 1's
 *     products name it and the MGA, pay it commission and are taxed where the named insured is, in
 *     Massachusetts), ask for this month's provisional bordereau of that insurer, wait until it is
 *     ready, print its CSV rows of the demo's purchases and check that premium, tax, commission,
 *     fee and net premium add up (scripts/demo-money.ts).
 *
 * Throughout, a local receiver registered as a test-mode webhook endpoint collects the signed
 * events of both purchases; the demo prints each with its verified signature, then deletes the
 * endpoint.
 *
 * Runs against the stack of `npm run dev`, reading `var/dev-credentials.json`; when the API does
 * not answer it starts `npm run dev` itself and stops it at the end. Overrides for other stacks
 * (the test runs it against its own): DEMO_BASE_URL, DEMO_API_KEY,
 * DEMO_TEAMMATE_UUID, DEMO_ROOT_UUID, DEMO_ROOT_ACCOUNT_ID, DEMO_SELLER_SLUG, DEMO_TEMPORAL_UI, DEMO_NAMESPACE,
 * DEMO_OUTPUT_DIR. Exits 1 with the failing step's name when any step fails.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import path from 'node:path';
import { createApiClient, ok, selectedProductLine, type Schema } from '../clients/typescript';
import { provisionalBordereau, setMoneyTerms } from './demo-money';
import { claimPaidOut } from './demo-claim';
import { readSettings, ready, startDevStack, type Settings } from './demo-stack';

const ROOT = path.resolve(__dirname, '..');
const env = process.env;

type Json = any;

const say = (line: string) => process.stdout.write(`${line}\n`);
let currentStep = 'start';
const step = (name: string) => {
  currentStep = name;
  say(`\n▶ ${name}`);
};

/** The event's venue: the 3-day event's answer to its venue question, later added as a certificate holder. */
const VENUE = {
  name: 'Demo Hall',
  address: { line1: '400 N Lake Shore Dr', city: 'Chicago', region: 'IL', postal_code: '60611', country: 'US' },
} as const;

/** A local date `days` from today, `YYYY-MM-DD`. */
function dateIn(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/** Answers for a template, built from its questions (first dropdown option, lowest number…). */
function answersFor(questions: Schema<'Question'>[], insured: string): Record<string, Schema<'Answer'>> {
  const answers: Record<string, Schema<'Answer'>> = {};
  for (const q of questions) {
    switch (q.kind) {
      case 'dropdown':
        answers[q.id] = q.options[0]!.value;
        break;
      case 'number':
        answers[q.id] = q.min;
        break;
      case 'text':
        answers[q.id] = q.id === 'venue_name' ? VENUE.name : 'Demo Hall';
        break;
      case 'date':
        answers[q.id] = q.min ?? dateIn(1);
        break;
      case 'date_range':
        answers[q.id] = { start_date: dateIn(30), end_date: dateIn(31) };
        break;
      case 'named_insured':
        answers[q.id] = {
          name: insured,
          address: { line1: '22 Elm Rd', city: 'Boston', region: 'MA', postal_code: '02110', country: 'US' },
        };
        break;
      case 'certificate_holder':
        answers[q.id] = {
          name: 'Grand Hall LLC',
          address: { line1: '1 Main St', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
        };
        break;
      case 'coverage_dates':
        answers[q.id] = { time_zone: 'America/Chicago', start_date: dateIn(30), end_date: dateIn(32) };
        break;
      case 'trips':
        answers[q.id] = {
          time_zone: 'Europe/Lisbon',
          trips: [
            { start: `${dateIn(40)}T09:00`, end: `${dateIn(44)}T18:00` },
            { start: `${dateIn(60)}T08:30`, end: `${dateIn(62)}T20:00` },
          ],
        };
        break;
      default: {
        // A kind newer than this demo (the document's kinds are all handled above).
        const other = q as { kind: string; id: string; required?: boolean };
        if (other.required !== false) throw new Error(`the demo cannot answer a required "${other.kind}" question (${other.id})`);
      }
    }
  }
  return answers;
}

async function download(url: string, file: string): Promise<number> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`download ${path.basename(file)} answered ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytes);
  return bytes.length;
}

/** A local HTTP server that records the events POSTed to it (raw body and Signature header). */
async function startReceiver(): Promise<{
  url: string;
  events: Array<{ id: string; type: string; object: unknown; body: string; signature: string }>;
  close: () => Promise<void>;
}> {
  const events: Array<{ id: string; type: string; object: unknown; body: string; signature: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      try {
        const e = JSON.parse(body);
        events.push({ id: e.id, type: e.type, object: e.data?.object, body, signature: String(req.headers['signature'] ?? '') });
      } catch {
        // not an event: ignored
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/demo-events`,
    events,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let endpointToDelete: (() => Promise<void>) | undefined;
let closeReceiver: (() => Promise<void>) | undefined;

async function main(): Promise<void> {
  const started = Date.now();
  let dev: ChildProcess | undefined;
  step('stack');
  let s: Settings;
  const baseGuess = env.DEMO_BASE_URL ?? 'http://127.0.0.1:3000';
  if (!(await ready(baseGuess))) dev = await startDevStack(baseGuess);
  try {
    s = readSettings();
    say(`  API ${s.baseUrl} is ready`);
    const api = createApiClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
    const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);

    step('event receiver');
    // A local receiver and a test-mode webhook endpoint pointing at it (test mode allows http on
    // loopback), so the demo hears the purchase events as an agency's server would.
    const receiver = await startReceiver();
    const endpoint = (
      await ok(
        api.POST('/api/v1/webhook_endpoints', { body: { url: receiver.url, enabled_events: ['*'], description: 'npm run demo receiver' } }),
      )
    ).data;
    endpointToDelete = async () =>
      void (await ok(api.DELETE('/api/v1/webhook_endpoints/{id}', { params: { path: { id: String(endpoint.id) } } })));
    closeReceiver = receiver.close;
    say(`  endpoint ${endpoint.id} → ${receiver.url} (signing secret shown once, kept in memory)`);

    step('catalog templates');
    const seeded = await ok(
      api.POST('/public-quote/adminGetApprovedClientProducts', {
        body: { idp_root_account_uuid: s.rootUuid, connected_ins_products_pagination_response_length_limit: 100, selected_table_page: 0 },
      }),
    );
    const items = seeded.rich_ins_product_array_of_objects;
    const perDay = items.find(
      (p) =>
        p.product_line_question_template.questions.some((q) => q.kind === 'coverage_dates') &&
        p.product_line_question_template.questions.some((q) => q.kind === 'certificate_holder'),
    );
    const trip = items.find((p) => p.product_line_is_trip_excess_product);
    if (!perDay || !trip) throw new Error('the catalog has no per-day and trip templates to build on (run npm run seed)');
    say(
      `  per-day template ${perDay.product_line_question_template.question_set_id}, trip template ${trip.product_line_question_template.question_set_id}`,
    );

    step('create products and a bundle');
    // The insurer and MGA that appointed the account, if any: the products name them.
    const parties = (await ok(api.GET('/api/v1/parties', { params: { query: { pageSize: 100 } } }))).data;
    const insurer = parties.find((p) => p.kind === 'insurer');
    const mga = parties.find((p) => p.kind === 'mga');
    say(
      `  parties: ${parties.map((p) => `${p.kind} ${p.id} ${p.name} (${p.register_number ?? 'no number'})`).join(', ') || 'none appointed this account'}`,
    );
    const createProduct = async (customerName: string, questionSetId: number, policy: string) =>
      (
        await ok(
          api.POST('/api/v1/products', {
            // A retry with the same key would get the first answer back instead of a second product.
            params: { header: { 'Idempotency-Key': randomUUID() } },
            body: {
              customerName,
              defaultPrice: 39.5,
              questionSetId,
              insurerName: 'Evergreen Mutual Insurance Co.',
              masterPolicyNumber: policy,
              claimsPhoneNumber: '+1-800-555-0134',
              deductible: 250,
              isTestMode: true,
              ...(insurer ? { insurerRootAccountID: insurer.id } : {}),
              ...(mga ? { mgaRootAccountID: mga.id } : {}),
            },
          }),
        )
      ).data;
    const eventProduct = await createProduct(
      `Demo Event Liability ${stamp}`,
      perDay.product_line_question_template.question_set_id,
      `DEMO-GL-${stamp}`,
    );
    const tripProduct = await createProduct(
      `Demo Trip Excess ${stamp}`,
      trip.product_line_question_template.question_set_id,
      `DEMO-TX-${stamp}`,
    );
    say(`  products ${eventProduct.id} (per day) and ${tripProduct.id} (per trip)`);
    if (insurer)
      await setMoneyTerms(
        api,
        [
          { id: eventProduct.id, lineOfBusiness: 'general_liability' },
          { id: tripProduct.id, lineOfBusiness: 'travel' },
        ],
        insurer,
        say,
      );
    const bundle = (
      await ok(
        api.POST('/api/v1/bundles', {
          params: { header: { 'Idempotency-Key': randomUUID() } },
          body: {
            bundle_name: `Demo bundle ${stamp}`,
            customer_facing_name: 'Event Day and Travel Protection',
            is_test_mode: true,
            root_seller_db_id: s.rootAccountId,
            product_ids: [eventProduct.id, tripProduct.id],
          },
        }),
      )
    ).data;
    say(`  bundle ${bundle.id}`);

    step('connect a buyer');
    const buyerEmail = `jordan.demo.${stamp}@example.com`;
    const buyer = await ok(
      api.POST('/platform-seller-invites/newConnect', {
        body: {
          buyer_first_name: 'Jordan',
          buyer_last_name: 'Lee',
          buyer_email: buyerEmail,
          seller_slug: s.sellerSlug,
          query_param: 'demo',
        },
      }),
    );
    say(`  idp_accnt_uuid ${buyer.idp_accnt_uuid} (${buyerEmail})`);

    step('load the catalog');
    const catalog = await ok(
      api.POST('/public-quote/adminGetApprovedClientProducts', {
        body: { idp_root_account_uuid: s.rootUuid, connected_ins_products_pagination_response_length_limit: 100, selected_table_page: 0 },
      }),
    );
    const find = (id: number) => {
      const item = catalog.rich_ins_product_array_of_objects.find((p) => p.product_line_meta_data.product_line_id === id);
      if (!item) throw new Error(`product ${id} is not in the catalog`);
      return item;
    };
    say(`  ${catalog.rich_ins_product_pagination_total_approved_products} approved products; both new ones listed with their templates`);

    const purchases: Array<{ label: string; purchaseId: number; amount: number; currency: string }> = [];
    for (const [label, product] of [
      ['3-day event', find(eventProduct.id)],
      ['2-trip excess', find(tripProduct.id)],
    ] as const) {
      step(`quote and check out: ${label}`);
      const selection = selectedProductLine(
        {
          product_line_template_id: product.product_line_meta_data.product_line_id,
          product_line_is_trip_excess_product: product.product_line_is_trip_excess_product,
        },
        answersFor(product.product_line_question_template.questions, 'Jordan Lee'),
      );
      const session = await ok(
        api.POST('/public-quote/adminValidateBuyerResponses', {
          body: { idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, selected_product_lines_to_purchase: [selection] },
        }),
      );
      say(
        `  purchase ${session.purchase_id}: checkout session ${session.id}, ${session.amount_total} ${session.currency} (minor units; premium tax ${session.amount_tax}), ${session.certificate_coverage_datetimes.length} covered units`,
      );

      step(`test payment: ${label}`);
      // The test-mode helper sends the purchase the processor's signed `checkout.session.completed`,
      // through the same webhook handling a real payment takes (no webhook secret needed).
      const paid = (
        await ok(
          api.POST('/api/v1/test_helpers/purchases/{id}/pay', {
            params: { path: { id: String(session.purchase_id) } },
            body: { outcome: 'paid' },
          }),
        )
      ).data;
      say(`  delivered ${paid.event.type} (${paid.event.id}), relayed to the purchase: ${paid.relayed}`);
      purchases.push({ label, purchaseId: session.purchase_id, amount: session.amount_total, currency: session.currency });
    }

    const summary: string[] = [];
    for (const p of purchases) {
      step(`certificates: ${p.label}`);
      // Spec §4.5: retry with backoff for up to two minutes (here 250 ms doubling to 4 s).
      const deadline = Date.now() + 120_000;
      let body: Schema<'GetCertificatesResponse'>;
      for (let wait = 250; ; wait = Math.min(wait * 2, 4000)) {
        body = await ok(
          api.POST('/platform-agency-certs/getCertificates', { body: { idp_teammate_uuid: s.teammateUuid, purchase_id: p.purchaseId } }),
        );
        if (body.status === 'issued') break;
        if (Date.now() > deadline)
          throw new Error(`certificates of purchase ${p.purchaseId} not issued within two minutes (status ${body.status})`);
        say(`  status ${body.status}; asking again in ${wait} ms`);
        await new Promise((r) => setTimeout(r, wait));
      }
      const dir = path.join(s.outputDir, `purchase-${p.purchaseId}`);
      fs.rmSync(dir, { recursive: true, force: true });
      let bytes = 0;
      for (const c of body.certificates) bytes += await download(c.download_url, path.join(dir, `${c.certificate_number}.pdf`));
      if (!body.payment_zip_url) throw new Error(`purchase ${p.purchaseId} is issued but has no payment zip URL`);
      bytes += await download(body.payment_zip_url, path.join(dir, 'all-certificates.zip'));
      for (const z of body.product_zips) bytes += await download(z.zip_url, path.join(dir, `product-${z.product_line_id}.zip`));
      say(
        `  ${body.certificate_count} PDFs and ${body.product_zips.length + 1} zips (${Math.round(bytes / 1024)} KiB) in ${path.relative(ROOT, dir)}/`,
      );
      summary.push(
        [
          `${p.label}: purchase ${p.purchaseId}, ${p.amount} ${p.currency} minor units, payment ${body.payment_intent ?? '(none recorded)'}`,
          ...body.certificates.map((c) => `    ${c.certificate_number}  ${c.coverage_label}  ${c.verification_url}`),
          `    proof of coverage: ${body.product_zips.map((z) => z.proof_of_coverage_url).join(', ')}`,
          `    Temporal UI: ${s.temporalUi}/namespaces/${s.namespace}/workflows/purchase-${p.purchaseId}`,
        ].join('\n'),
      );
    }

    // The page behind a certificate's QR code, asked of this API (its public URL may name another host).
    const verificationOf = async (number: string): Promise<Json> =>
      (await fetch(`${s.baseUrl}/verify/${encodeURIComponent(number)}`, { headers: { accept: 'application/json' } })).json();

    step('add the venue as a certificate holder of the 3-day event');
    let venueHolderId: number;
    {
      const event = purchases[0]!;
      const params = { path: { id: String(event.purchaseId) } };
      const eventProductLine = find(eventProduct.id);
      const eventType = eventProductLine.product_line_question_template.questions.find((q) => q.id === 'event_type');
      const what = eventType?.kind === 'dropdown' ? eventType.options[0]!.label : 'Event';
      const holder = (
        await ok(
          api.POST('/api/v1/purchases/{id}/certificate_holders', {
            params: { ...params, header: { 'Idempotency-Key': randomUUID() } },
            body: {
              name: VENUE.name,
              address: { ...VENUE.address },
              additional_insured: true,
              waiver_of_subrogation: true,
              description_of_operations: `${what} of Jordan Lee at ${VENUE.name}, ${VENUE.address.line1}, ${VENUE.address.city}, ${VENUE.address.region}.\n${VENUE.name} is an additional insured, with waiver of subrogation, as required by written contract.`,
            },
          }),
        )
      ).data;
      venueHolderId = holder.id;
      say(
        `  holder ${holder.id} (${holder.name}, additional insured, waiver of subrogation): ${holder.certificates.length} certificates ${holder.certificates.map((c) => c.status).join(', ')}`,
      );
      // Its certificates are rendered and stored after the answer.
      const until = Date.now() + 120_000;
      let issued: Schema<'CertificateHolder'>;
      for (;;) {
        issued = (await ok(api.GET('/api/v1/purchases/{id}/certificate_holders', { params }))).data.find((h) => h.id === holder.id)!;
        if (issued.certificates.length > 0 && issued.certificates.every((c) => c.status === 'issued')) break;
        if (Date.now() > until) throw new Error(`the certificates of holder ${holder.id} were not issued within two minutes`);
        await new Promise((r) => setTimeout(r, 500));
      }
      say(`  issued to ${issued.name}: ${issued.certificates.map((c) => c.certificate_number).join(', ')}`);
    }

    step('move the first day of the 3-day event');
    {
      const event = purchases[0]!;
      const params = { path: { id: String(event.purchaseId) } };
      const first = (await ok(api.GET('/api/v1/purchases/{id}', { params }))).data.items[0]!.covered_units[0]!;
      const quote = (
        await ok(
          api.POST('/api/v1/purchases/{id}/endorsement_quote', {
            params,
            body: { changes: [{ type: 'move_covered_unit', covered_unit_id: first.id, start_date: dateIn(29) }] },
          }),
        )
      ).data;
      say(
        `  preview ${quote.id}: ${first.local_label} → ${dateIn(29)}, premium difference ${quote.premium_difference} ${quote.currency}; reissues ${quote.reissues.map((r) => r.certificate_number).join(', ')}`,
      );
      const endorsement = (await ok(api.POST('/api/v1/purchases/{id}/endorse', { params, body: { quote_id: quote.id } }))).data;
      const reissued = endorsement.reissued ?? [];
      if (reissued.length === 0) throw new Error(`endorsement ${endorsement.id} reissued no certificate`);
      // The new versions are rendered and stored after the answer.
      const until = Date.now() + 120_000;
      for (;;) {
        const certificates = (await ok(api.GET('/api/v1/purchases/{id}', { params }))).data.items.flatMap((i) =>
          i.covered_units.flatMap((u) => u.certificates),
        );
        if (reissued.every((r) => certificates.find((c) => c.number === r.to)?.status === 'issued')) break;
        if (Date.now() > until) throw new Error(`the new versions of endorsement ${endorsement.id} were not stored within two minutes`);
        await new Promise((r) => setTimeout(r, 500));
      }
      for (const r of reissued) say(`  reissued ${r.from} → ${r.to}`);
      const old = reissued[0]!.from;
      const verification = await verificationOf(old);
      const url = first.certificates.find((c) => c.number === old)?.verification_url ?? first.certificate!.verification_url;
      say(`  ${old} on its verification page: ${String(verification.state)} (by ${String(verification.superseded_by)})  ${url}`);

      // The venue's certificates as they are now (the moved day's new version among them): getCertificates
      // answers pending until the new versions' zips are stored too, then the whole set.
      let now;
      for (;;) {
        now = await ok(
          api.POST('/platform-agency-certs/getCertificates', {
            body: { idp_teammate_uuid: s.teammateUuid, purchase_id: event.purchaseId },
          }),
        );
        if (now.status === 'issued') break;
        if (Date.now() > until) throw new Error(`the certificates of endorsement ${endorsement.id} were not all stored within two minutes`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const venue = now.certificates.filter((c) => c.certificate_holder?.id === venueHolderId);
      const dir = path.join(s.outputDir, `purchase-${event.purchaseId}`, 'venue');
      for (const c of venue) await download(c.download_url, path.join(dir, `${c.certificate_number}.pdf`));
      say(`  the venue's ${venue.length} current certificates in ${path.relative(ROOT, dir)}/`);
    }

    step('cancel the last day of the 3-day event');
    {
      const event = purchases[0]!;
      const params = { path: { id: String(event.purchaseId) } };
      const last = (await ok(api.GET('/api/v1/purchases/{id}', { params }))).data.items[0]!.covered_units.at(-1)!;
      const quote = (
        await ok(
          api.POST('/api/v1/purchases/{id}/cancellation_quote', {
            params,
            body: { covered_unit_ids: [last.id], requested_by: 'buyer', reason: 'Last day called off' },
          }),
        )
      ).data;
      say(
        `  preview ${quote.id}: ${quote.method}, ${quote.refund.total} ${quote.currency} back (premium ${quote.refund.premium}, tax ${quote.refund.tax}, platform fee ${quote.refund.platform_fee}; minor units) for ${last.local_label}; holds until ${quote.expires_at}`,
      );
      const cancellation = (await ok(api.POST('/api/v1/purchases/{id}/cancel', { params, body: { quote_id: quote.id } }))).data;
      say(`  cancellation ${cancellation.id}: ${cancellation.status}`);
      const until = Date.now() + 60_000;
      for (;;) {
        const now = (await ok(api.GET('/api/v1/purchases/{id}', { params }))).data;
        const c = now.cancellations.find((x) => x.id === cancellation.id);
        if (c?.status === 'completed') {
          say(
            `  completed: refund ${c.refund.id} of ${c.refund.total} ${c.currency} minor units; amount refunded on the purchase ${now.amount_refunded}`,
          );
          break;
        }
        if (c?.status === 'refund_failed') throw new Error(`the refund was refused: ${c.failure_reason}`);
        if (Date.now() > until) throw new Error(`cancellation ${cancellation.id} not completed within 60 s (${c?.status})`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const verification = await verificationOf(last.certificate!.number);
      say(
        `  ${last.certificate!.number} on its verification page: ${String(verification.state)} (voided at ${String((verification.coverage as Json[])[0]?.voided_at)})  ${last.certificate!.verification_url}`,
      );
    }

    step('a claim on the 3-day event, paid');
    summary.push(`claim ${await claimPaidOut(api, purchases[0]!.purchaseId, say)} on the 3-day event: paid`);

    if (insurer) {
      step('this month’s provisional bordereau');
      await provisionalBordereau(
        api,
        insurer,
        purchases.map((p) => p.purchaseId),
        { root: ROOT, outputDir: s.outputDir },
        say,
      );
    }

    step('events received');
    // certificates.issued, certificate_holder.added and certificates.reissued are recorded as their
    // certificates are stored; give their delivery a moment.
    const wanted = purchases.length;
    const heard = () =>
      receiver.events.filter((e) => e.type === 'certificates.issued').length >= wanted &&
      ['certificate_holder.added', 'certificates.reissued'].every((t) => receiver.events.some((e) => e.type === t));
    const deadline = Date.now() + 20_000;
    while (!heard() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const verifier = new Stripe('sk_test_demo_verifier');
    for (const e of receiver.events) {
      let verified = 'signature verified';
      try {
        verifier.webhooks.constructEvent(e.body, e.signature, endpoint.secret);
      } catch (err) {
        verified = `SIGNATURE INVALID: ${(err as Error).message}`;
      }
      const obj = e.object as Json;
      // A purchase event carries the purchase (its id); the others name it in purchase_id.
      say(`  ${e.type.padEnd(26)} ${e.id}  purchase ${obj.purchase_id ?? obj.id}${obj.status ? ` (${obj.status})` : ''}  ${verified}`);
    }
    if (receiver.events.some((e) => e.type === 'certificates.issued') === false)
      throw new Error('no certificates.issued event reached the receiver within 20 s');
    if (receiver.events.length === 0 || receiver.events.length < 3 * wanted)
      say(`  (fewer events than expected: ${receiver.events.length})`);

    step('summary');
    for (const line of summary) say(`  ${line}`);
    say(`\n✔ demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s; files in ${path.relative(ROOT, s.outputDir) || '.'}/`);
  } finally {
    await endpointToDelete?.().catch(() => undefined);
    await closeReceiver?.();
    if (dev?.pid) {
      say('  stopping the `npm run dev` this demo started');
      try {
        process.kill(-dev.pid, 'SIGINT');
      } catch {
        // already gone
      }
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`\n✘ demo failed at step "${currentStep}": ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
