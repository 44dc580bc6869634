import { DateTime, IANAZone } from 'luxon';
import { invalidParameter } from '../errors.js';

// The time side of a metrics query: the window and the period buckets, in the caller's IANA
// timezone. Rollups are per UTC minute; every period boundary a timezone can produce falls on a
// minute, so a bucket is a set of whole minutes and days, weeks (ISO, Monday first) and months
// follow the zone's calendar across DST changes (a 23- or 25-hour day is one day).

export const granularities = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type Granularity = (typeof granularities)[number];

const unitOf = { hourly: 'hour', daily: 'day', weekly: 'week', monthly: 'month' } as const;
const stepOf = { hourly: 'hours', daily: 'days', weekly: 'weeks', monthly: 'months' } as const;

/** Refuses a window that would answer more buckets than this (e.g. hourly over six years). */
export const MAX_PERIODS = 50_000;

const dateOnly = /^\d{4}-\d{2}-\d{2}$/;
const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;
const zoneName = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

export const minuteOf = (at: DateTime | Date): number => Math.floor((at instanceof Date ? at.getTime() : at.toMillis()) / 60_000);
export const atMinute = (minute: number): Date => new Date(minute * 60_000);

export function parseTimezone(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'UTC';
  if (!zoneName.test(raw) || !IANAZone.isValidZone(raw)) {
    throw invalidParameter('timezone', `The \`timezone\` parameter must be an IANA time zone name such as America/New_York; \`${raw}\` is not one.`);
  }
  return raw;
}

/**
 * A date means that calendar day in the query's timezone: as a start its first instant, as an end
 * the day included whole (the next midnight). A date-time without an offset is local to the
 * timezone; with `Z` or an offset it is that instant.
 */
function parseBound(name: 'start_date' | 'end_date', raw: string, zone: string): DateTime {
  const message = `The \`${name}\` parameter must be an ISO 8601 date (2026-07-01) or date-time (2026-07-01T00:00:00Z).`;
  if (dateOnly.test(raw)) {
    const day = DateTime.fromISO(raw, { zone });
    if (!day.isValid) throw invalidParameter(name, message);
    return name === 'end_date' ? day.plus({ days: 1 }).startOf('day') : day.startOf('day');
  }
  if (!dateTime.test(raw)) throw invalidParameter(name, message);
  const at = DateTime.fromISO(raw, { zone });
  if (!at.isValid) throw invalidParameter(name, message);
  return at;
}

export interface MetricsWindow {
  zone: string;
  /** Inclusive, on a minute boundary. */
  start: DateTime;
  /** Exclusive, on a minute boundary, never after the last completed minute. */
  end: DateTime;
}

/**
 * end_date: given or now; a future value is clamped to now, then to the last completed minute.
 * start_date: given, or the calendar day six days before the end's day (seven days with the
 * end's own), so the default daily answer is a week of whole-day buckets.
 */
export function resolveWindow(raw: { start_date?: string; end_date?: string }, zone: string, now: Date): MetricsWindow {
  const nowAt = DateTime.fromJSDate(now, { zone });
  const given = raw.end_date ? parseBound('end_date', raw.end_date, zone) : nowAt;
  const end = DateTime.fromMillis(minuteOf(given < nowAt ? given : nowAt) * 60_000, { zone });
  const start = raw.start_date
    ? DateTime.fromMillis(minuteOf(parseBound('start_date', raw.start_date, zone)) * 60_000, { zone })
    : end.minus({ milliseconds: 1 }).startOf('day').minus({ days: 6 });
  if (start > end) throw invalidParameter('start_date', 'The `start_date` must be on or before `end_date` (a future `end_date` counts as now).');
  return { zone, start, end };
}

export interface Periods {
  /** Bucket starts in UTC minutes, ascending, then the end of the last bucket. */
  boundaries: number[];
  /** Labels of the buckets: their start in the timezone, ISO 8601 with its offset. */
  labels: string[];
  /** The largest minute count dividing every boundary: rollups can be summed in slots of it. */
  quantum: number;
}

/** Fixed lengths a step has when the zone's offset is the same at both ends. */
const fixedStepMs: Partial<Record<Granularity, number>> = { hourly: 3_600_000, daily: 86_400_000, weekly: 604_800_000 };

/** ISO 8601 local date-time with the zone's offset, as luxon's toISO writes it (Z for UTC). */
function labelOf(ms: number, offset: number, universal: boolean): string {
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, 19);
  if (universal && offset === 0) return `${local}Z`;
  const abs = Math.abs(offset);
  return `${local}${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/**
 * The buckets that meet the window; the first may start before it, the last end after it.
 * A step whose two ends have the same UTC offset is exactly one hour, day or week of wall time, so
 * it is plain arithmetic; luxon's calendar steps the ones across an offset change, and months.
 */
export function periodsOf(window: MetricsWindow, granularity: Granularity): Periods {
  const zone = window.start.zone;
  const step = fixedStepMs[granularity];
  const endMs = window.end.toMillis();
  const first = window.start.startOf(unitOf[granularity]);
  let ms = first.toMillis();
  let offset = first.offset;
  const boundaries: number[] = [];
  const labels: string[] = [];
  // Asking a zone its offset goes through Intl and costs microseconds: hourly steps look a day
  // ahead once and take the hours up to there as plain arithmetic while the offset holds.
  const lookAhead = granularity === 'hourly' ? 86_400_000 - 3_600_000 : 0;
  let stableUntil = Number.NEGATIVE_INFINITY;
  while (ms < endMs) {
    if (boundaries.length >= MAX_PERIODS) {
      throw invalidParameter('granularity', `The window holds more than ${MAX_PERIODS} ${granularity} periods; choose a shorter window or a coarser granularity.`);
    }
    boundaries.push(ms / 60_000);
    labels.push(labelOf(ms, offset, zone.isUniversal));
    // A plain step is right only from a period start on the wall clock's hour or midnight (a
    // midnight that does not exist makes the day start at 01:00; the next day starts at 00:00).
    if (step !== undefined && (ms + offset * 60_000) % (granularity === 'hourly' ? 3_600_000 : 86_400_000) === 0) {
      const nextMs = ms + step;
      if (nextMs <= stableUntil) {
        ms = nextMs;
        continue;
      }
      if (zone.offset(nextMs + lookAhead) === offset) {
        stableUntil = nextMs + lookAhead;
        ms = nextMs;
        continue;
      }
      if (lookAhead && zone.offset(nextMs) === offset) {
        ms = nextMs;
        continue;
      }
    }
    const next = DateTime.fromMillis(ms, { zone }).plus({ [stepOf[granularity]]: 1 }).startOf(unitOf[granularity]);
    // Where the offset moves by less than the step (Lord Howe's 30 minutes), the start of the
    // next hour can read as the current one again: move on by the step itself then.
    const nextMs = next.toMillis() > ms ? next.toMillis() : ms + (step ?? 86_400_000);
    ms = nextMs;
    offset = zone.offset(nextMs);
  }
  boundaries.push(ms / 60_000);
  let quantum = 0;
  for (const b of boundaries) quantum = gcd(quantum, Math.abs(b));
  return { boundaries, labels, quantum: Math.max(1, quantum) };
}

/** Index of the bucket holding a minute (the last boundary at or before it). */
export function bucketOf(periods: Periods, minute: number): number {
  let low = 0;
  let high = periods.labels.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (periods.boundaries[mid]! <= minute) low = mid;
    else high = mid - 1;
  }
  return low;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}
