import type { Principal, Permission } from '../core/api-keys/index.js';
import type { ApiKeysService } from '../core/api-keys/index.js';
import type { Readiness } from '../core/health.js';
import type { Logger } from '../core/logger.js';
import type { RateLimiter } from '../core/rate-limit.js';
import type { RequestLogsService } from '../core/request-logs/index.js';
import type { RequestLogWriter } from '../core/request-logs/index.js';
import type { BrandKitUploadsService, MembersService, TeamService, TeamsService } from '../core/team/index.js';
import type { Clock } from '../core/clock.js';
import type { SuppressionsService } from '../core/suppressions/index.js';
import type { ContactPropertiesService, ContactsService } from '../core/contacts/index.js';
import type { TopicsService } from '../core/topics/index.js';
import type { PreferencesService } from '../core/preferences/index.js';
import type { SegmentsService } from '../core/segments/index.js';
import type { ContactImportsService } from '../core/contact-imports/index.js';
import type { EmailsService } from '../core/emails/index.js';
import type { EmailShares } from '../core/emails/index.js';
import type { QueueAdmin, TraceHub } from '../core/emails/index.js';
import type { WebhooksService } from '../core/webhooks/index.js';
import type { DomainsService } from '../core/domains/index.js';
import type { ReceivingService } from '../core/receiving/index.js';
import type { MetricsService } from '../core/metrics/index.js';
import type { BackupService } from '../core/backup.js';
import type { SavedBlocksService, TemplateSends, TemplatesService } from '../core/templates/index.js';
import type { TrackingService } from '../core/tracking/index.js';
import type { BroadcastsService } from '../core/broadcasts/index.js';
import type { EventsService } from '../core/events/index.js';
import type { AutomationsService } from '../core/automations/index.js';
import type { DnsCheckOptions, DnsCheckReport } from '../dns/self-check.js';

/**
 * Everything the HTTP layer uses, built once by the entry point and passed in: the contract layer's
 * own parts (identity, auth, rate limits, the request log, readiness) and the core services by area.
 */
export interface ApiDeps {
  version: string;
  env: string;
  clock: Clock;
  logger: Logger;
  bodyLimitBytes: number;
  trustProxy: boolean;
  /** The caller, if its credential reaches an operation needing this permission (or OAuth scope). */
  authenticate(authorization: string | undefined, needed: Permission, scope: string | null): Promise<Principal>;
  rateLimit: RateLimiter;
  /** Per client address, for the public routes (signed downloads, share pages). */
  publicRateLimit: RateLimiter;
  logWriter: RequestLogWriter;
  readiness(): Promise<Readiness>;
  foundation: FoundationServices;
  audience: AudienceServices;
  content: ContentServices;
  sending: SendingServices;
  campaigns: CampaignServices;
  inbox: InboxServices;
}

// The core services the HTTP layer calls, by area (the tiers of docs/architecture.md).

export interface FoundationServices {
  apiKeys: ApiKeysService;
  /** The operator's team registry (admin socket): create, plans, suspension, trust. */
  teams: TeamsService;
  requestLogs: RequestLogsService;
  /** `svc admin backup`: the online backup of the database and the spool (admin socket only). */
  backup: BackupService;
  /** `svc admin check dns`: the appliance's own DNS and port 25, as the Internet sees them (admin socket only). */
  checkDns(options: DnsCheckOptions): Promise<DnsCheckReport>;
}

export interface AudienceServices {
  suppressions: SuppressionsService;
  /** The team as its keys see it: GET/PATCH /team, its plan, standing and usage. */
  team: TeamService;
  members: MembersService;
  /** Contacts, their topic choices and erasure. */
  contacts: ContactsService;
  /** Declared contact properties (`/contact-properties`). */
  contactProperties: ContactPropertiesService;
  topics: TopicsService;
  /** Segments and a contact's explicit memberships. */
  segments: SegmentsService;
  /** Brand kit images: uploaded through the API, served on the public router. */
  brandKitUploads: BrandKitUploadsService;
  /** A contact's unsubscribe and preference links and their public pages. */
  preferences: PreferencesService;
  /** CSV imports of contacts (`/contacts/imports`); their rows are the durable worker's. */
  contactImports: ContactImportsService;
}

export interface ContentServices {
  templates: TemplatesService;
  /** Templates rendered: previews and checks (sends reach them through the emails service). */
  templateSends: TemplateSends;
  /** The team's reusable blocks and sections (`/saved-blocks`), copied into the templates using them. */
  savedBlocks: SavedBlocksService;
}

export interface SendingServices {
  emails: EmailsService;
  /** Share links and sent attachments of emails. */
  shares: EmailShares;
  domains: DomainsService;
  webhooks: WebhooksService;
  metrics: MetricsService;
  /** The operator's queue tools (admin socket only). */
  queue: QueueAdmin;
  /** Live delivery attempts for `svc admin trace` (admin socket only). */
  traces: TraceHub;
  /** Open and click hits on the tracking routes (api/public/tracking.ts). */
  tracking: TrackingService;
}

export interface CampaignServices {
  /** Broadcasts: drafts, the send gate and content checks, recipients. */
  broadcasts: BroadcastsService;
  /** Custom event definitions and POST /events/send. */
  events: EventsService;
  /** Automations, their versions and runs. */
  automations: AutomationsService;
}

export interface InboxServices {
  receiving: ReceivingService;
}
