import type { Config } from '../config/schema.js';
import type { Db } from '../storage/sql/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import {
  automationRunWork, automationsService, enroller, graphCache, platformStreamWork, publishedTemplateSender,
} from '../core/automations/index.js';
import { contactWritesIn, type ConsentHasher, type ContactLimitOf } from '../core/contacts/index.js';
import type { EmailsService } from '../core/emails/index.js';
import { eventsService } from '../core/events/index.js';
import type { PreferencesService } from '../core/preferences/index.js';
import type { TemplateSends } from '../core/templates/index.js';
import type { WorkHandler } from '../core/work/index.js';
import type { CampaignServices } from '../api/deps.js';

// The campaigns tier's wiring: custom events, automations, and the durable work they run on (the
// runs and the platform stream's reader). send_email steps send the content tier's published
// templates (core/automations/template-sender.ts).

export interface CampaignsInput {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  emails: EmailsService;
  preferences: PreferencesService;
  consentHash: ConsentHasher;
  contactLimit: ContactLimitOf;
  /** Published templates, rendered per contact for send_email steps. */
  templateSends: TemplateSends;
  /** Tells the work runners, in whatever process, that runs were enrolled. */
  wakeWork: () => void;
}

export interface Campaigns {
  services: Omit<CampaignServices, 'broadcasts'>;
  handlers: WorkHandler<any, any>[];
}

/** Platform events younger than this wait for the next read (ids are minted before their commit). */
const streamSettleMs = 1_000;

export function campaignsArea(input: CampaignsInput): Campaigns {
  const { db, clock, logger } = input;
  const graphs = graphCache();
  const templates = publishedTemplateSender({
    db,
    sends: input.templateSends,
    stage: (caller, send, origin) => input.emails.stage(caller, send, origin),
    linksFor: (contact) => input.preferences.linksFor(contact),
  });
  const contacts = contactWritesIn({ clock, hash: input.consentHash, contactLimit: input.contactLimit });
  const enrol = enroller({ logger, graphs });
  return {
    services: {
      events: eventsService({ db, clock, logger, enrol, wakeWork: input.wakeWork }),
      automations: automationsService({ db, clock, logger, templates, graphs }),
    },
    handlers: [
      automationRunWork({ db, clock, logger, graphs, templates, contacts }),
      platformStreamWork(enrol, db, { batch: 200, idleMs: input.config.work_poll_ms, settleMs: streamSettleMs, wallNow: () => Date.now() }),
    ],
  };
}
