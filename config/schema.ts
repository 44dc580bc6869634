// The one list of svc's settings. Every key: its type, its default, one line of doc.
// A file (path from SVC_CONFIG, JSON) sets keys by these names; the environment overrides them
// as SVC_<KEY IN UPPER CASE>.

export type KeySpec =
  | { type: 'string'; default: string; doc: string; secret?: boolean; hostname?: boolean }
  | { type: 'int'; default: number; doc: string; min?: number; max?: number }
  | { type: 'bool'; default: boolean; doc: string }
  | { type: 'enum'; default: string; doc: string; values: readonly string[] }
  | { type: 'list'; default: readonly string[]; doc: string }
  | { type: 'regions'; default: RegionOverrides; doc: string }
  | { type: 'plans'; default: readonly PlanSpec[]; doc: string };

import type { RegionOverrides } from './regions.js';
import type { PlanSpec } from './plans.js';

export const schema = {
  data_dir: { type: 'string', default: './data', doc: 'Folder for SQLite, the spool, the admin socket and the private Redis.' },
  env: { type: 'string', default: 'production', doc: 'Deployment name reported by /health and /ready.' },
  log_level: { type: 'enum', default: 'info', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], doc: 'pino log level.' },

  http_host: { type: 'string', default: '127.0.0.1', doc: 'Address the HTTP API listens on (put a TLS reverse proxy in front for the public).' },
  http_port: { type: 'int', default: 3000, min: 0, max: 65535, doc: 'Port of the HTTP API (0 picks a free port).' },
  http_body_limit_mb: { type: 'int', default: 50, min: 1, max: 200, doc: 'Largest request body accepted, in MiB.' },
  http_trust_proxy: { type: 'bool', default: false, doc: 'Trust X-Forwarded-For from a reverse proxy in front of the API.' },
  admin_socket: { type: 'string', default: '', doc: 'Path of the operator socket (mode 0600); empty means <data_dir>/admin.sock.' },
  ops_metrics_port: { type: 'int', default: 0, min: 0, max: 65535, doc: 'TCP port of the operator\'s GET /metrics (the exposition a metrics scraper reads), served by the api role beside the admin socket\'s; 0: off, the admin socket only.' },
  ops_metrics_host: { type: 'string', default: '127.0.0.1', doc: 'Address the ops_metrics_port listener binds; /metrics has no authentication, so keep it on loopback or a private network.' },
  ops_metrics_domain_labels: { type: 'int', default: 20, min: 0, max: 1000, doc: 'Destination domains a process gives a label of their own in the delivery metrics (the first ones it delivers to); later ones count under "other", so a scrape stays small.' },

  smtp_host: { type: 'string', default: '0.0.0.0', doc: 'Address the inbound SMTP listener binds.' },
  smtp_port: { type: 'int', default: 25, min: 0, max: 65535, doc: 'Port of the inbound SMTP listener.' },

  redis_url: { type: 'string', default: '', secret: true, doc: 'Redis URL; empty runs a private redis-server on a socket in the data folder.' },
  redis_server_bin: { type: 'string', default: 'redis-server', doc: 'redis-server executable used for the private Redis.' },
  redis_command_timeout_ms: { type: 'int', default: 2000, min: 50, doc: 'Longest wait for one Redis command before it counts as failed.' },

  database_url: { type: 'string', default: '', secret: true, doc: 'Database; empty is the SQLite file in data_dir, a postgres:// or postgresql:// URL uses that PostgreSQL database instead (docs/operations.md).' },

  dns_servers: { type: 'list', default: [], doc: 'Comma-separated host[:port] resolvers for every DNS lookup; empty uses the system resolvers.' },

  sqlite_synchronous: { type: 'enum', default: 'FULL', values: ['FULL', 'NORMAL'], doc: 'SQLite synchronous mode; FULL fsyncs every commit (the durability promise needs it).' },

  rate_limit_per_second: { type: 'int', default: 10, min: 1, doc: 'Team token bucket refill per second (the spec says 10).' },
  rate_limit_burst: { type: 'int', default: 10, min: 1, doc: 'Team token bucket capacity (the spec says 10).' },
  public_rate_limit_per_second: { type: 'int', default: 20, min: 1, doc: 'Refill per second of the token bucket each client address spends on the public routes (signed downloads, share pages); IPv6 clients share one per /64.' },
  public_rate_limit_burst: { type: 'int', default: 40, min: 1, doc: 'Capacity of that per-client bucket: requests a client may make at once on the public routes before 429.' },

  logs_retention_days: { type: 'int', default: 30, min: 1, doc: 'Days request logs are kept before the pruning job deletes them.' },
  logs_flush_ms: { type: 'int', default: 200, min: 1, max: 10000, doc: 'Request logs are written in batches at most this often.' },

  secret_key_file: { type: 'string', default: '', doc: 'File holding the key that seals DKIM private keys and provider tokens at rest; empty means <data_dir>/secret.key (created on first start).' },
  dns_timeout_ms: { type: 'int', default: 3000, min: 100, max: 30000, doc: 'Longest wait for one DNS answer before trying again.' },
  dns_cache_ttl_s: { type: 'int', default: 300, min: 0, max: 86400, doc: 'Seconds a DNS answer used for delivery is cached in Redis (verification never uses the cache). Recipient checks and the checks of received mail keep answers in their process for the smaller of this and 10 s.' },
  mail_hostname: { type: 'string', default: '', hostname: true, doc: 'Public DNS name of this host, fully qualified (EHLO, MX and MAIL FROM targets); empty uses the system host name, which must then be fully qualified too.' },
  mail_from_records: { type: 'enum', default: 'cname', values: ['cname', 'mx_txt'], doc: 'MAIL FROM records given to domains: a CNAME to the region host, or an MX plus an SPF TXT.' },
  domains_recheck_cron: { type: 'string', default: '23 */6 * * *', doc: 'node-cron schedule of the re-check of every domain\'s DNS records (drift, DKIM retirement, pending claims).' },
  domains_verify_window_hours: { type: 'int', default: 72, min: 1, max: 8760, doc: 'Hours after a domain is added that a record never seen stays pending; after that it shows failed (and is still re-checked).' },
  dkim_rotation_grace_hours: { type: 'int', default: 48, min: 0, max: 8760, doc: 'Hours a replaced DKIM key stays published and listed after the new key took over, for mail still in flight.' },
  cloudflare_api_url: { type: 'string', default: 'https://api.cloudflare.com/client/v4', doc: 'Base URL of Cloudflare\'s v4 API, used by domain autoconfiguration.' },
  regions: { type: 'regions', default: {}, doc: 'Per-region overrides (JSON object keyed by region): mail_from_host, inbound_host, tracking_host, ehlo_name, source_address, concurrency, per_domain_connections, receiving, sandbox.' },

  webhooks_allow_private: { type: 'bool', default: false, doc: 'Let webhook endpoints resolve to loopback, private (RFC 1918, fc00::/7) and CGNAT addresses, for on-premise receivers; link-local, metadata and unresolvable names stay refused.' },
  webhooks_timeout_ms: { type: 'int', default: 15000, min: 100, max: 120000, doc: 'Longest one webhook request may take (connect, answer and body) before the attempt counts as failed.' },
  webhooks_endpoint_concurrency: { type: 'int', default: 4, min: 1, max: 100, doc: 'Webhook requests in flight to one endpoint at most; a slow endpoint never holds up another.' },
  webhooks_poll_ms: { type: 'int', default: 500, min: 10, max: 60000, doc: 'How often the webhook dispatcher (jobs role) looks for new events and due retries.' },
  webhooks_retention_days: { type: 'int', default: 30, min: 1, max: 3650, doc: 'Days delivered and failed webhook messages (and their attempts) are kept before the pruning job deletes them.' },
  events_retention_days: { type: 'int', default: 30, min: 1, max: 3650, doc: 'Days an outbox event is kept once the webhook dispatcher and the metrics rollup have read it; an event a webhook message still refers to (for retries and replays) is kept until that message is pruned.' },
  outbound_regions: { type: 'list', default: [], doc: 'Regions whose outbound queues this process serves (comma-separated); empty serves every region. Several processes with data folders of their own, on one PostgreSQL and Redis, may serve one region (docs/operations.md, Running a second node).' },
  outbound_sign_threads: { type: 'int', default: -1, min: -1, max: 16, doc: 'Worker threads that compose and DKIM-sign outbound mail; -1 is one per spare core (at most 4), 0 signs on the main thread.' },
  outbound_relay: { type: 'string', default: '', doc: 'Smarthost (host:port) every outbound message is relayed through instead of the recipient\'s MX; empty delivers directly.' },
  outbound_port: { type: 'int', default: 25, min: 1, max: 65535, doc: 'TCP port of the recipient MX hosts outbound mail connects to (25; test rigs may listen elsewhere).' },
  outbound_retry_jitter_percent: { type: 'int', default: 10, min: 0, max: 50, doc: 'Each retry delay of a deferred recipient (1, 5, 15, 30 minutes, 1, 2, 4, 8 hours) is shortened by a random amount of up to this percentage (never lengthened: the schedule stays the latest a retry comes), so mail deferred together does not come back in one burst; 0: the schedule exactly.' },
  outbound_tls_ca_file: { type: 'string', default: '', doc: 'PEM file of extra certificate authorities outbound SMTP and MTA-STS policy fetches trust besides the system ones (a private CA, test rigs); empty: the system ones only.' },
  mta_sts_enabled: { type: 'bool', default: true, doc: 'Apply recipient domains\' MTA-STS policies (RFC 8461) to outbound mail: `enforce` delivers only to the MX hosts the policy names, over TLS with a verified certificate, and defers otherwise; `testing` delivers as before and reports failures over TLS-RPT.' },
  mta_sts_policy_port: { type: 'int', default: 443, min: 1, max: 65535, doc: 'TCP port MTA-STS policies are fetched from (443 as RFC 8461 says; test rigs may listen elsewhere).' },
  mta_sts_allow_private: { type: 'bool', default: false, doc: 'Let an MTA-STS policy host (mta-sts.<domain>) and a TLS-RPT https: collector resolve to loopback and private addresses (a private mail network, test rigs); link-local and metadata addresses stay refused.' },
  tls_rpt_enabled: { type: 'bool', default: true, doc: 'Send daily TLS-RPT reports (RFC 8460) to recipient domains with an MTA-STS policy that publish a `_smtp._tls` TXT record: by mail (mailto:) or HTTPS POST (https:).' },
  tls_rpt_cron: { type: 'string', default: '17 * * * *', doc: 'When the jobs role looks for finished UTC days whose TLS-RPT reports are still to send (cron expression).' },
  tls_rpt_from: { type: 'string', default: '', doc: 'From address of TLS-RPT report mail; empty means tlsrpt-noreply@<mail_hostname>.' },
  outbound_queue_lifetime_hours: { type: 'int', default: 72, min: 1, max: 720, doc: 'Hours a deferred recipient keeps being retried before it bounces (Transient).' },
  email_attachments_allow_private: { type: 'bool', default: false, doc: 'Let attachments given by `path` be fetched from loopback and private addresses (an on-premise file server); link-local and metadata addresses stay refused.' },
  outbound_reply_timeout_s: { type: 'int', default: 600, min: 1, max: 3600, doc: 'Seconds to wait for a remote SMTP reply (RFC 5321 asks 10 minutes after the data); no reply after the data is an ambiguous submission.' },
  outbound_connect_timeout_s: { type: 'int', default: 30, min: 1, max: 600, doc: 'Seconds to reach a remote MX: TCP connect, its greeting and STARTTLS; a host past it is skipped for the next.' },
  outbound_transaction_timeout_s: { type: 'int', default: 1800, min: 1, max: 7200, doc: 'Wall-clock bound on opening one outbound SMTP session and on one transaction, even while the remote keeps trickling bytes; past it the connection is dropped (ambiguous if the data went out).' },
  outbound_processes: { type: 'int', default: 1, min: 1, max: 16, doc: 'Outbound processes that may serve one region on one data folder (and so on its SQLite file): each takes a free one of the region\'s places, and they share the queue as nodes with folders of their own do (docs/operations.md, Running a second node).' },
  outbound_lease_s: { type: 'int', default: 30, min: 3, max: 600, doc: 'Seconds a claim of an outbound process on a recipient lasts unless renewed (every third of it); when a process dies, another serving the region takes its queued recipients, its destination slots and its interrupted submissions (ambiguous, never resent) after this long.' },
  outbound_poll_s: { type: 'int', default: 30, min: 1, max: 3600, doc: 'Safety poll of the outbound queue; new mail wakes it at once over Redis pub/sub.' },
  mailbox_simulator_domain: { type: 'string', default: 'simulator.svc.invalid', doc: 'Domain of the mailbox simulator: delivered@, bounced@, complained@ and suppressed@ it are resolved inside svc, never sent.' },
  email_attachments_max_mb: { type: 'int', default: 40, min: 1, max: 200, doc: 'Largest total size of one email\'s attachments, in MiB.' },
  contacts_limit: { type: 'int', default: 0, min: 0, doc: 'Most contacts a team may hold (0: no limit); past it a create is 422 validation_error `Contact limit reached.`. Contacts added from delivered mail are not counted. A plan\'s own `contacts` limit, where it sets one, takes its place.' },
  public_base_url: { type: 'string', default: '', doc: 'Public https address of the HTTP API, for share links and signed download links; empty uses http://<http_host>:<http_port> when http_host is a loopback address, and refuses to make links (503) otherwise. Never taken from a request\'s Host header.' },
  tracking_links: { type: 'enum', default: 'tracking_host', values: ['tracking_host', 'link_base'], doc: 'Where open and click tracking links point: tracking_host is https://<the domain\'s tracking subdomain> (its CNAME leads to this host; a TLS proxy in front answers for it), link_base is the API\'s link base (public_base_url, or the loopback listener) under /t/.' },
  tracking_flush_ms: { type: 'int', default: 200, min: 1, max: 10000, doc: 'Open and click hits are answered at once and committed together at most this often (a crash loses at most this window of hits).' },


  scanner_clamd: { type: 'string', default: 'auto', doc: 'clamd socket path or host:port; `auto`: Debian\'s standard socket /run/clamav/clamd.ctl when clamd answers there at start, else no scanning (one line at start says which); empty turns virus scanning off.' },
  scanner_fail_mode: { type: 'enum', default: 'closed', values: ['closed', 'open'], doc: 'When clamd is down or past its deadline: closed answers 451 (the sender retries), open stores the message marked unscanned.' },
  scanner_timeout_ms: { type: 'int', default: 30000, min: 100, max: 600000, doc: 'Deadline of one scan (svc enforces it; clamscan does not).' },
  scanner_max_bytes: { type: 'int', default: 26214400, min: 1024, doc: 'Largest message sent to the scanner (keep at or under clamd StreamMaxLength); a bigger one is refused 552 when failing closed, stored unscanned when open.' },

  metrics_rollup_interval_ms: { type: 'int', default: 5000, min: 100, max: 60000, doc: 'How often the metrics rollup (durable work of the jobs role) folds new outbox events into the one-minute rollups.' },
  marketing_sends_paused: { type: 'bool', default: false, doc: 'The operator\'s switch for campaign mail: while true every broadcast send is refused (403) and the send gate reports it; transactional mail is not affected.' },
  broadcasts_page_size: { type: 'int', default: 1000, min: 1, max: 5000, doc: 'Segment members a broadcast\'s fan-out turns into emails per committed step (durable work of the jobs role).' },
  work_lease_ms: { type: 'int', default: 60000, min: 1000, max: 600000, doc: 'How long a durable work item stays claimed without a committed step; a worker that died is replaced after this.' },
  work_poll_ms: { type: 'int', default: 1000, min: 10, max: 60000, doc: 'The longest the jobs role goes without looking for durable work that came due: an idle runner sleeps until the earliest parked item falls due, but at most this long (lapsed leases, due times another process moved earlier); work added by any process (runs enrolled, an import queued) wakes it at once through Redis.' },
  work_concurrency: { type: 'int', default: 256, min: 1, max: 1024, doc: 'Durable work items (automation runs, contact import and broadcast steps) one claim of the jobs role takes; two claims are in flight at once, and the steps that finish together commit in one transaction, so a crowd of runs waking at one time costs a few transactions, not one each.' },
  metrics_rollup_batch_size: { type: 'int', default: 5000, min: 10, max: 100000, doc: 'Outbox events the metrics rollup reads and folds per transaction.' },
  metrics_query_catch_up_events: { type: 'int', default: 100000, min: 0, doc: 'Outbox events GET /emails/metrics may fold itself before answering, so figures are fresh (0: leave it to the jobs role).' },

  smtp_max_message_bytes: { type: 'int', default: 26214400, min: 1024, doc: 'Largest message the inbound listener accepts (SIZE); bigger is refused 552.' },
  smtp_max_connections: { type: 'int', default: 500, min: 1, doc: 'Inbound SMTP connections open at once; more are refused 421.' },
  smtp_max_connections_per_ip: { type: 'int', default: 50, min: 1, doc: 'Inbound SMTP connections open at once from one client address.' },
  smtp_max_connections_per_network: { type: 'int', default: 100, min: 1, doc: 'Inbound SMTP connections open at once from one client network: an IPv4 /24 (IPv4-mapped IPv6 addresses included) or an IPv6 /64; more are refused 421 4.7.0.' },
  smtp_connection_rate_per_ip: { type: 'int', default: 600, min: 0, doc: 'New inbound SMTP connections per minute from one client address (0: no limit); more are refused 421.' },
  smtp_max_recipients: { type: 'int', default: 100, min: 1, doc: 'RCPT TO commands accepted per message (RFC 5321 asks for at least 100).' },
  smtp_max_junk_commands: { type: 'int', default: 100, min: 1, doc: 'NOOP, RSET, VRFY, HELP, HELO/EHLO and the like one inbound session may send between accepted messages; one more ends it with 421.' },
  smtp_max_errors: { type: 'int', default: 20, min: 1, doc: 'Error replies (4xx/5xx) one inbound session may earn between accepted messages; one more ends it with 421.' },
  smtp_socket_timeout_s: { type: 'int', default: 300, min: 5, max: 3600, doc: 'Idle seconds before the inbound listener drops a client (RFC 5321 suggests 5 minutes).' },
  smtp_inflight_bytes_limit: { type: 'int', default: 536870912, min: 65536, doc: 'Bytes of inbound messages held in memory at once across all SMTP sessions; a DATA that would pass it is answered 452 4.3.1 (try later), at DATA for a declared SIZE, else at the end of data. Peak memory for messages is about 2.5 times this; keep it at least smtp_max_message_bytes.' },
  smtp_min_data_rate_bytes_per_s: { type: 'int', default: 500, min: 0, doc: 'Slowest average DATA rate once smtp_socket_timeout_s of it has passed (Postfix: smtpd_min_data_rate); a slower client is answered 421 4.4.2 and dropped, nothing stored (0: no minimum).' },
  smtp_tls_cert_file: { type: 'string', default: '', doc: 'PEM certificate (chain) for STARTTLS; empty uses a self-signed one made on first start in <data_dir>/smtp-tls/.' },
  smtp_tls_key_file: { type: 'string', default: '', doc: 'PEM private key matching smtp_tls_cert_file.' },
  smtp_proxy_protocol: { type: 'list', default: [], doc: 'Addresses of load balancers allowed to send a PROXY protocol v1 header; empty turns PROXY protocol off.' },
  submission_port: { type: 'int', default: 587, min: 0, max: 65535, doc: 'Port of SMTP submission with STARTTLS (applications send with user name `resend` and an API key as password), served by the inbound role on smtp_host once a certificate is configured (smtp_tls_cert_file) or submission_allow_self_signed is on; 0: off.' },
  submissions_port: { type: 'int', default: 465, min: 0, max: 65535, doc: 'Port of SMTP submission over implicit TLS, under the same conditions as submission_port; 0: off.' },
  submission_allow_self_signed: { type: 'bool', default: false, doc: 'Run SMTP submission with the self-signed certificate made in <data_dir>/smtp-tls/ when no certificate is configured (clients must then trust it by hand).' },
  submission_auth_failure_burst: { type: 'int', default: 10, min: 1, doc: 'Failed SMTP submission logins one client address (IPv6: one /64) may make before every login from it is answered 454 4.7.0 until the bucket refills.' },
  submission_auth_failure_refill_s: { type: 'int', default: 60, min: 1, max: 86400, doc: 'Seconds after which one more failed SMTP submission login is allowed from a client address.' },
  feedback_address: { type: 'string', default: '', doc: 'Address complaint feedback loops (ARF reports) are sent to; empty means feedback@<mail_hostname>.' },
  receiving_daily_cap: { type: 'int', default: 0, min: 0, doc: 'Received messages kept per team per UTC day before the rest are dropped as daily_cap (0: no cap).' },
  receiving_storage_quota_mb: { type: 'int', default: 0, min: 0, doc: 'Raw MiB of kept received mail per team before new messages are dropped as storage_quota (0: no quota).' },
  plans: { type: 'plans', default: [], doc: 'The operator\'s plans (JSON array): each {code, name, limits: {included_emails, daily_cap, domain_limit, webhook_endpoint_limit, retention_days, contacts} (null or left out: no limit), ramp: {first_day, first_week} (the new-account ramp) or null, paid}; teams not given one are on `default`, which has no limits unless defined here (docs/operations.md).' },
  ai_provider_url: { type: 'string', default: '', doc: 'Address of the AI assist provider; empty means AI assist is not configured and a team turning `ai_assist_enabled` on is refused (503).' },

  receiving_dropped_retention_days: { type: 'int', default: 30, min: 1, max: 3650, doc: 'Days a dropped received record (and a parse_failed raw source) is kept before the pruning job deletes it; kept messages never age out.' },
} as const satisfies Record<string, KeySpec>;

export type Schema = typeof schema;
export type ConfigKey = keyof Schema;

type ValueOf<S extends KeySpec> = S extends { type: 'int' }
  ? number
  : S extends { type: 'bool' }
    ? boolean
    : S extends { type: 'list' }
      ? readonly string[]
      : S extends { type: 'regions' }
        ? RegionOverrides
        : S extends { type: 'plans' }
          ? readonly PlanSpec[]
          : string;

export type Config = { readonly [K in ConfigKey]: ValueOf<Schema[K]> };

export function envName(key: string): string {
  return `SVC_${key.toUpperCase()}`;
}
