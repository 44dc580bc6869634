import { Duration } from 'luxon';

// Durations in step configs: "3 days", "1 hour", "90 minutes", "2 weeks", "30s", or ISO 8601 ("P3D", "PT12H").

export const DAY_MS = 86_400_000;

const units: Record<string, number> = {
  s: 1000, sec: 1000, second: 1000, m: 60_000, min: 60_000, minute: 60_000, h: 3_600_000, hr: 3_600_000, hour: 3_600_000,
  d: DAY_MS, day: DAY_MS, w: 7 * DAY_MS, week: 7 * DAY_MS,
};

const phrase = /^(\d{1,7})\s*([a-z]+?)s?$/;

/** Milliseconds, or undefined when the text is no duration. */
export function readDuration(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const trimmed = text.trim().toLowerCase();
  const m = phrase.exec(trimmed);
  if (m) {
    const unit = units[m[2]!];
    return unit === undefined ? undefined : Number(m[1]) * unit;
  }
  if (!trimmed.startsWith('p')) return undefined;
  const iso = Duration.fromISO(text.trim().toUpperCase());
  // Months and years have no fixed length: refused rather than guessed.
  if (!iso.isValid || iso.months || iso.years || iso.quarters) return undefined;
  return iso.as('milliseconds');
}
