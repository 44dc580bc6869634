import { newId } from '../../core/ids.js';
import { openDatabase, type Database } from '../../storage/sql/index.js';
import type { EmailRecipientRow, EmailRow } from '../../storage/repos/index.js';
import type { ReceivedEmailRow } from '../../storage/repos/index.js';
import type { ApiKeyRow, RequestLogRow, TeamRow } from '../../storage/sql/index.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';

// Rows for the PostgreSQL repository tests, and a fresh migrated database per test file.

export interface PgFixture {
  pg: TestDatabase;
  database: Database;
  /** Another pool on the same database: what a second process sees. */
  other(): Promise<Database>;
  close(): Promise<void>;
}

export async function openPgFixture(): Promise<PgFixture> {
  const pg = await createTestDatabase();
  const opened: Database[] = [];
  const open = async () => {
    const database = await openDatabase({ url: pg.url, path: '/nonexistent/svc.sqlite', synchronous: 'FULL' });
    opened.push(database);
    return database;
  };
  const database = await open();
  return {
    pg, database, other: open,
    async close() {
      for (const d of opened) await d.close();
      await pg.drop();
    },
  };
}

export const iso = (ms = Date.now()) => new Date(ms).toISOString();

export const teamRow = (name = 'Team'): TeamRow => ({
  id: newId(), name, slug: null, status: 'active', plan_code: null, sender_name: null, postal_address: null, ai_assist_enabled: null,
  brand_kit: null, trusted_at: null, created_at: iso(), updated_at: null,
});

export const keyRow = (teamId: string, name: string, extra: Partial<ApiKeyRow> = {}): ApiKeyRow => ({
  id: newId(), team_id: teamId, name, public_id: newId(), token_hash: 'hash', permission: 'full_access', domain_id: null,
  inbox_access: 'none', inbox_channel_ids: null, status: 'active', created_at: iso(), last_used_at: null, revoked_at: null, ...extra,
});

export const requestLogRow = (teamId: string, extra: Partial<RequestLogRow> = {}): RequestLogRow => ({
  id: newId(), team_id: teamId, api_key_id: null, created_at: iso(), method: 'GET', endpoint: '/emails/{id}', path: '/emails/abc',
  response_status: 200, user_agent: 'curl/8', source: 'api', request_id: newId(), latency_ms: 3, email_id: null,
  request_body: null, response_body: '{"ok":true}', ...extra,
});

export const emailRow = (teamId: string, extra: Partial<EmailRow> = {}): EmailRow => ({
  id: newId(), team_id: teamId, api_key_id: null, domain_id: newId(), region: 'us-east-1', from_header: 'Ann <ann@example.com>',
  from_email: 'ann@example.com', to_json: '["bob@example.net"]', cc_json: null, bcc_json: null, reply_to_json: null,
  subject: 'Hello', html: null, text: 'hi', headers_json: null, tags_json: null, topic_id: null, template_id: null,
  template_version: null, message_id: `<${newId()}@example.com>`, scheduled_at: null, status: 'dispatched', last_event: 'queued',
  recipients_text: 'bob@example.net', recipient_count: 1, content_hash: 'h', has_unsubscribe: 0, attachment_count: 0,
  created_at: iso(), updated_at: iso(), ...extra,
});

export const recipientRow = (email: EmailRow, idx: number, extra: Partial<EmailRecipientRow> = {}): EmailRecipientRow => ({
  id: newId(), email_id: email.id, team_id: email.team_id, region: email.region, idx, address: `r${idx}@example.net`,
  domain: 'example.net', kind: 'to', state: 'queued', attempts: 0, next_attempt_at: iso(Date.now() - 1000), first_attempt_at: null,
  submitted_at: null, expires_at: null, last_response: null, bounce_type: null, bounce_sub_type: null, updated_at: iso(), ...extra,
});

export const receivedRow = (teamId: string, extra: Partial<ReceivedEmailRow> = {}): ReceivedEmailRow => ({
  id: newId(), team_id: teamId, domain_id: null, created_at: iso(), message_id: '<m@x>', subject: 'Inbound', from_text: 'Zed <zed@x.org>',
  from_address: 'zed@x.org', from_name: 'Zed', to_json: '[]', cc_json: null, bcc_json: null, reply_to_json: null,
  received_for_json: '["in@team.example"]', search_text: 'inbound zed@x.org', headers_json: null, html: null, text: 'body',
  dropped_reason: null, raw_key: null, raw_size: 1234, envelope_from: 'zed@x.org', client_ip: '192.0.2.1', client_helo: 'x.org',
  scan_status: 'clean', scan_signature: null, auth_json: null, ...extra,
});
