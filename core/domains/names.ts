import { domainToASCII } from 'node:url';
import { getDomain } from 'tldts';
import { checkOffline } from '../../dns/recipient-domain.js';
import { missingField, validationError } from '../errors.js';

/** A domain name split at its zone: records are named relative to the zone (spec, Domain). */
export interface ZonedName {
  /** The whole name, lower-case A-labels. */
  name: string;
  /** The registrable domain, taken as the DNS zone the customer edits. */
  zone: string;
  /** The part in front of the zone: '' at the zone root, e.g. 'mail' for mail.example.com. */
  sub: string;
}

const labelShape = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Checks and normalises a domain name (IDNs to A-labels); refuses names that can never be a zone. */
export function parseDomainName(raw: unknown, field = 'name'): ZonedName {
  if (raw === undefined || raw === null) throw missingField(field);
  if (typeof raw !== 'string') throw validationError(422, field, `The \`${field}\` field must be a domain name.`);
  const trimmed = raw.trim().replace(/\.$/, '');
  const name = trimmed === '' ? '' : domainToASCII(trimmed.toLowerCase());
  const bad = (why: string) => validationError(422, field, `The \`${field}\` field must be a domain name: ${why}.`);
  if (name === '' || name.length > 253) throw bad('not a host name');
  if (!name.split('.').every((label) => labelShape.test(label))) throw bad('labels are letters, digits and hyphens, 1-63 characters');
  const offline = checkOffline(name);
  if (offline && !offline.ok && (offline.cause === 'reserved_domain' || offline.cause === 'ip_literal')) {
    throw bad('reserved names and IP addresses cannot send mail');
  }
  const zone = getDomain(name, { allowPrivateDomains: true });
  if (!zone) throw bad('it has no registrable domain under a public suffix');
  return { name, zone, sub: name === zone ? '' : name.slice(0, -(zone.length + 1)) };
}

export function zonedName(name: string): ZonedName {
  const zone = getDomain(name, { allowPrivateDomains: true }) ?? name;
  return { name, zone, sub: name === zone ? '' : name.slice(0, -(zone.length + 1)) };
}

/** One label (or dotted labels) under the domain, e.g. `send`, `links`, `inbound.eu`. */
export function parseHostLabel(raw: unknown, field: string, allowApex: boolean): string {
  if (typeof raw !== 'string') throw validationError(422, field, `The \`${field}\` field must be a DNS label.`);
  const value = raw.trim().toLowerCase();
  if (allowApex && value === '@') return '@';
  if (value.length > 63 * 2 || !value.split('.').every((label) => labelShape.test(label))) {
    throw validationError(422, field, `The \`${field}\` field must be a DNS label: letters, digits and hyphens${allowApex ? ', or @ for the domain itself' : ''}.`);
  }
  return value;
}

/** The absolute name of `label` under the domain (`@` is the domain itself). */
export const absoluteName = (z: ZonedName, label: string): string => (label === '@' ? z.name : `${label}.${z.name}`);

/** The same name relative to the zone, the way DNS providers ask for it (`@` at the zone root). */
export function relativeName(z: ZonedName, label: string): string {
  const parts = [label === '@' ? '' : label, z.sub].filter((p) => p !== '');
  return parts.length === 0 ? '@' : parts.join('.');
}
