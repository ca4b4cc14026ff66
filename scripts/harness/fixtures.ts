/**
 * Test data built through the real repositories and services (no SQL shortcuts), with unique
 * slugs so suites running in parallel never collide.
 */
import { randomUUID } from 'node:crypto';
import type { Container } from '../../src/container';
import { createQuestionSetsRepository } from '../../src/question-sets/repository';
import { createAccountsRepository, type RootAccount } from '../../src/accounts/repository';
import { createPartiesRepository } from '../../src/parties/repository';
import type { CreateKeyInput, IssuedKey } from '../../src/api-keys/service';

export async function createRootAccount(c: Container, name = 'Test Agency'): Promise<RootAccount> {
  return createAccountsRepository(c.db).upsertBySlug({
    slug: `t-${randomUUID().slice(0, 12)}`,
    name,
    kind: 'agency',
    checkoutSuccessUrl: 'https://agent.example/success',
    checkoutCancelUrl: 'https://agent.example/cancel',
  });
}

export async function createKey(c: Container, input: Partial<CreateKeyInput> & { rootAccountId: number }): Promise<IssuedKey> {
  return c.services.apiKeys.create({ name: 'test key', mode: 'live', ...input });
}

/** fetch with the key header and JSON body handled. */
export async function call(
  baseUrl: string,
  path: string,
  init: { method?: string; key?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.key !== undefined) headers['x-api-key'] = init.key;
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
  }
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method: init.method ?? 'GET', headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A buyer connected to a seller: the identity and access token the quote calls carry. */
export interface ConnectedBuyer {
  idp_accnt_uuid: string;
  access_token: string;
}

/**
 * Connects a new buyer (names and e-mail as given) to the seller `sellerSlug` through
 * `POST /platform-seller-invites/newConnect` with the agent's API `key`; `queryParam` is the
 * invite's query parameter (empty when absent). Answers the buyer's identity and access token.
 * @throws {Error} `newConnect: <status> <body>` when the call does not answer 200.
 */
export async function connectBuyer(
  baseUrl: string,
  key: string,
  buyer: { firstName: string; lastName: string; email: string; sellerSlug: string; queryParam?: string },
): Promise<ConnectedBuyer> {
  const res = await call(baseUrl, '/platform-seller-invites/newConnect', {
    method: 'POST',
    key,
    body: {
      buyer_first_name: buyer.firstName,
      buyer_last_name: buyer.lastName,
      buyer_email: buyer.email,
      seller_slug: buyer.sellerSlug,
      query_param: buyer.queryParam ?? '',
    },
  });
  if (res.status !== 200) throw new Error(`newConnect: ${res.status} ${res.text}`);
  return { idp_accnt_uuid: res.body.idp_accnt_uuid as string, access_token: res.body.access_token as string };
}

/** `count` buyers connected to `agency` one after another: `<firstName> Buyer<i>` at `email(i)` (see connectBuyer). */
export async function connectBuyers(
  baseUrl: string,
  agency: { key: string; slug: string },
  count: number,
  o: { firstName: string; email: (i: number) => string; queryParam: string },
): Promise<ConnectedBuyer[]> {
  const buyers: ConnectedBuyer[] = [];
  for (let i = 0; i < count; i++) {
    const buyer = { firstName: o.firstName, lastName: `Buyer${i}`, email: o.email(i), sellerSlug: agency.slug, queryParam: o.queryParam };
    buyers.push(await connectBuyer(baseUrl, agency.key, buyer));
  }
  return buyers;
}

/**
 * A root account of another kind (insurer or MGA), for the reach rules of bundles and for the
 * products that name it: it appoints each agency of `appointing` (a root account id, or an agency
 * as `{ slug }`), since a product may name only a party that appointed its agency.
 */
export async function createRootAccountOfKind(
  c: Container,
  kind: 'insurer' | 'mga',
  name = `Test ${kind}`,
  appointing: Array<number | { slug: string }> = [],
): Promise<RootAccount> {
  const accounts = createAccountsRepository(c.db);
  const party = await accounts.upsertBySlug({
    slug: `t-${kind}-${randomUUID().slice(0, 12)}`,
    name,
    kind,
    checkoutSuccessUrl: null,
    checkoutCancelUrl: null,
  });
  for (const agency of appointing) await appoint(c, party.id, agency);
  return party;
}

/** Party `partyId` (an insurer or MGA) appoints `agency` (a root account id, or an agency as `{ slug }`), through the parties repository. */
export async function appoint(c: Container, partyId: number, agency: number | { slug: string }): Promise<void> {
  const agencyId = typeof agency === 'number' ? agency : (await createAccountsRepository(c.db).findBySlug(agency.slug))!.id;
  await createPartiesRepository(c.db).appoint(partyId, agencyId);
}

/**
 * Inserts a product_lines row directly with knex and returns its id. It bypasses the products
 * service and the payment processor on purpose: bundle tests need products to link, not a
 * processor round trip (the products suite covers that path).
 */
export async function insertProductLine(
  c: Container,
  input: { rootAccountId: number; customerName?: string; defaultPriceMinor?: number; isTestMode?: boolean },
): Promise<number> {
  const customerName = input.customerName ?? `Product ${randomUUID().slice(0, 8)}`;
  const [row] = await c
    .db('product_lines')
    .insert({
      root_account_id: input.rootAccountId,
      customer_name: customerName,
      internal_name: customerName,
      default_price_minor: input.defaultPriceMinor ?? 1000,
      is_test_mode: input.isTestMode ?? false,
    })
    .returning('id');
  return (row as { id: number }).id;
}

/** Inserts a question set through the real repository (definition validated). */
export async function createQuestionSet(c: Container, rootAccountId: number | null, definition: unknown, name = 'Test template') {
  return createQuestionSetsRepository(c.db).insert({ rootAccountId, name, definition });
}
