/**
 * The accounts domain's plain types: root accounts (agencies, MGAs, insurers), their agents and
 * the agents as the agency portal signs them in (teammates with a portal role). The repository
 * returns them and the service hands them on; callers outside the domain import them from here.
 */

export type RootAccountKind = 'agency' | 'mga' | 'insurer';

export interface RootAccount {
  id: number;
  slug: string;
  name: string;
  kind: RootAccountKind;
  checkoutSuccessUrl: string | null;
  checkoutCancelUrl: string | null;
}

/** What a teammate may do in the agency portal: `admin` changes, `viewer` only reads. */
export type PortalRole = 'admin' | 'viewer';

export interface Agent {
  id: number;
  rootAccountId: number;
  name: string;
  email: string;
}

/** A teammate as the portal signs them in: the agent, their identity-provider id and portal role. */
export interface Teammate extends Agent {
  idpTeammateUuid: string;
  portalRole: PortalRole;
}

/**
 * The account as its own API key (or its portal) may see it: the root account, its public
 * `idp_root_account_uuid`, and its teammates (public `idp_teammate_uuid`, name, email), oldest first.
 */
export interface AccountProfile extends RootAccount {
  idpRootAccountUuid: string;
  /** Email the buyer the proof of coverage once a purchase is issued (on unless turned off). */
  sendBuyerEmailAfterPayment: boolean;
  teammates: Array<{ id: number; idpTeammateUuid: string; name: string; email: string }>;
}
