// Row types of the domains area (migration 003). Kept beside the repo; tables.ts lists them.

export type CapabilityState = 'enabled' | 'disabled';

export interface DomainRow {
  id: string;
  team_id: string;
  /** Lower-case A-label form (punycode for IDNs). */
  name: string;
  region: string;
  sending: CapabilityState;
  receiving: CapabilityState;
  open_tracking: number;
  click_tracking: number;
  tls: 'opportunistic' | 'enforced';
  /** Label of the MAIL FROM (bounce) host under the domain, `send` by default. */
  custom_return_path: string;
  tracking_subdomain: string;
  /** `@` (the domain itself) or a label under it. */
  receiving_host: string;
  /** The name mail is received for: the domain, or receiving_host under it. */
  receiving_name: string;
  /** Domain status as last computed from the records (see core/domains/status.ts). */
  status: string;
  /** JSON: record key → {status, checked_at, verified_at}. */
  record_states: string;
  /** 1 when mail may be sent from it: held by the team, sending on, DKIM and MAIL FROM verified. */
  sending_ready: number;
  /** Set when the ownership proof (the DKIM record) first verified: from then on the team holds the name. */
  owner_verified_at: string | null;
  /** Set when another team claimed the name; this copy is then kept for the record but never used. */
  released_at: string | null;
  last_checked_at: string | null;
  /** Sealed DNS provider token kept with `keep_token`. */
  provider_token: string | null;
  created_at: string;
  updated_at: string;
}

export type DkimKeyState = 'pending' | 'active' | 'retiring';

export interface DkimKeyRow {
  id: string;
  domain_id: string;
  selector: string;
  /** Base64 of the DER SubjectPublicKeyInfo: the `p=` value. */
  public_key: string;
  /** PKCS#8 PEM, sealed with the secret box. */
  private_key_sealed: string;
  state: DkimKeyState;
  created_at: string;
  activated_at: string | null;
  /** For a retiring key: when its record may go and the key is deleted. */
  retire_at: string | null;
}

export type ClaimStatus = 'pending' | 'completed' | 'expired' | 'canceled' | 'failed';

export interface DomainClaimRow {
  /** Also the id the claimed domain gets in the claiming team. */
  id: string;
  team_id: string;
  name: string;
  region: string;
  custom_return_path: string;
  open_tracking: number;
  click_tracking: number;
  tracking_subdomain: string;
  /** The value published at the root: `svc-domain-verification=<token>`. */
  token: string;
  status: ClaimStatus;
  failure_reason: string | null;
  /** The other team's copy at the time of the claim. */
  previous_domain_id: string | null;
  domain_id: string | null;
  created_at: string;
  expires_at: string;
  completed_at: string | null;
  last_checked_at: string | null;
}
