/**
 * All activities the worker registers, built by one factory over injected clients
 * (STYLE practice 2). Each domain adds its own factory here as it lands.
 */
import type { Config } from '../src/config';
import type { Db } from '../src/db/knex';
import type { Logger } from '../src/logger';
import { createPayproc, type Payproc } from '../src/payproc/client';
import { createBrowserPool, type BrowserPool } from '../src/pdf/browser-pool';
import { createCertificatePrinter, type CertificatePrinter } from '../src/pdf/certificate-printer';
import { createObjectStore, type ObjectStore } from '../src/storage/object-store';
import { countStorageErrors } from '../src/storage/error-counting';
import { createPurchaseActivities } from './purchase';
import { createCertificateActivities } from './certificates';
import { createCertificateSigner, type CertificateSigner } from '../src/certificates/signed-proof';
import { createProofEmailActivities } from './proof-email';
import { createRenewalActivities } from './renewal';
import { createDisputeActivities } from './disputes';
import { createPolicyActivities } from './policy';
import { createCertificateHolderActivities } from './certificate-holders';
import { createEndorsementActivities } from './endorsements';
import { createBulkCancellationActivities } from './bulk-cancellation';
import { createReportActivities } from './reports';
import { createClaimActivities } from './claims';
import type { BordereauThreadConfig } from './bordereau-thread';
import { createPurchaseWorkflows, type PurchaseWorkflows } from '../src/purchases/workflow-client';
import { createMailer, type Mailer } from '../src/mail/mailer';
import { createTemporalClient, type TemporalHandle } from '../src/temporal/client';
import { createEventsRepository, type EventsRepository } from '../src/events/repository';
import { createWebhookEndpointsRepository, type WebhookEndpointsRepository } from '../src/webhook-endpoints/repository';
import { createDeliveryStarter, createEventPublisher, deliverySettingsFromConfig } from '../src/events/publisher';
import { createEventEmitter, type EventEmitter } from '../src/events/emitter';
import { createCertificateService } from '../src/certificates/service';
import { createCertificatesRepository } from '../src/certificates/repository';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createSubscriptionRepository } from '../src/purchases/subscription-repository';
import { createAttentionRepository } from '../src/purchases/attention-repository';
import { createEventActivities } from './events';
import {
  countDependencyError,
  createWorkerMetrics,
  watchBrowserPool,
  watchCancellationsNeedingAttention,
  watchClaimsAcknowledgementOverdue,
  watchPaidWithoutCertificates,
  watchReconciliationDifferences,
  type WorkerMetrics,
} from '../src/metrics/registry';
import { createReportsRepository } from '../src/reports/repository';
import { createClaimsRepository } from '../src/claims/repository';
import { dependencyProbes, watchDependencies } from '../src/metrics/dependency-probes';

export interface ActivityDeps {
  db: Db;
  log: Logger;
  payproc: Payproc;
  publicBaseUrl: string;
  /** Certificate storage (GCS; fake-gcs-server locally). */
  store: ObjectStore;
  /** The worker's Chromium page pool (one browser per worker process). */
  pdf: BrowserPool;
  /** Prints certificates on `pdf`, several purchases of one account per print. */
  printer: CertificatePrinter;
  /** Most certificates in one print job (config `PDF_PAGES_PER_PRINT`). */
  pagesPerPrint: number;
  /** Signs each certificate's proof (config CERTIFICATE_SIGNING_KEYS; issue 50 item 3). */
  certificateSigner?: CertificateSigner;
  /** SMTP for emailed proof of coverage. */
  mailer: Mailer;
  /** Attach certificate PDFs to proof-of-coverage emails up to this many bytes in all. */
  attachmentMaxBytes: number;
  /** Domain of the fixed Message-IDs of proof-of-coverage emails. */
  messageIdDomain: string;
  /** Most covered units one purchase item may hold (MAX_COVERED_UNITS; units added by an endorsement count). */
  maxCoveredUnits: number;
  /** Key of the buyer's withdrawal links the proof-of-coverage email to the buyer carries (WITHDRAWAL_LINK_KEY). */
  withdrawalLinkKey: string;
  /** Publishes agency events after purchase changes (and starts their deliveries). */
  events: EventEmitter;
  eventStore: EventsRepository;
  endpoints: WebhookEndpointsRepository;
  /** The worker's own Temporal client (starts event deliveries); the caller closes it. */
  temporal: TemporalHandle;
  /** This worker process's Prometheus metrics. */
  metrics: WorkerMetrics;
  /** Where the bordereau writer thread connects (the worker's database and bucket). */
  reportsThread: BordereauThreadConfig;
  /** Hands a bulk cancellation's purchases to their policy workflows (on the worker's own Temporal client). */
  purchaseWorkflows: Pick<PurchaseWorkflows, 'cancel' | 'startBordereau' | 'startProofOfCoverageEmail'>;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createPurchaseActivities(deps),
    ...createCertificateActivities(deps),
    ...createProofEmailActivities(deps),
    ...createRenewalActivities(deps),
    ...createDisputeActivities(deps),
    ...createPolicyActivities(deps),
    ...createCertificateHolderActivities(deps),
    ...createEndorsementActivities(deps),
    ...createBulkCancellationActivities({ db: deps.db, workflows: deps.purchaseWorkflows }),
    ...createReportActivities({
      db: deps.db,
      payproc: deps.payproc,
      config: deps.reportsThread,
      onStorageError: countDependencyError(deps.metrics, 'storage'),
      events: deps.events,
      startBordereau: (id) => deps.purchaseWorkflows.startBordereau(id),
    }),
    ...createEventActivities({ events: deps.eventStore, endpoints: deps.endpoints, metrics: deps.metrics }),
    ...createClaimActivities({
      db: deps.db,
      payproc: deps.payproc,
      events: deps.events,
      mailer: deps.mailer,
      messageIdDomain: deps.messageIdDomain,
      countProcessorError: countDependencyError(deps.metrics, 'processor'),
    }),
  };
}

/**
 * The activity dependencies a worker process builds from its config: the clients plus its own
 * Chromium page pool (launched on first render), certificate store, mailer and Temporal client
 * (it starts event deliveries on `options.taskQueue`, default TEMPORAL_TASK_QUEUE). The caller owns
 * the pool, the mailer and the client and must `close()` them on shutdown (no Chromium process outlives the worker).
 */
export function activityDepsFromConfig(
  config: Config,
  clients: { db: Db; log: Logger },
  options: { taskQueue?: string } = {},
): ActivityDeps {
  const pdf = createBrowserPool({
    executablePath: config.CHROMIUM_PATH,
    pageCount: config.PDF_PAGE_POOL_SIZE,
    rendersPerBrowser: config.PDF_RENDERS_PER_BROWSER,
    renderTimeoutMs: config.PDF_RENDER_TIMEOUT_MS,
    // Only certificates are printed here, and every certificate document carries the same fixed
    // Content-Security-Policy: one document written over the last changes nothing (issue 16).
    freshDocumentPerRender: false,
    log: clients.log.child({ component: 'pdf' }),
  });
  const metrics = createWorkerMetrics();
  watchBrowserPool(metrics, pdf);
  const attention = createAttentionRepository(clients.db);
  watchPaidWithoutCertificates(metrics, (seconds) => attention.countPaidWithoutCertificates(seconds));
  watchCancellationsNeedingAttention(metrics, (seconds) => attention.countCancellationsNeedingAttention(seconds));
  const reports = createReportsRepository(clients.db);
  watchReconciliationDifferences(metrics, () => reports.latestDifferenceCounts());
  const claims = createClaimsRepository(clients.db);
  watchClaimsAcknowledgementOverdue(metrics, () => claims.countAcknowledgementOverdue());
  // dependency_up and dependency_last_success_timestamp_seconds: the processor (each mode) and object storage, probed at scrapes.
  watchDependencies(metrics.registry, dependencyProbes(config));
  const store = countStorageErrors(createObjectStore(config), countDependencyError(metrics, 'storage'));
  const temporal = createTemporalClient(config);
  const eventStore = createEventsRepository(clients.db);
  const endpoints = createWebhookEndpointsRepository(clients.db);
  const publisher = createEventPublisher({
    events: eventStore,
    endpoints,
    startDelivery: createDeliveryStarter(
      temporal.client,
      options.taskQueue ?? config.TEMPORAL_TASK_QUEUE,
      deliverySettingsFromConfig(config),
    ),
  });
  const sales = createSaleRepository(clients.db);
  const certificates = createCertificateService({
    repo: createCertificatesRepository(clients.db),
    sales,
    store,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    urlTtlSeconds: config.CERTIFICATE_URL_TTL_SECONDS,
  });

  const purchaseWorkflows = createPurchaseWorkflows({
    client: temporal.client,
    taskQueue: options.taskQueue ?? config.TEMPORAL_TASK_QUEUE,
    sessionTtlSeconds: config.CHECKOUT_SESSION_TTL_SECONDS,
    pollIntervalSeconds: config.CHECKOUT_POLL_INTERVAL_SECONDS,
    retryMaxIntervalSeconds: config.PURCHASE_RETRY_MAX_INTERVAL_SECONDS,
    buyerEmailHashKey: config.BUYER_EMAIL_HASH_KEY,
  });

  return {
    ...clients,
    metrics,
    purchaseWorkflows,
    payproc: createPayproc(config),
    publicBaseUrl: config.PUBLIC_BASE_URL,
    store,
    reportsThread: {
      DATABASE_URL: config.DATABASE_URL,
      STORAGE_API_ENDPOINT: config.STORAGE_API_ENDPOINT,
      STORAGE_BUCKET: config.STORAGE_BUCKET,
      STORAGE_PROJECT_ID: config.STORAGE_PROJECT_ID,
    },
    events: createEventEmitter({
      sales,
      subscriptions: createSubscriptionRepository(clients.db),
      certificates,
      publisher,
      metrics,
    }),
    eventStore,
    endpoints,
    temporal,
    pdf,
    printer: createCertificatePrinter({
      pool: pdf,
      format: config.PDF_PAGE_FORMAT,
      maxPagesPerPrint: config.PDF_PAGES_PER_PRINT,
      printsAtOnce: Math.min(config.PDF_PRINTS_AT_ONCE, config.PDF_PAGE_POOL_SIZE),
      batchWaitMs: config.PDF_PRINT_BATCH_WAIT_MS,
      onPrint: ({ pages }) => metrics.pagesPerPrint.observe(pages),
    }),
    pagesPerPrint: config.PDF_PAGES_PER_PRINT,
    certificateSigner: createCertificateSigner(config.CERTIFICATE_SIGNING_KEYS),
    mailer: createMailer(config, clients.log),
    attachmentMaxBytes: config.PROOF_EMAIL_ATTACHMENT_MAX_BYTES,
    messageIdDomain: /@([A-Za-z0-9.-]+)/.exec(config.MAIL_FROM)?.[1] ?? 'localhost',
    withdrawalLinkKey: config.WITHDRAWAL_LINK_KEY,
    maxCoveredUnits: config.MAX_COVERED_UNITS,
  };
}
