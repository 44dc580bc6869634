import { DateTime } from 'luxon';
import { invalidParameter } from './errors.js';

const instantShape = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * An ISO 8601 date, time and zone, read by luxon: a day the month does not have
 * (2026-02-30T09:00:00Z), hour 25 or second 60 is no instant. `new Date()` rolled such a value
 * over into the next month instead.
 */
export function readIsoInstant(text: string): Date | undefined {
  if (!instantShape.test(text)) return undefined;
  const at = DateTime.fromISO(text, { setZone: true });
  return at.isValid ? at.toJSDate() : undefined;
}

/** An ISO 8601 instant (date, time and zone) as canonical UTC text; a bare date is refused. */
export function parseInstant(name: string, raw: string): string {
  const date = readIsoInstant(raw);
  if (!date) {
    throw invalidParameter(name, `The \`${name}\` parameter must be an ISO 8601 date and time with a zone, e.g. 2026-01-31T09:00:00Z.`);
  }
  return date.toISOString();
}

/** The instant `days` days before `now`, as ISO text: the cut-off of a retention window. */
export function daysBefore(now: Date, days: number): string {
  return new Date(now.getTime() - days * 86_400_000).toISOString();
}

const calendarDateShape = /^\d{4}-\d{2}-\d{2}$/;

/**
 * An ISO 8601 calendar date (2026-01-31) or zoned instant naming a day that exists: luxon refuses
 * 2026-02-30 where `new Date()` would roll it into March.
 */
export function isIsoDateOrInstant(text: string): boolean {
  if (calendarDateShape.test(text)) return DateTime.fromISO(text, { zone: 'utc' }).isValid;
  return readIsoInstant(text) !== undefined;
}
