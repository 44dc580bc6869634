import { createHmac } from 'node:crypto';
import { eventsRepo } from '../../storage/repos/index.js';
import type { ConsentRecordRow, PlatformEventRow } from '../../storage/repos/index.js';
import type { TestAppliance } from './appliance.js';

// Reads of what the audience writes besides its API answers: outbox events, platform events and
// the consent trail, straight from the appliance's database.

export interface StoredEvent {
  type: string;
  data: Record<string, any>;
}

/** The team's outbox events whose type starts with `prefix` (e.g. `contact.`), in order. */
export async function teamEvents(app: TestAppliance, teamId: string, prefix: string): Promise<StoredEvent[]> {
  const rows = await eventsRepo(app.appliance.services.database.db).after(0, 1_000_000);
  return rows.filter((r) => r.team_id === teamId && r.type.startsWith(prefix)).map((r) => ({ type: r.type, data: JSON.parse(r.data) as Record<string, any> }));
}

export async function platformEvents(app: TestAppliance, teamId: string): Promise<(Omit<PlatformEventRow, 'data'> & { data: Record<string, any> })[]> {
  const rows = await app.appliance.services.database.db.selectFrom('platform_events').selectAll().where('team_id', '=', teamId).orderBy('id').execute();
  return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, any> }));
}

export async function consentRecords(app: TestAppliance, teamId: string): Promise<ConsentRecordRow[]> {
  return app.appliance.services.database.db.selectFrom('consent_records').selectAll().where('team_id', '=', teamId).orderBy('id').execute();
}

/** What the appliance's consent trail holds for an address: HMAC-SHA256 of it lower-cased. */
export function consentHashOf(app: TestAppliance, email: string): string {
  return createHmac('sha256', app.appliance.services.secretBox.derive('consent v1')).update(email.trim().toLowerCase()).digest('hex');
}
