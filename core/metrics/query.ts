import { invalidParameter } from '../errors.js';
import { isMetricName, metricNames, type MetricName } from './names.js';
import { granularities, parseTimezone, resolveWindow, type Granularity, type MetricsWindow } from './periods.js';

// GET /emails/metrics query parameters, validated here so every refusal carries the spec's name
// (422 invalid_parameter). List parameters arrive comma-separated, repeated, or both.

export const dimensionNames = ['period', 'domain', 'email', 'broadcast'] as const;
export type Dimension = (typeof dimensionNames)[number];

/** The spec's limit on each id filter (Limits: metrics id filters). */
export const MAX_FILTER_IDS = 100;

export interface RawMetricsQuery {
  start_date?: string;
  end_date?: string;
  metrics?: string | string[];
  dimensions?: string | string[];
  granularity?: string;
  domain_id?: string | string[];
  email_id?: string | string[];
  broadcast_id?: string | string[];
  timezone?: string;
  /** `true`: opens and clicks flagged as a machine's (core/tracking/machine.ts) are left out. */
  exclude_machine?: string;
}

export interface MetricsQuery {
  window: MetricsWindow;
  metrics: MetricName[];
  dimensions: Dimension[];
  granularity: Granularity;
  domainIds?: string[];
  emailIds?: string[];
  broadcastIds?: string[];
  excludeMachine: boolean;
}

const idShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `a,b` and `a&…=b` alike: trimmed, empty items dropped, first occurrence kept. */
function listOf(raw: string | string[] | undefined): string[] {
  if (raw === undefined) return [];
  const items = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return [...new Set(items)];
}

function parseMetrics(raw: RawMetricsQuery['metrics']): MetricName[] {
  const names = listOf(raw);
  const unknown = names.filter((n) => !isMetricName(n));
  if (unknown.length) {
    throw invalidParameter('metrics', `Unknown metric ${unknown.map((n) => `\`${n}\``).join(', ')}. Known metrics: ${metricNames.join(', ')}.`);
  }
  return names.length ? (names as MetricName[]) : [...metricNames];
}

function parseDimensions(raw: RawMetricsQuery['dimensions']): Dimension[] {
  const names = listOf(raw);
  const unknown = names.filter((n) => !(dimensionNames as readonly string[]).includes(n));
  if (unknown.length) {
    throw invalidParameter('dimensions', `Unknown dimension ${unknown.map((n) => `\`${n}\``).join(', ')}. Known dimensions: ${dimensionNames.join(', ')}.`);
  }
  return names as Dimension[];
}

function parseGranularity(raw: string | undefined): Granularity {
  if (raw === undefined || raw === '') return 'daily';
  if (!(granularities as readonly string[]).includes(raw)) {
    throw invalidParameter('granularity', `The \`granularity\` parameter must be one of ${granularities.join(', ')}.`);
  }
  return raw as Granularity;
}

function parseIds(name: 'domain_id' | 'email_id' | 'broadcast_id', raw: string | string[] | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const ids = listOf(raw).map((id) => id.toLowerCase());
  if (ids.length > MAX_FILTER_IDS) throw invalidParameter(name, `The \`${name}\` parameter takes up to ${MAX_FILTER_IDS} ids.`);
  const bad = ids.find((id) => !idShape.test(id));
  if (bad !== undefined) throw invalidParameter(name, `\`${bad}\` in \`${name}\` is not an id.`);
  return ids.length ? ids : undefined;
}

/**
 * Per-email figures and per-broadcast figures are two different cuts: the `email` dimension (or an
 * `email_id` filter) cannot be combined with the `broadcast` dimension (or a `broadcast_id` filter).
 */
function refuseEmailWithBroadcast(dimensions: Dimension[], emailIds?: string[], broadcastIds?: string[]) {
  const byEmail = dimensions.includes('email') || emailIds !== undefined;
  const byBroadcast = dimensions.includes('broadcast') || broadcastIds !== undefined;
  if (!byEmail || !byBroadcast) return;
  const param = dimensions.includes('email') && dimensions.includes('broadcast') ? 'dimensions' : emailIds !== undefined ? 'email_id' : 'broadcast_id';
  throw invalidParameter(param, 'The `email` dimension or `email_id` cannot be combined with the `broadcast` dimension or `broadcast_id`.');
}

export function parseMetricsQuery(raw: RawMetricsQuery, now: Date): MetricsQuery {
  const metrics = parseMetrics(raw.metrics);
  const dimensions = parseDimensions(raw.dimensions);
  const granularity = parseGranularity(raw.granularity);
  const domainIds = parseIds('domain_id', raw.domain_id);
  const emailIds = parseIds('email_id', raw.email_id);
  const broadcastIds = parseIds('broadcast_id', raw.broadcast_id);
  refuseEmailWithBroadcast(dimensions, emailIds, broadcastIds);
  const zone = parseTimezone(raw.timezone);
  const window = resolveWindow(raw, zone, now);
  return { window, metrics, dimensions, granularity, domainIds, emailIds, broadcastIds, excludeMachine: parseFlag('exclude_machine', raw.exclude_machine) };
}

function parseFlag(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw invalidParameter(name, `The \`${name}\` parameter must be true or false.`);
}
