/**
 * The claims domain as the API's composition root (src/container.ts) mounts it: its repository,
 * workflow client and service over the shared clients, and its routes.
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

/** The claim routes over `db`, the Temporal `client` (claim workflows on `taskQueue`), storage (signed upload URLs) and the products service (scope). */
export function claimRoutesFrom(deps: {
  db: Db;
  client: Client;
  taskQueue: string;
  store: Pick<ObjectStore, 'signedUploadUrl' | 'stat'>;
  products: Pick<ProductService, 'get'>;
}): RouteRegistration {
  const accounts = createAccountsRepository(deps.db);
  const service = createClaimService({
    claims: createClaimsRepository(deps.db),
    sales: createSaleRepository(deps.db),
    certificates: createCertificatesRepository(deps.db),
    assertProductInScope: (principal, id) => deps.products.get(principal, id),
    store: deps.store,
    workflows: createClaimWorkflows({ client: deps.client, taskQueue: deps.taskQueue }),
    accountKind: async (id) => (await accounts.findById(id))?.kind ?? null,
  });
  return (router, registry) => {
    claimRoutes(service)(router, registry);
    adjusterClaimRoutes(service)(router, registry);
  };
}
