/**
 * All activities the worker registers, built by one factory over injected clients
 * (STYLE practice 2). Each domain adds its own factory here as it lands.
 */
import type { Db } from '../src/db/knex';
import type { Logger } from '../src/logger';
import type { Payproc } from '../src/payproc/client';
import { createPurchaseActivities } from './purchase';

export interface ActivityDeps {
  db: Db;
  log: Logger;
  payproc: Payproc;
  publicBaseUrl: string;
}

export function createActivities(deps: ActivityDeps) {
  return { ...createPurchaseActivities(deps) };
}
