import { ServiceError } from './errors.js';
import { readIsoInstant } from './time.js';

// scheduled_at (spec, Send request fields): an ISO 8601 instant, or a phrase from a narrow
// grammar read as UTC — a relative span ("in 2 hours", "in 30 minutes", "in a day") or a day with
// an optional time ("tomorrow at 9am", "friday 14:30", "today at 5:15pm", "next monday"). A day
// without a time means 09:00. The result must lie between 1 minute and 30 days ahead.

export const minimumLeadMs = 60_000;
export const maximumLeadMs = 30 * 24 * 3600_000;

const acceptedForms = 'an ISO 8601 date and time with a zone (e.g. 2026-05-01T09:00:00Z), or a phrase such as "in 2 hours", "tomorrow at 9am" or "friday 14:30" (UTC)';

const units: Record<string, number> = {
  minute: 60_000, min: 60_000, hour: 3600_000, hr: 3600_000, day: 86_400_000, week: 7 * 86_400_000,
};
const weekdays = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const span = /^in\s+(\d{1,6}|an?)\s+(minute|min|hour|hr|day|week)s?$/;
const dayTime = /^(?:(next)\s+)?(today|tomorrow|sunday|monday|tuesday|wednesday|thursday|friday|saturday)(?:\s+(?:at\s+)?(.+))?$/;

/** The instant a scheduled_at value names, as ISO text; refusals are 422 validation_error. */
export function parseScheduledAt(raw: string, now: Date, field = 'scheduled_at'): string {
  const at = readInstant(raw.trim(), now);
  if (!at) throw refuse(field, `\`${field}\` must be ${acceptedForms}.`);
  const lead = at.getTime() - now.getTime();
  if (lead < minimumLeadMs || lead > maximumLeadMs) {
    throw refuse(field, `\`${field}\` must be between 1 minute and 30 days from now (${at.toISOString()} is not).`);
  }
  return at.toISOString();
}

function readInstant(text: string, now: Date): Date | undefined {
  if (/^\d{4}-/.test(text)) return readIsoInstant(text);
  const phrase = text.toLowerCase().replace(/\s+/g, ' ');
  const relative = span.exec(phrase);
  if (relative) {
    const count = /^an?$/.test(relative[1]!) ? 1 : Number(relative[1]);
    return new Date(now.getTime() + count * units[relative[2]!]!);
  }
  const day = dayTime.exec(phrase);
  if (!day) return undefined;
  const time = day[3] === undefined ? { hours: 9, minutes: 0 } : readTime(day[3]);
  if (!time) return undefined;
  return onDay(day[2]!, day[1] === 'next', time, now);
}

function readTime(text: string): { hours: number; minutes: number } | undefined {
  if (text === 'noon') return { hours: 12, minutes: 0 };
  if (text === 'midnight') return { hours: 0, minutes: 0 };
  const twelve = /^(\d{1,2})(?::(\d{2}))?\s?(am|pm)$/.exec(text);
  if (twelve) {
    const h = Number(twelve[1]);
    const m = Number(twelve[2] ?? 0);
    if (h < 1 || h > 12 || m > 59) return undefined;
    return { hours: (h % 12) + (twelve[3] === 'pm' ? 12 : 0), minutes: m };
  }
  const day24 = /^(\d{1,2}):(\d{2})$/.exec(text);
  if (day24) {
    const h = Number(day24[1]);
    const m = Number(day24[2]);
    return h <= 23 && m <= 59 ? { hours: h, minutes: m } : undefined;
  }
  return undefined;
}

/**
 * today / tomorrow are literal. A weekday is its next occurrence whose time is still ahead
 * (today when it is that day and the time has not passed); "next <weekday>" skips today.
 */
function onDay(day: string, next: boolean, time: { hours: number; minutes: number }, now: Date): Date {
  const base = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), time.hours, time.minutes);
  if (day === 'today') return new Date(base);
  if (day === 'tomorrow') return new Date(base + 86_400_000);
  let offset = (weekdays.indexOf(day) - now.getUTCDay() + 7) % 7;
  if ((offset === 0 && (next || base <= now.getTime()))) offset = 7;
  return new Date(base + offset * 86_400_000);
}

const refuse = (field: string, message: string) =>
  new ServiceError(422, 'validation_error', message, { errors: [{ path: field, message }] });
