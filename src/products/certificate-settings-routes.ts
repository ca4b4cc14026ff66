/**
 * `GET/PATCH /api/v1/products/{id}/certificate_settings` (issue 50, item 1): how the product's
 * certificates describe its coverage. Tenancy as for products (another account's or mode's
 * product is 404 NOT_FOUND). PATCH sets the fields given (the rest keep their value, or the
 * defaults); 400 VALIDATION_ERROR for a malformed form reference, an unknown trigger or basis, or
 * an insurer id that is not an insurer which appointed the account, or the product's own insurer.
 * Certificates issued from then on print the setting; those already printed keep what they show.
 */
import type { RouteRegistration } from '../http/routes';
import { successEnvelope as envelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import { AppError, notFound } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import type { ProductsRepository } from './repository';
import { scopeOf } from './service';
import type { CertificateSettingsRepository } from './certificate-settings-repository';
import {
  DEFAULT_CERTIFICATE_SETTINGS,
  applyCertificateSettings,
  certificateSettingsRead,
  CertificateSettingsRead,
  UpdateCertificateSettingsBody,
} from './certificate-settings';

/** Reads and sets a product's certificate setting; errors NOT_FOUND, VALIDATION_ERROR. */
export function createCertificateSettingsService(deps: {
  products: Pick<ProductsRepository, 'find' | 'transaction'>;
  settings: CertificateSettingsRepository;
}) {
  return {
    async getCertificateSettings(principal: Principal, id: number): Promise<CertificateSettingsRead> {
      if (!(await deps.products.find(id, scopeOf(principal)))) throw notFound('product', id);
      const found = await deps.settings.find(id);
      return certificateSettingsRead(id, found?.settings ?? DEFAULT_CERTIFICATE_SETTINGS, found?.updatedAt ?? null);
    },

    async updateCertificateSettings(
      principal: Principal,
      id: number,
      body: UpdateCertificateSettingsBody,
    ): Promise<CertificateSettingsRead> {
      return deps.products.transaction(async (trx) => {
        const product = await deps.products.find(id, scopeOf(principal), trx);
        if (!product) throw notFound('product', id);
        const current = (await deps.settings.find(id, trx))?.settings ?? DEFAULT_CERTIFICATE_SETTINGS;
        const next = applyCertificateSettings(current, body);
        const ids = next.otherInsurerIds;
        const appointed = new Set(await deps.settings.appointedInsurers(product.rootAccountId, ids, trx));
        const bad = ids.find((x, i) => !appointed.has(x) || x === product.insurerRootAccountId || ids.indexOf(x) !== i);
        if (bad !== undefined)
          throw new AppError(
            'VALIDATION_ERROR',
            `other_insurer_ids: ${bad} is not an insurer that appointed this account, or is the product’s own insurer or listed twice (GET /api/v1/parties lists the insurers)`,
            { details: [{ path: 'other_insurer_ids', message: `insurer ${bad} cannot be listed` }] },
          );
        await deps.settings.save(trx, id, next);
        const saved = await deps.settings.find(id, trx);
        return certificateSettingsRead(id, next, saved?.updatedAt ?? null);
      });
    },
  };
}

export type CertificateSettingsService = ReturnType<typeof createCertificateSettingsService>;

const description =
  'How the product’s certificates describe its coverage, as a certificate of liability insurance does: the type of insurance (default "Commercial General Liability"), occurrence or claims-made, the aggregate basis (per policy, location or project), ' +
  'the additional-insured and waiver-of-subrogation endorsements by form reference and edition (printed for a holder granted them), primary and non-contributory wording (for an additional-insured holder), ' +
  'and insurers B–F with their NAIC numbers beside the product’s own insurer (A). Certificates issued from then on print it; those already issued keep what they show.';

export function certificateSettingsRoutes(service: CertificateSettingsService): RouteRegistration {
  return (router, registry) => {
    const notFoundResponse = resource.errorResponse('NOT_FOUND: no product with that id in this account');
    const IdParam = resource.idParam('Product line id, integer >= 1', '12');
    resource.idRoute(router, 'get', '/products/:id/certificate_settings', service.getCertificateSettings, 'Certificate settings retrieved');
    resource.idRoute(
      router,
      'patch',
      '/products/:id/certificate_settings',
      service.updateCertificateSettings,
      'Certificate settings updated',
      UpdateCertificateSettingsBody,
    );
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/products/{id}/certificate_settings',
      operationId: 'getCertificateSettings',
      tags: ['Products'],
      summary: 'Get how the product’s certificates describe its coverage (the defaults when never set)',
      description,
      params: IdParam,
      ok: resource.jsonResponse('The setting', envelope(CertificateSettingsRead, 'CertificateSettingsResponse')),
      notFound: notFoundResponse,
    });
    resource.registerIdPath(registry, {
      method: 'patch',
      path: '/api/v1/products/{id}/certificate_settings',
      operationId: 'updateCertificateSettings',
      tags: ['Products'],
      summary: 'Set how the product’s certificates describe its coverage (fields given; the rest keep their value)',
      description: `${description} 400 VALIDATION_ERROR for a malformed form reference or an insurer that did not appoint the account.`,
      params: IdParam,
      body: UpdateCertificateSettingsBody,
      ok: resource.jsonResponse('Updated', envelope(CertificateSettingsRead, 'CertificateSettingsUpdatedResponse')),
      notFound: notFoundResponse,
    });
  };
}
