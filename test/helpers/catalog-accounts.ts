/**
 * The catalog suites' setup against real PostgreSQL and stripe-mock (through a recording proxy, so
 * the requests the processor received can be asserted): the API with no worker, an account with a
 * question set and a live and a test key, and another account with its own live key and question set.
 */
import { SPECIAL_EVENT_LIABILITY } from '../../src/question-sets/examples';
import { startTestApp, type TestApp } from './app';
import { createKey, createQuestionSet, createRootAccount } from './fixtures';
import { startProcessorProxy, type ProcessorProxy } from './processor-proxy';

export interface CatalogAccounts {
  app: TestApp;
  proxy: ProcessorProxy;
  accountId: number;
  /** A question set of the account (Special Event Liability). */
  questionSetId: number;
  live: string;
  testKey: string;
  /** 'Other Agency': its live key and its own question set. */
  otherLive: string;
  otherQuestionSetId: number;
}

/**
 * Registers beforeAll (starts the proxy and the API, makes both accounts) and afterAll (closes
 * them); the answer's fields are filled in by beforeAll, so read them in a hook or a test.
 */
export function useCatalogAccounts(): CatalogAccounts {
  const made = {} as CatalogAccounts;
  beforeAll(async () => {
    made.proxy = await startProcessorProxy();
    made.app = await startTestApp({ PAYPROC_API_BASE: made.proxy.url });
    const { container } = made.app;
    const account = await createRootAccount(container);
    made.accountId = account.id;
    made.questionSetId = (await createQuestionSet(container, account.id, SPECIAL_EVENT_LIABILITY)).id;
    made.live = (await createKey(container, { rootAccountId: account.id, mode: 'live' })).key;
    made.testKey = (await createKey(container, { rootAccountId: account.id, mode: 'test' })).key;
    const other = await createRootAccount(container, 'Other Agency');
    made.otherLive = (await createKey(container, { rootAccountId: other.id, mode: 'live' })).key;
    made.otherQuestionSetId = (await createQuestionSet(container, other.id, SPECIAL_EVENT_LIABILITY)).id;
  });
  afterAll(async () => {
    await made.app?.close();
    await made.proxy?.close();
  });
  return made;
}
