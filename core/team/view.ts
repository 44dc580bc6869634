import type { TeamRow } from '../../storage/sql/index.js';
import type { RegionDirectory } from '../regions.js';
import type { PostalAddress } from './address.js';
import { brandKitView, type BrandKit } from './brand-kit.js';
import type { Plan } from './plans.js';
import { slugBase } from './slug.js';
import { riskStateOf, sendingStanding, type RiskState, type SendingStanding } from './standing.js';

// Spelled out rather than a mapped type: tsoa's document for a mapped type puts a description
// beside a $ref. The spec's five; the contacts limit is the billing object's.
/** The plan's limits; null: no such limit. */
export interface TeamPlanLimits {
  included_emails: number | null;
  daily_cap: number | null;
  domain_limit: number | null;
  webhook_endpoint_limit: number | null;
  retention_days: number | null;
}

/** The spec's team object (GET /team, PATCH /team). */
export interface TeamView {
  object: 'team';
  id: string;
  name: string;
  slug: string;
  created_at: string;
  risk_state: RiskState;
  plan: { code: string; name: string; limits: TeamPlanLimits };
  sender_identity: { sender_name: string | null; postal_address: PostalAddress | null };
  ai_assist_enabled: boolean;
  audience_from_sends: boolean;
  brand_kit: BrandKit;
  sending: SendingStanding;
  /** Single sign-on is configured in a console svc does not have: always null. */
  sso: null;
}

export interface ViewFacts {
  plan: Plan;
  hasSendingDomain: boolean;
  audienceFromSends: boolean;
  regions: RegionDirectory;
}

export function teamView(row: TeamRow, facts: ViewFacts): TeamView {
  const { included_emails, daily_cap, domain_limit, webhook_endpoint_limit, retention_days } = facts.plan.limits;
  return {
    object: 'team',
    id: row.id,
    name: row.name,
    slug: row.slug ?? slugBase(row.name),
    created_at: row.created_at,
    risk_state: riskStateOf(row),
    plan: { code: facts.plan.code, name: facts.plan.name, limits: { included_emails, daily_cap, domain_limit, webhook_endpoint_limit, retention_days } },
    sender_identity: {
      sender_name: row.sender_name,
      postal_address: row.postal_address ? (JSON.parse(row.postal_address) as PostalAddress) : null,
    },
    ai_assist_enabled: row.ai_assist_enabled === 1,
    audience_from_sends: facts.audienceFromSends,
    brand_kit: brandKitView(row.brand_kit),
    sending: sendingStanding(row, facts.plan, facts.hasSendingDomain, facts.regions),
    sso: null,
  };
}

/** What the operator sees of a team (`svc admin team list|show`). */
export interface TeamSummary {
  object: 'team';
  id: string;
  name: string;
  slug: string;
  status: TeamRow['status'];
  risk_state: RiskState;
  plan: string;
  trusted: boolean;
  created_at: string;
}

export const teamSummary = (row: TeamRow, plan: Plan): TeamSummary => ({
  object: 'team', id: row.id, name: row.name, slug: row.slug ?? slugBase(row.name), status: row.status, risk_state: riskStateOf(row),
  plan: plan.code, trusted: row.trusted_at !== null, created_at: row.created_at,
});
