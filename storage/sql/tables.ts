import type { Generated } from 'kysely';
import type { WorkItemRow } from '../repos/work.js';
import type { BulkWarningRow, EmailAttachmentRow, EmailAttemptRow, EmailRecipientRow, EmailRow, EmailShareLinkRow, EmailTagRow, IdempotencyKeyRow } from '../repos/emails-tables.js';
import type { DkimKeyRow, DomainClaimRow, DomainRow } from '../repos/domains-tables.js';
import type { SuppressionRow } from '../repos/suppressions-tables.js';
import type { ReceivedAttachmentRow, ReceivedEmailRow, ReceivedReportRow, ReceivedUsageRow } from '../repos/received-tables.js';
import type { OutboxCursorRow, WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from '../repos/webhooks-tables.js';
import type { BrandKitUploadRow, TeamMemberRow, TeamUsageRow } from '../repos/team-tables.js';
import type { ConsentRecordRow, ContactPropertyRow, ContactPropertyValueRow, ContactRow, ContactTopicRow, PlatformEventRow, TopicRow } from '../repos/contacts-tables.js';
import type { SegmentMemberRow, SegmentRow } from '../repos/segments-tables.js';
import type { ContactImportFailureRow, ContactImportRow } from '../repos/contact-imports-tables.js';
import type { MtaStsPolicyRow, TlsRptCountRow, TlsRptReportRow } from '../repos/outbound-tls-tables.js';
import type { SavedBlockRow, TemplateRow, TemplateVersionRow } from '../repos/templates-tables.js';
import type { BroadcastLinkClickRow, BroadcastLinkRow, BroadcastRecipientRow, BroadcastRecipientMarkRow, BroadcastRow } from '../repos/broadcasts-tables.js';
import type {
  AutomationExitEventRow, AutomationRow, AutomationRunRow, AutomationRunStepRow, AutomationVersionRow, CustomEventRow, EventDefinitionRow, StoreBrowserRow,
} from '../repos/automations-tables.js';
import type { MetricsDomainRow, MetricsEmailMarkRow, MetricsEmailMinuteRow, MetricsMinuteRow, MetricsQuarterRow } from '../repos/metrics-tables.js';

// Row types of every table, as Kysely sees them. One interface per table.

export interface TeamRow {
  id: string;
  name: string;
  /** Made once from the name at creation; a rename keeps it. Null only for a row written without it (read as made from the name). */
  slug: string | null;
  /** The risk state's truth: authentication refuses a suspended team's keys. */
  status: 'active' | 'suspended';
  /** null: the `default` plan. */
  plan_code: string | null;
  sender_name: string | null;
  /** JSON: the postal address ({line1, line2, city, state, postal_code, country}). */
  postal_address: string | null;
  /** 1: on; 0 or null: off. */
  ai_assist_enabled: number | null;
  /** JSON: the brand kit fields the team set; the others are defaults. */
  brand_kit: string | null;
  /** The operator's review (sending tier 3). */
  trusted_at: string | null;
  created_at: string;
  updated_at: string | null;
}

/** Team columns added after the first migration, read by their own areas. */
export interface TeamSettingsColumns {
  /** 1: delivered recipients who are not contacts become never_subscribed contacts (rule 4). */
  audience_from_sends: Generated<number>;
}

export interface ApiKeyRow {
  id: string;
  team_id: string;
  name: string;
  public_id: string;
  token_hash: string;
  permission: 'full_access' | 'sending_access';
  domain_id: string | null;
  inbox_access: 'none' | 'create' | 'read' | 'write';
  /** JSON array of channel ids, or null for every open channel. */
  inbox_channel_ids: string | null;
  status: 'active' | 'revoked' | 'suspended';
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface RequestLogRow {
  id: string;
  team_id: string;
  api_key_id: string | null;
  created_at: string;
  method: string;
  /** The route template, e.g. /emails/{id}. */
  endpoint: string;
  /** The path as requested, e.g. /emails/0193…; searched so an id finds requests naming it. */
  path: string;
  response_status: number;
  user_agent: string | null;
  source: string;
  request_id: string;
  latency_ms: number;
  email_id: string | null;
  request_body: string | null;
  response_body: string | null;
}

export interface EventRow {
  /** Reading order for consumers (dispatcher, rollups); assigned by the database. */
  seq: Generated<number>;
  id: string;
  team_id: string;
  type: string;
  created_at: string;
  /** JSON: the event's `data`. */
  data: string;
}

export interface DatabaseSchema {
  emails: EmailRow;
  email_recipients: EmailRecipientRow;
  email_attempts: EmailAttemptRow;
  email_tags: EmailTagRow;
  email_attachments: EmailAttachmentRow;
  email_share_links: EmailShareLinkRow;
  idempotency_keys: IdempotencyKeyRow;
  bulk_warnings: BulkWarningRow;
  rejected_addresses: { address: string; team_id: string; rejected_at: string };
  appliance_facts: { name: string; value: string };
  work_items: WorkItemRow;
  teams: TeamRow & TeamSettingsColumns;
  team_members: TeamMemberRow;
  team_usage: TeamUsageRow;
  brand_kit_uploads: BrandKitUploadRow;
  api_keys: ApiKeyRow;
  auth_generation: { id: number; value: number };
  request_logs: RequestLogRow;
  events: EventRow;
  domains: DomainRow;
  domain_dkim_keys: DkimKeyRow;
  domain_claims: DomainClaimRow;
  suppressions: SuppressionRow;
  webhook_endpoints: WebhookEndpointRow;
  webhook_deliveries: WebhookDeliveryRow;
  webhook_attempts: WebhookAttemptRow;
  outbox_cursors: OutboxCursorRow;
  received_emails: ReceivedEmailRow;
  received_attachments: ReceivedAttachmentRow;
  received_usage: ReceivedUsageRow;
  received_reports: ReceivedReportRow;
  metrics_minutes: MetricsMinuteRow;
  metrics_quarters: MetricsQuarterRow;
  metrics_email_minutes: MetricsEmailMinuteRow;
  metrics_email_marks: MetricsEmailMarkRow;
  metrics_domains: MetricsDomainRow;
  contacts: ContactRow;
  contact_properties: ContactPropertyRow;
  contact_property_values: ContactPropertyValueRow;
  topics: TopicRow;
  contact_topics: ContactTopicRow;
  consent_records: ConsentRecordRow;
  platform_events: PlatformEventRow;
  segments: SegmentRow;
  segment_members: SegmentMemberRow;
  contact_imports: ContactImportRow;
  contact_import_failures: ContactImportFailureRow;
  mta_sts_policies: MtaStsPolicyRow;
  tls_rpt_counts: TlsRptCountRow;
  tls_rpt_reports: TlsRptReportRow;
  templates: TemplateRow;
  template_versions: TemplateVersionRow;
  saved_blocks: SavedBlockRow;
  broadcasts: BroadcastRow;
  broadcast_recipients: BroadcastRecipientRow;
  broadcast_links: BroadcastLinkRow;
  broadcast_link_clicks: BroadcastLinkClickRow;
  broadcast_recipient_marks: BroadcastRecipientMarkRow;
  event_definitions: EventDefinitionRow;
  custom_events: CustomEventRow;
  store_browsers: StoreBrowserRow;
  automations: AutomationRow;
  automation_versions: AutomationVersionRow;
  automation_exit_events: AutomationExitEventRow;
  automation_runs: AutomationRunRow;
  automation_run_steps: AutomationRunStepRow;
}
