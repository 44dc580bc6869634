import { missingField, validationError } from '../errors.js';
import { oneLine } from './text.js';

// The sender identity's postal address. `country` is an upper-case ISO 3166-1 alpha-2 code,
// judged against the runtime's own region data (ICU's CLDR, kept with Node): a code it names that
// is current (canonical, not an alias such as UK or SU) and is not one of the codes CLDR knows
// that ISO 3166-1 does not assign (EU, UN, XK, …).

export interface PostalAddress {
  line1: string;
  line2: string | null;
  city: string;
  state: string | null;
  postal_code: string | null;
  country: string;
}

export type PostalAddressInput = { [K in keyof PostalAddress]?: string | null };

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/** Codes CLDR names that ISO 3166-1 leaves unassigned (exceptionally reserved or user-assigned). */
const notAssigned = new Set(['AC', 'CP', 'CQ', 'DG', 'EA', 'EU', 'EZ', 'IC', 'TA', 'UN', 'QO', 'XA', 'XB', 'XK', 'ZZ']);

export function isCountryCode(code: string): boolean {
  if (!/^[A-Z]{2}$/.test(code) || notAssigned.has(code)) return false;
  if (regionNames.of(code) === undefined) return false;
  return Intl.getCanonicalLocales(`und-${code}`)[0] === `und-${code}`;
}

const lineMax = 200;

export function parsePostalAddress(input: unknown): PostalAddress {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw validationError(422, 'postal_address', '`postal_address` must be an object.');
  const raw = input as PostalAddressInput;
  const required = (key: 'line1' | 'city' | 'country') => {
    const value = raw[key];
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) throw missingField(`postal_address.${key}`);
    return oneLine(`postal_address.${key}`, value, lineMax).trim();
  };
  const optional = (key: 'line2' | 'state' | 'postal_code') => {
    const value = raw[key];
    if (value === undefined || value === null) return null;
    return oneLine(`postal_address.${key}`, value, lineMax).trim() || null;
  };
  const address: PostalAddress = {
    line1: required('line1'), line2: optional('line2'), city: required('city'), state: optional('state'), postal_code: optional('postal_code'), country: required('country'),
  };
  if (!isCountryCode(address.country)) {
    throw validationError(422, 'postal_address.country', '`postal_address.country` must be an upper-case ISO 3166-1 alpha-2 country code, such as US or DE.');
  }
  return address;
}
