import type { Migration } from 'kysely/migration';
import * as m001 from './001_foundation.js';
import * as m002 from './002_events.js';
import * as m003 from './003_domains.js';
import * as m004 from './004_webhooks_suppressions.js';
import * as m006 from './006_received.js';
import * as m005 from './005_emails.js';
import * as m007 from './007_metrics.js';
import * as m008 from './008_auth_generation.js';
import * as m009 from './009_retention.js';
import * as m010 from './010_return_path_tags.js';
import * as m011 from './011_work_items.js';
import * as m012 from './012_audience.js';
import * as m013 from './013_team.js';
import * as m014 from './014_segments.js';
import * as m015 from './015_contact_imports.js';
import * as m017 from './017_queue_tools.js';
import * as m019 from './019_templates.js';
import * as m020 from './020_tracking.js';
import * as m021 from './021_broadcasts.js';
import * as m022 from './022_automations.js';
import * as m023 from './023_outbound_tls.js';
import * as m025 from './025_outbound_leases.js';
import * as m028 from './028_work_claim_index.js';
import * as m029 from './029_engagement.js';
import * as m030 from './030_email_automation.js';
import * as m031 from './031_property_values_clustered.js';
import * as m032 from './032_emails_bulk_partial.js';
import * as m033 from './033_contacts_subscription_index.js';
import * as m034 from './034_consent_hash_erased.js';
import * as m035 from './035_runs_contact_entered.js';
import * as m036 from './036_share_links_email.js';
import * as m037 from './037_recipients_address_unindexed.js';
import * as m038 from './038_property_values_partial.js';

// Numbered, applied in order at start. Written with Kysely's schema builder so the same
// migrations run on SQLite and on PostgreSQL.
export const migrations: Record<string, Migration> = {
  '001_foundation': m001,
  '002_events': m002,
  '003_domains': m003,
  '004_webhooks_suppressions': m004,
  '006_received': m006,
  '005_emails': m005,
  '007_metrics': m007,
  '008_auth_generation': m008,
  '009_retention': m009,
  '010_return_path_tags': m010,
  '011_work_items': m011,
  '012_audience': m012,
  '013_team': m013,
  '014_segments': m014,
  '015_contact_imports': m015,
  '017_queue_tools': m017,
  '019_templates': m019,
  '020_tracking': m020,
  '021_broadcasts': m021,
  '022_automations': m022,
  '023_outbound_tls': m023,
  '025_outbound_leases': m025,
  '028_work_claim_index': m028,
  '029_engagement': m029,
  '030_email_automation': m030,
  '031_property_values_clustered': m031,
  '032_emails_bulk_partial': m032,
  '033_contacts_subscription_index': m033,
  '034_consent_hash_erased': m034,
  '035_runs_contact_entered': m035,
  '036_share_links_email': m036,
  '037_recipients_address_unindexed': m037,
  '038_property_values_partial': m038,
};
