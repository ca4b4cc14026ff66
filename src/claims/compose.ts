/**
 * The claims domain as the API's composition root (src/container.ts) mounts it: its repository,
 * workflow client and service over the shared clients, its `/api/v1` routes and the buyer's claim page.
 */
import type { Client } from '@temporalio/client';
import type { Db } from '../db/knex';
import type { RouteRegistration } from '../http/routes';
import type { ObjectStore } from '../storage/object-store';
import { createSaleRepository } from '../purchases/sale-repository';
import { createCertificatesRepository } from '../certificates/repository';
import type { ProductService } from '../products/service';
import { createClaimsRepository } from './repository';
import { createClaimService } from './service';
import { createClaimWorkflows } from './workflow-client';
import { claimRoutes } from './routes';
import { adjusterClaimRoutes } from './adjuster-routes';
import { createAccountsRepository } from '../accounts/repository';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { createBuyerClaimService } from './buyer-service';
import { buyerClaimRoutes } from './buyer-routes';

/** What the claims domain is built over: `db`, the Temporal `client` (claim workflows on `taskQueue`), storage (signed upload URLs) and the products service (scope). */
export interface ClaimDomainDeps {
  db: Db;
  client: Client;
  taskQueue: string;
  store: Pick<ObjectStore, 'signedUploadUrl' | 'stat'>;
  products: Pick<ProductService, 'get'>;
}

/** The claims service over `deps` (the API's routes, the buyer's page and the portal's claim pages call it). */
export function claimServiceFrom(deps: ClaimDomainDeps) {
  const accounts = createAccountsRepository(deps.db);
  return createClaimService({
    claims: createClaimsRepository(deps.db),
    sales: createSaleRepository(deps.db),
    certificates: createCertificatesRepository(deps.db),
    assertProductInScope: (principal, id) => deps.products.get(principal, id),
    store: deps.store,
    workflows: createClaimWorkflows({ client: deps.client, taskQueue: deps.taskQueue }),
    accountKind: async (id) => (await accounts.findById(id))?.kind ?? null,
  });
}

/** The claim routes of `/api/v1` (the agency's and the adjusters'). */
export function claimRoutesFrom(deps: ClaimDomainDeps): RouteRegistration {
  const service = claimServiceFrom(deps);
  return (router, registry) => {
    claimRoutes(service)(router, registry);
    adjusterClaimRoutes(service)(router, registry);
  };
}

/** The buyer's claim page on the public router: links signed with `key` (WITHDRAWAL_LINK_KEY), limited per address by `limiter`. */
export function buyerClaimPageFrom(deps: ClaimDomainDeps & { key: string; limiter: RateLimiterAbstract }): RouteRegistration {
  const service = createBuyerClaimService({
    sales: createSaleRepository(deps.db),
    claims: createClaimsRepository(deps.db),
    claimService: claimServiceFrom(deps),
    key: deps.key,
  });
  return buyerClaimRoutes(service, deps.limiter);
}
