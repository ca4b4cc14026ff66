/**
 * The API's composition root: builds every client, repository and service once from the
 * config, and closes them in reverse order. `src/server.ts` and the API tests share it.
 */
import type { Config } from './config';
import { createLogger, type Logger } from './logger';
import { createDb, pingDb, type Db } from './db/knex';
import { createTemporalClient, type TemporalHandle } from './temporal/client';
import { createRateLimiter, type RateLimiterHandle } from './http/rate-limit';
import { createAccountsRepository } from './accounts/repository';
import type { PortalDeps } from './portal/routes';
import { createRelyingParty } from './portal/oidc';
import { createPortalSessionRepository } from './accounts/portal-session-repository';
import { createAuditRepository } from './audit/repository';
import { createAuditService } from './audit/service';
import { accountRoutes } from './accounts/routes';
import { createAccountService, createTeammateService } from './accounts/service';
import { createApiKeysRepository } from './api-keys/repository';
import { createApiKeyService, type ApiKeyService } from './api-keys/service';
import { createPayproc, type Payproc } from './payproc/client';
import { countProcessorErrors } from './payproc/error-counting';
import { createCatalogGateway } from './payproc/catalog';
import { createProductsRepository } from './products/repository';
import { createProductService, type ProductService } from './products/service';
import { productRoutes } from './products/routes';
import { pricingTermsRoutes } from './products/pricing-terms-routes';
import { createPricingTermsService } from './products/pricing-terms-service';
import { createPricingTermsRepository } from './products/pricing-terms-repository';
import { certificateSettingsRoutes, createCertificateSettingsService } from './products/certificate-settings-routes';
import { createCertificateSettingsRepository } from './products/certificate-settings-repository';
import { createSignatureService, signatureRoutes } from './accounts/signature-routes';
import { createSignatureRepository } from './accounts/signature-repository';
import { createBundlesRepository } from './bundles/repository';
import { createBundleService, type BundleService } from './bundles/service';
import { bundleRoutes } from './bundles/routes';
import { createBuyersRepository } from './buyers/repository';
import { createBuyerService, type BuyerService } from './buyers/service';
import { buyerConnectRoutes } from './buyers/routes';
import { buyerErasureRoutes } from './buyers/erasure-routes';
import { createBuyerErasureService } from './buyers/erasure-service';
import { createBuyerErasureRepository } from './buyers/erasure-repository';
import { createQuestionSetsRepository } from './question-sets/repository';
import { createQuestionSetService } from './question-sets/service';
import { questionSetRoutes } from './question-sets/routes';
import { createQuotesRepository } from './quotes/repository';
import { createQuoteService, type QuoteService } from './quotes/service';
import { createTaxPricer } from './taxes/service';
import { createTaxRatesRepository } from './taxes/repository';
import { quoteRoutes } from './quotes/routes';
import { createSaleRepository } from './purchases/sale-repository';
import { createSubscriptionRepository } from './purchases/subscription-repository';
import { createLedgerRepository } from './purchases/ledger-repository';
import { createPurchaseWorkflowsFromConfig, type PurchaseWorkflows } from './purchases/workflow-client';
import { purchaseRoutes } from './purchases/routes';
import { createPurchaseService } from './purchases/service';
import { createWebhookService } from './webhooks/service';
import { createProcessorEventRouter } from './purchases/processor-events';
import { createPayprocEventsRepository } from './webhooks/repository';
import { webhookRoutes } from './webhooks/routes';
import { createTestHelperService } from './test-helpers/service';
import { createDisputesRepository } from './disputes/repository';
import { createWebhookEndpointsRepository } from './webhook-endpoints/repository';
import { createWebhookEndpointService } from './webhook-endpoints/service';
import { webhookEndpointRoutes } from './webhook-endpoints/routes';
import { createEventsRepository } from './events/repository';
import { createEventService } from './events/service';
import { eventRoutes } from './events/routes';
import { createDeliveryStarter, deliverySettingsFromConfig } from './events/publisher';
import { testHelperRoutes } from './test-helpers/routes';
import { createMailer, type Mailer } from './mail/mailer';
import { createPaymentsRepository } from './payments/repository';
import { createPaymentService, type PaymentService } from './payments/service';
import { paymentRoutes } from './payments/routes';
import { createInvoiceService } from './invoices/service';
import { rootInvoiceRoutes, teammateInvoiceRoutes } from './invoices/routes';
import { createObjectStore } from './storage/object-store';
import { countStorageErrors } from './storage/error-counting';
import { createCertificatesRepository } from './certificates/repository';
import { createAccountScopes } from './accounts/scope';
import { createCertificateService, type CertificateService } from './certificates/service';
import { rootCertificateRoutes, teammateCertificateRoutes, verificationRoutes } from './certificates/routes';
import { createCertificateSigner } from './certificates/signed-proof';
import { createPurchaseSearchRepository } from './purchase-search/repository';
import { createPurchaseSearchService } from './purchase-search/service';
import { purchaseSearchRoutes, rootPurchaseSearchRoutes } from './purchase-search/routes';
import { createProofOfCoverageService } from './proof-of-coverage/service';
import { createProofOfCoverageEmailsRepository } from './proof-of-coverage/repository';
import { createCheckoutPageService } from './checkout-pages/service';
import { checkoutPageRoutes } from './checkout-pages/routes';
import { createSubscriptionService } from './subscriptions/service';
import { subscriptionRoutes } from './subscriptions/routes';
import { createBulkCancellationsRepository } from './bulk-cancellations/repository';
import { createBulkCancellationService } from './bulk-cancellations/service';
import { bulkCancellationRoutes } from './bulk-cancellations/routes';
import { createReportsRepository } from './reports/repository';
import { createReportService } from './reports/service';
import { reportRoutes } from './reports/routes';
import { createPartiesRepository } from './parties/repository';
import { createPartyService } from './parties/service';
import { partyRoutes } from './parties/routes';
import { certificateHolderRoutes } from './certificate-holders/routes';
import { buyerClaimPageFrom, claimRoutesFrom, claimServiceFrom } from './claims/compose';
import { createCertificateHolderService } from './certificate-holders/service';
import { createCertificateHoldersRepository } from './certificate-holders/repository';
import { endorsementRoutes } from './endorsements/routes';
import { createEndorsementService } from './endorsements/service';
import { createEndorsementsRepository } from './endorsements/repository';
import { createWithdrawalLinks } from './withdrawals/links';
import { createWithdrawalsRepository } from './withdrawals/repository';
import { createWithdrawalService } from './withdrawals/service';
import { withdrawalRoutes } from './withdrawals/routes';
import { proofEmailStatusRoutes, rootProofEmailRoutes, teammateProofEmailRoutes } from './proof-of-coverage/routes';
import type { BareSurface, RouteRegistration } from './http/routes';
import { createIdempotencyRepository, type IdempotencyRepository } from './idempotency/repository';
import type { IdempotencyOptions } from './idempotency/middleware';
import { countDependencyError, createApiMetrics, type ApiMetrics } from './metrics/registry';
import { watchTaskQueuePollers } from './metrics/task-queue-pollers';
import { parseExpectedTaskQueues } from './temporal/expected-task-queues';

/** An unfinished request holds its idempotency key at most this long (ms): far beyond the 30 s request timeout. */
const IDEMPOTENCY_TAKEOVER_AFTER_MS = 120_000;

export interface Container {
  config: Config;
  log: Logger;
  db: Db;
  temporal: TemporalHandle;
  rateLimiter: RateLimiterHandle;
  /** The processor clients; calls that fail because the processor is down count in `metrics.dependencyErrors`. */
  payproc: Payproc;
  services: {
    apiKeys: ApiKeyService;
    products: ProductService;
    bundles: BundleService;
    buyers: BuyerService;
    quotes: QuoteService;
    payments: PaymentService;
    certificates: CertificateService;
  };
  apiV1Routes: RouteRegistration[];
  /** Routes of each bare surface, mounted under its prefix. */
  surfaceRoutes: Record<BareSurface, RouteRegistration[]>;
  /** Routes under /webhooks (no API key). */
  webhookRoutes: RouteRegistration[];
  /** Public pages without API key or envelope (the certificate verification page, the checkout return pages, the buyer's withdrawal and claim pages). */
  publicRoutes: RouteRegistration[];
  purchaseWorkflows: PurchaseWorkflows;
  /** This process's Prometheus metrics (served by `startMetricsServer` on METRICS_PORT). */
  metrics: ApiMetrics;
  /** Idempotency keys of POST and PATCH requests: their store and limits. */
  idempotency: { store: IdempotencyRepository; options: IdempotencyOptions };
  mailer: Mailer;
  /** The agency portal's services (/portal), or null when no identity provider is configured (the portal is off). */
  portal: PortalDeps | null;
  checkDb: () => Promise<boolean>;
  close(): Promise<void>;
}

export function createContainer(config: Config, log: Logger = createLogger(config, 'api')): Container {
  const db = createDb(config, log);
  const temporal = createTemporalClient(config);
  const rateLimiter = createRateLimiter(config);
  const accounts = createAccountsRepository(db);
  const sales = createSaleRepository(db);
  const subscriptions = createSubscriptionRepository(db);
  const ledger = createLedgerRepository(db);
  const keysRepository = createApiKeysRepository(db);
  const apiKeys = createApiKeyService({
    keys: keysRepository,
    accounts,
    defaultGraceHours: config.API_KEY_ROTATION_GRACE_HOURS,
  });
  const metrics = createApiMetrics();
  // The server's view of each expected task queue's pollers, asked at each scrape (NoWorkerPolling).
  watchTaskQueuePollers(metrics.registry, {
    namespace: config.TEMPORAL_NAMESPACE,
    expected: parseExpectedTaskQueues(config.TEMPORAL_EXPECTED_TASK_QUEUES, config.TEMPORAL_TASK_QUEUE),
    count: (queue, type) => temporal.pollerCount(queue, type, config.READINESS_POLLER_WINDOW_SECONDS * 1000),
  });
  // Failed calls to the processor and to object storage count as the worker's do (dependency_errors_total).
  const payproc = countProcessorErrors(createPayproc(config), countDependencyError(metrics, 'processor'));
  const store = countStorageErrors(createObjectStore(config), countDependencyError(metrics, 'storage'));
  const questionSets = createQuestionSetsRepository(db);
  const parties = createPartiesRepository(db);
  const products = createProductService({
    products: createProductsRepository(db),
    catalog: createCatalogGateway(payproc),
    questionSets,
    accounts,
    appointments: parties,
  });
  const bundles = createBundleService({ bundles: createBundlesRepository(db), questionSets });
  const buyers = createBuyerService({
    buyers: createBuyersRepository(db),
    accounts,
    tokenTtlSeconds: config.BUYER_ACCESS_TOKEN_TTL_SECONDS,
  });
  const purchaseWorkflows = createPurchaseWorkflowsFromConfig(temporal.client, config);
  const webhooks = createWebhookService({
    countOutcome: (type, outcome) => metrics.webhookEvents.inc({ type, outcome }),
    events: createPayprocEventsRepository(db),
    router: createProcessorEventRouter({ sales, subscriptions, workflows: purchaseWorkflows, log }),
    log,
    stripe: payproc.client('test'),
    secrets: [config.PAYPROC_WEBHOOK_SECRET, ...(config.PAYPROC_WEBHOOK_SECRET_SECONDARY ? [config.PAYPROC_WEBHOOK_SECRET_SECONDARY] : [])],
  });
  const quotes = createQuoteService({
    startCheckout: (purchase) => purchaseWorkflows.startCheckout(purchase),
    quotes: createQuotesRepository(db),
    sales,
    questionSets,
    verifyBuyer: (principal, uuid, token) => buyers.verifyAccessToken(principal, uuid, token),
    taxes: createTaxPricer(createTaxRatesRepository(db)),
    maxCoveredUnits: config.MAX_COVERED_UNITS,
  });
  const mailer = createMailer(config, log);
  const payments = createPaymentService({
    repo: createPaymentsRepository(db),
    sales,
    accounts,
    verifyBuyer: (principal, uuid, token) => buyers.verifyAccessToken(principal, uuid, token),
    workflows: purchaseWorkflows,
    mailer,
    checkoutLinkDedupeSeconds: config.CHECKOUT_LINK_EMAIL_DEDUPE_SECONDS,
  });
  const certificates = createCertificateService({
    repo: createCertificatesRepository(db),
    sales,
    store,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    urlTtlSeconds: config.CERTIFICATE_URL_TTL_SECONDS,
  });
  const verifyRateLimiter = createRateLimiter({
    RATE_LIMIT_PER_MINUTE: config.VERIFY_RATE_LIMIT_PER_MINUTE,
    REDIS_URL: config.REDIS_URL,
    RATE_LIMIT_REDIS_PREFIX: `${config.RATE_LIMIT_REDIS_PREFIX}:verify`,
  });
  const accountScopes = createAccountScopes(db);
  const proofOfCoverage = createProofOfCoverageService({
    emails: createProofOfCoverageEmailsRepository(db),
    certificates,
    certificateRows: createCertificatesRepository(db),
    holders: createCertificateHoldersRepository(db),
    startSending: (ids) => purchaseWorkflows.startProofOfCoverageEmail(ids),
  });
  const invoices = createInvoiceService({ sales, payproc });
  const endpoints = createWebhookEndpointsRepository(db);
  const purchaseSearch = createPurchaseSearchService({ repo: createPurchaseSearchRepository(db), scopes: accountScopes });
  const endorsements = createEndorsementService({
    sales,
    ledger,
    holders: createCertificateHoldersRepository(db),
    certificates: createCertificatesRepository(db),
    endorsements: createEndorsementsRepository(db),
    products: createProductsRepository(db),
    workflows: purchaseWorkflows,
    maxCoveredUnits: config.MAX_COVERED_UNITS,
  });
  const certificateHolders = createCertificateHolderService({
    sales,
    holders: createCertificateHoldersRepository(db),
    certificates: createCertificatesRepository(db),
    workflows: purchaseWorkflows,
  });
  const webhookEndpoints = createWebhookEndpointService({ repo: endpoints });
  const agencyEvents = createEventService({
    events: createEventsRepository(db),
    endpoints,
    startDelivery: createDeliveryStarter(temporal.client, config.TEMPORAL_TASK_QUEUE, deliverySettingsFromConfig(config)),
  });
  const purchaseService = createPurchaseService({
    sales,
    ledger,
    certificates: createCertificatesRepository(db),
    disputes: createDisputesRepository(db),
    publicBaseUrl: config.PUBLIC_BASE_URL,
    workflows: purchaseWorkflows,
  });
  const withdrawalLinks = createWithdrawalLinks({ sales, key: config.WITHDRAWAL_LINK_KEY, publicBaseUrl: config.PUBLIC_BASE_URL });
  const withdrawals = createWithdrawalService({
    sales,
    ledger,
    purchaseService,
    withdrawals: createWithdrawalsRepository(db),
    key: config.WITHDRAWAL_LINK_KEY,
  });
  return {
    config,
    log,
    db,
    temporal,
    rateLimiter,
    payproc,
    services: { apiKeys, products, bundles, buyers, quotes, payments, certificates },
    apiV1Routes: [
      accountRoutes(
        createAccountService({
          accounts,
          apiKeys: keysRepository,
          processorSecrets: { live: config.PAYPROC_LIVE_SECRET_KEY, test: config.PAYPROC_TEST_SECRET_KEY },
        }),
      ),
      signatureRoutes(createSignatureService({ signatures: createSignatureRepository(db), store })),
      productRoutes(products),
      pricingTermsRoutes(createPricingTermsService({ products: createProductsRepository(db), terms: createPricingTermsRepository(db) })),
      certificateSettingsRoutes(
        createCertificateSettingsService({ products: createProductsRepository(db), settings: createCertificateSettingsRepository(db) }),
      ),
      purchaseRoutes(purchaseService),
      proofEmailStatusRoutes(proofOfCoverage),
      buyerErasureRoutes(
        createBuyerErasureService({
          erasures: createBuyerErasureRepository(db),
          audit: createAuditService({ repo: createAuditRepository(db) }),
          buyers: createBuyersRepository(db),
          sales,
          certificates: createCertificatesRepository(db),
          emailLogs: [createProofOfCoverageEmailsRepository(db), createPaymentsRepository(db)],
          storedDocuments: [createEventsRepository(db), createEndorsementsRepository(db)],
          accounts,
        }),
      ),
      endorsementRoutes(endorsements),
      certificateHolderRoutes(certificateHolders),
      claimRoutesFrom({ db, client: temporal.client, taskQueue: config.TEMPORAL_TASK_QUEUE, store, products }),
      bulkCancellationRoutes(
        createBulkCancellationService({
          repo: createBulkCancellationsRepository(db),
          start: (id) => purchaseWorkflows.startBulkCancellation(id),
        }),
      ),
      subscriptionRoutes(createSubscriptionService({ sales, subscriptions, ledger, workflows: purchaseWorkflows })),
      partyRoutes(createPartyService({ parties, accounts })),
      reportRoutes(
        createReportService({
          repo: createReportsRepository(db),
          accounts,
          appointments: parties,
          store,
          start: (id) => purchaseWorkflows.startBordereau(id),
        }),
      ),
      bundleRoutes(bundles),
      questionSetRoutes(createQuestionSetService({ repo: questionSets })),
      webhookEndpointRoutes(webhookEndpoints),
      eventRoutes(agencyEvents),
      testHelperRoutes(
        createTestHelperService({
          sales,
          subscriptions,
          disputes: createDisputesRepository(db),
          workflows: purchaseWorkflows,
          webhooks,
          stripe: payproc.client('test'),
          webhookSecret: config.PAYPROC_WEBHOOK_SECRET,
        }),
      ),
    ],
    webhookRoutes: [webhookRoutes(webhooks)],
    publicRoutes: [
      verificationRoutes(certificates, verifyRateLimiter.limiter, createCertificateSigner(config.CERTIFICATE_SIGNING_KEYS)),
      checkoutPageRoutes(
        createCheckoutPageService({
          sales,
          certificates: createCertificatesRepository(db),
          publicBaseUrl: config.PUBLIC_BASE_URL,
          withdrawalUrlOf: (p) => withdrawalLinks.urlFor(p),
        }),
        verifyRateLimiter.limiter,
      ),
      withdrawalRoutes(withdrawals, verifyRateLimiter.limiter),
      buyerClaimPageFrom({
        db,
        client: temporal.client,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        store,
        products,
        key: config.WITHDRAWAL_LINK_KEY,
        limiter: verifyRateLimiter.limiter,
      }),
    ],
    purchaseWorkflows,
    metrics,
    idempotency: {
      store: createIdempotencyRepository(db),
      options: {
        ttlMs: config.IDEMPOTENCY_KEY_TTL_HOURS * 3_600_000,
        waitMs: config.IDEMPOTENCY_WAIT_MS,
        takeoverAfterMs: IDEMPOTENCY_TAKEOVER_AFTER_MS,
      },
    },
    mailer,
    portal: config.PORTAL_OIDC_ISSUER
      ? {
          apiKeys,
          accounts: createTeammateService({ accounts, sessions: createPortalSessionRepository(db) }),
          webhookEndpoints,
          events: agencyEvents,
          purchases: purchaseService,
          certificateHolders,
          endorsements,
          purchaseSearch,
          certificates,
          claims: claimServiceFrom({ db, client: temporal.client, taskQueue: config.TEMPORAL_TASK_QUEUE, store, products }),
          audit: createAuditService({ repo: createAuditRepository(db) }),
          relyingParty: createRelyingParty({
            issuer: config.PORTAL_OIDC_ISSUER,
            clientId: config.PORTAL_OIDC_CLIENT_ID,
            clientSecret: config.PORTAL_OIDC_CLIENT_SECRET!,
            redirectUri: new URL('/portal/callback', config.PUBLIC_BASE_URL).href,
            postLogoutRedirectUri: new URL('/portal/signed-out', config.PUBLIC_BASE_URL).href,
          }),
        }
      : null,
    surfaceRoutes: {
      '/public-quote': [quoteRoutes(quotes), paymentRoutes(payments)],
      '/platform-seller-invites': [buyerConnectRoutes(buyers)],
      '/platform-agency-certs': [
        teammateCertificateRoutes(certificates, accountScopes),
        teammateInvoiceRoutes(invoices, accountScopes),
        teammateProofEmailRoutes(proofOfCoverage, accountScopes),
        purchaseSearchRoutes(purchaseSearch),
      ],
      '/platform-agency-root-certs': [
        rootCertificateRoutes(certificates, accountScopes),
        rootInvoiceRoutes(invoices, accountScopes),
        rootProofEmailRoutes(proofOfCoverage, accountScopes),
        rootPurchaseSearchRoutes(purchaseSearch),
      ],
    },
    checkDb: () => pingDb(db),
    async close() {
      mailer.close();
      await rateLimiter.close();
      await verifyRateLimiter.close();
      await temporal.close();
      await db.destroy();
    },
  };
}
