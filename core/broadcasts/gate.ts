import type { BroadcastRow } from '../../storage/repos/index.js';
import { segmentsRepo, teamsRepo } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import { parseMailboxes, type CampaignSender } from '../emails/index.js';
import { ServiceError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import type { PublishedContent, TemplateSource } from './ports.js';

// The send gate (spec Broadcasts): a verified sending domain for `from`, a postal address, a live
// segment, marketing sends switched on, a team in good standing, a body. The checklist runs every
// check; a send is refused with the first that fails, before anything is written.

export type GateCheckName = 'domain' | 'postal_address' | 'segment' | 'marketing' | 'standing' | 'body';

export interface GateCheck {
  name: GateCheckName;
  status: 'pass' | 'fail';
  message: string;
}

export interface GateDeps {
  db: Db;
  campaign: CampaignSender;
  /** The operator's switch: true while campaign sends are paused platform-wide. */
  marketingPaused(): boolean;
  templates: TemplateSource;
}

/** What a broadcast sends: its own fields, else its published template's. */
export interface BroadcastContent {
  from: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  /** The template was named but has no published version. */
  templateMissing: boolean;
}

export async function contentOf(templates: TemplateSource, b: BroadcastRow): Promise<BroadcastContent> {
  const template: PublishedContent | undefined = b.template_id ? await templates.published(b.team_id, b.template_id) : undefined;
  return {
    from: b.from_header ?? template?.from ?? null,
    subject: b.subject ?? template?.subject ?? null,
    html: b.html ?? template?.html ?? null,
    text: b.text ?? template?.text ?? null,
    templateMissing: b.template_id !== null && !template,
  };
}

const statusOf = { domain: 422, postal_address: 422, segment: 422, body: 422, marketing: 403, standing: 403 } as const;

export async function runGate(deps: GateDeps, b: BroadcastRow, content: BroadcastContent): Promise<GateCheck[]> {
  const team = await teamsRepo(deps.db).byId(b.team_id);
  const check = (name: GateCheckName, ok: boolean, passed: string, failed: string): GateCheck =>
    ({ name, status: ok ? 'pass' : 'fail', message: ok ? passed : failed });
  const domain = fromDomain(content.from);
  const segment = b.segment_id && looksLikeId(b.segment_id) ? await segmentsRepo(deps.db).byId(b.team_id, b.segment_id) : undefined;
  const hasBody = !!(content.html?.trim() || content.text?.trim());
  return [
    check('domain', !!domain && await deps.campaign.hasSendingDomain(b.team_id, domain), `${domain} is a verified sending domain.`,
      domain ? `The ${domain} domain is not verified. Please add and verify your domain.` : 'The broadcast has no valid `from` address.'),
    check('postal_address', !!team?.postal_address, 'The team has a postal address.', 'The team has no postal address: set one with PATCH /team (`postal_address`).'),
    check('segment', !!segment, 'The segment is live.', b.segment_id ? `Segment \`${b.segment_id}\` not found.` : 'The broadcast names no `segment_id`.'),
    check('marketing', !deps.marketingPaused(), 'Marketing sends are on.', 'Marketing sends are paused on this service: no campaign can be sent now.'),
    check('standing', !!team && team.status !== 'suspended', 'The team is in good standing.', 'The team cannot send mail, so it cannot send a campaign.'),
    check('body', hasBody, 'The broadcast has a body.',
      content.templateMissing ? `Template \`${b.template_id}\` has no published version.` : 'The broadcast has no body: set `html`, `text` or a published template.'),
  ];
}

/** The refusal for the first failing check, or undefined when the gate passes. */
export function gateRefusal(checks: readonly GateCheck[]): ServiceError | undefined {
  const failed = checks.find((c) => c.status === 'fail');
  if (!failed) return undefined;
  const path = { domain: 'from', postal_address: 'postal_address', segment: 'segment_id', body: 'html' }[failed.name as string];
  return new ServiceError(statusOf[failed.name], 'validation_error', failed.message, {
    details: { check: failed.name }, ...(path ? { errors: [{ path, message: failed.message }] } : {}),
  });
}

function fromDomain(from: string | null): string | undefined {
  if (!from) return undefined;
  try {
    const list = parseMailboxes('from', from);
    return list.length === 1 ? list[0]!.domain : undefined;
  } catch {
    return undefined;
  }
}
