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

/**
 * An insurer or MGA root account as a party to the agencies it appoints (issue 49): its NAIC
 * company code (insurer) or register number (MGA), null when none was given.
 */
export interface PartyAccount {
  id: number;
  slug: string;
  name: string;
  kind: Exclude<RootAccountKind, 'agency'>;
  registerNumber: string | null;
}

/**
 * What a teammate may do in the agency portal: `admin` changes, `viewer` only reads, `adjuster`
 * reads and, in an insurer's or MGA's account, decides the claims of the products naming it.
 */
export type PortalRole = 'admin' | 'viewer' | 'adjuster';

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
/**
 * The agency's producer block as certificates print it (issue 50, item 1; wire names, null when
 * unset): its postal address, phone, email and licence number.
 */
export interface ProducerProfile {
  address: { line1: string; line2?: string; city: string; region: string; postal_code: string; country: string } | null;
  phone: string | null;
  email: string | null;
  licence_number: string | null;
}

/** A producer block with nothing set. */
export const EMPTY_PRODUCER_PROFILE: ProducerProfile = { address: null, phone: null, email: null, licence_number: null };

export interface AccountProfile extends RootAccount {
  idpRootAccountUuid: string;
  /** The producer block its certificates print (every field null until set). */
  producer: ProducerProfile;
  /** Email the buyer the proof of coverage once a purchase is issued (on unless turned off). */
  sendBuyerEmailAfterPayment: boolean;
  /** An insurer's or MGA's: where its adjusters are emailed each claim filed on a product naming it (null: nobody). */
  claimsNotificationEmail: string | null;
  /** Years an erased buyer's names are kept after the policy's last coverage ends (1 to 30, default 7). */
  personalDataRetentionYears: number;
  teammates: Array<{ id: number; idpTeammateUuid: string; name: string; email: string }>;
}
