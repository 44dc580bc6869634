import { setAudienceFromSends, teamsRepo, type TeamPatch } from '../../storage/repos/index.js';
import { inTransaction, type Db, type TeamRow } from '../../storage/sql/index.js';
import { ServiceError, validationError } from '../errors.js';
import type { Principal } from '../principal.js';
import { parsePostalAddress, type PostalAddressInput } from './address.js';
import { parseBrandKit, type BrandKitInput } from './brand-kit.js';
import { oneLine } from './text.js';

// PATCH /team: every field optional, at least one; all are checked before anything is written,
// and what is written is written in one transaction.

export interface TeamPatchInput {
  name?: string;
  sender_name?: string | null;
  postal_address?: PostalAddressInput;
  ai_assist_enabled?: boolean;
  audience_from_sends?: boolean;
  brand_kit?: BrandKitInput | null;
}

const patchFields = ['name', 'sender_name', 'postal_address', 'ai_assist_enabled', 'audience_from_sends', 'brand_kit'] as const;

export interface ProfileDeps {
  db: Db;
  /** Whether an AI provider is configured (config `ai_provider_url`). */
  aiConfigured: boolean;
  /** The `brand_kit.logo_url` sent, when it is one of the team's own hosted uploads. */
  hostedLogo?: string;
}

/** The checked change: the columns to write, and audience_from_sends (a column of its own). */
interface CheckedPatch {
  columns: TeamPatch;
  audienceFromSends?: boolean;
}

export function checkPatch(deps: ProfileDeps, team: TeamRow, caller: Principal, input: TeamPatchInput): CheckedPatch {
  const given = patchFields.filter((f) => input[f] !== undefined);
  if (given.length === 0) throw validationError(422, undefined, `Send at least one of ${patchFields.join(', ')}.`);
  // Renaming needs a team admin: a full_access key is one; an OAuth token never is (spec).
  if (input.name !== undefined && caller.kind === 'oauth_token') {
    throw new ServiceError(403, 'invalid_permission', 'Renaming the team needs a team admin; an OAuth token cannot.');
  }
  const columns: TeamPatch = {};
  if (input.name !== undefined) columns.name = oneLine('name', typeof input.name === 'string' ? input.name.trim() : input.name, 80, 1);
  if (input.postal_address !== undefined) columns.postal_address = JSON.stringify(parsePostalAddress(input.postal_address));
  if (input.sender_name !== undefined) {
    columns.sender_name = input.sender_name === null ? null : oneLine('sender_name', input.sender_name, 200).trim() || null;
    if (columns.sender_name !== null && team.postal_address === null && columns.postal_address === undefined) {
      throw validationError(422, 'sender_name', 'Send the team\'s `postal_address` first (or with it): a sender name needs a postal address.');
    }
  }
  if (input.brand_kit !== undefined) {
    const kit = parseBrandKit(input.brand_kit, deps.hostedLogo);
    columns.brand_kit = Object.keys(kit).length ? JSON.stringify(kit) : null;
  }
  if (input.ai_assist_enabled !== undefined) {
    if (typeof input.ai_assist_enabled !== 'boolean') throw validationError(422, 'ai_assist_enabled', '`ai_assist_enabled` must be true or false.');
    if (input.ai_assist_enabled && !deps.aiConfigured) {
      throw new ServiceError(503, 'service_unavailable', 'AI assist is not configured on this appliance, so it cannot be turned on (the operator sets `ai_provider_url`).');
    }
    columns.ai_assist_enabled = input.ai_assist_enabled ? 1 : 0;
  }
  const checked: CheckedPatch = { columns };
  if (input.audience_from_sends !== undefined) {
    if (typeof input.audience_from_sends !== 'boolean') throw validationError(422, 'audience_from_sends', '`audience_from_sends` must be true or false.');
    checked.audienceFromSends = input.audience_from_sends;
  }
  return checked;
}

/** Writes a checked change in one transaction; answers the names of the fields that changed (for the log). */
export async function writePatch(db: Db, team: TeamRow, patch: CheckedPatch, at: string): Promise<string[]> {
  const audience = patch.audienceFromSends;
  const changed: string[] = (Object.keys(patch.columns) as (keyof TeamPatch)[]).filter((k) => patch.columns[k] !== team[k]);
  if (audience !== undefined) changed.push('audience_from_sends');
  await inTransaction(db, async (trx) => {
    if (Object.keys(patch.columns).length > 0) await teamsRepo(trx).update(team.id, { ...patch.columns, updated_at: at });
    if (audience !== undefined) await setAudienceFromSends(trx, team.id, audience);
  });
  return changed;
}
