/**
 * All activities the worker registers, built by one factory over injected clients
 * (STYLE practice 2). Each domain adds its own factory here as it lands.
 */
import type { Db } from '../src/db/knex';
import type { Logger } from '../src/logger';

export interface ActivityDeps {
  db: Db;
  log: Logger;
}

export function createActivities(_deps: ActivityDeps): Record<string, (...args: never[]) => Promise<unknown>> {
  return {};
}
