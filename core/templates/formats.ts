import { ServiceError } from '../errors.js';

// Formats of event data slots (`{{{item.total|0|currency:USD}}}`): money, dates (UTC) and
// numbers, in US English through Intl. Each formatter is built once when the template is read.

export type Formatter = (value: unknown) => string;

const dateStyles = new Set(['short', 'medium', 'long']);

/** The formatter a format names; anything else is 422 validation_error. */
export function compileFormat(format: string, path: string): Formatter {
  const [kind, arg, extra] = format.split(':');
  if (extra === undefined && arg !== undefined) {
    if (kind === 'currency' && /^[A-Z]{3}$/.test(arg)) return numeric(new Intl.NumberFormat('en-US', { style: 'currency', currency: arg }));
    if (kind === 'number' && /^[0-6]$/.test(arg)) {
      const digits = Number(arg);
      return numeric(new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
    }
    if (kind === 'date' && dateStyles.has(arg)) return dated(new Intl.DateTimeFormat('en-US', { dateStyle: arg as 'short', timeZone: 'UTC' }));
  }
  const message = `The format \`${format}\` is not readable: use \`currency:USD\` (an ISO 4217 code), \`date:short\`, \`date:medium\`, \`date:long\` or \`number:0\` to \`number:6\`.`;
  throw new ServiceError(422, 'validation_error', message, { errors: [{ path, message }] });
}

/** A value that is not a number is shown as it came. */
function numeric(format: Intl.NumberFormat): Formatter {
  return (value) => {
    const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    return Number.isFinite(n) ? format.format(n) : String(value);
  };
}

/** An ISO 8601 text or epoch milliseconds; anything else is shown as it came. */
function dated(format: Intl.DateTimeFormat): Formatter {
  return (value) => {
    const at = typeof value === 'number' || typeof value === 'string' ? new Date(value) : null;
    return at && !Number.isNaN(at.getTime()) ? format.format(at) : String(value);
  };
}
