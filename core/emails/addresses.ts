import { domainToASCII } from 'node:url';
import addressparser from 'nodemailer/lib/addressparser';
import { validationError } from '../errors.js';

/** One mailbox as written by the caller: the header form and the bare address. */
export interface Mailbox {
  /** `address` or `Name <address>`, as it goes into the header. */
  header: string;
  name: string;
  /** Local part as written, domain lower case and in A-labels. */
  address: string;
  domain: string;
}

// RFC 5321 dot-atom local part (quoted local parts are legal but in practice only abuse).
const localPart = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const domainLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Mailboxes already read, by the string they were read from: a campaign page's messages share
 * their from and reply-to strings, read once per page instead of once per recipient (addressparser
 * on the from was about a twentieth of the fan-out's CPU). Only strings that passed every check
 * are kept; a mailbox is the same whichever field it was read for. Treat them as read-only.
 */
export type ParsedMailboxes = Map<string, Mailbox>;

/**
 * Reads one field value (a string, or an array of strings) into mailboxes. CR, LF and NUL are
 * refused outright (header injection); every address must be a plain mailbox on a DNS name.
 */
export function parseMailboxes(field: string, value: string | string[] | undefined | null, parsed?: ParsedMailboxes): Mailbox[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  const out: Mailbox[] = [];
  for (const [i, item] of items.entries()) {
    const known = typeof item === 'string' ? parsed?.get(item) : undefined;
    if (known) {
      out.push(known);
      continue;
    }
    const path = Array.isArray(value) ? `${field}[${i}]` : field;
    if (typeof item !== 'string') throw validationError(422, path, `\`${path}\` must be an email address.`);
    if (/[\r\n\0]/.test(item)) throw validationError(422, path, `\`${path}\` must not contain line breaks.`);
    if (bareAddress.test(item)) {
      out.push(remember(parsed, item, toMailbox(path, item, '', item)));
      continue;
    }
    const entries = addressparser(item, { flatten: true });
    if (entries.length === 0) throw invalidAddress(path, item);
    // One string is one address: a list smuggled into one string (a form field, say) must not
    // add recipients the caller never saw as separate entries.
    if (entries.length > 1) throw validationError(422, path, `\`${path}\` must be one email address; give several as an array of strings.`);
    out.push(remember(parsed, item, toMailbox(path, item, entries[0]!.name ?? '', entries[0]!.address ?? '')));
  }
  return out;
}

// A bare address of these characters is read by addressparser as itself with no name (tested):
// a campaign's `to` is a contact's stored address, and addressparser was a twentieth of the
// fan-out. toMailbox still checks it as it checks any other.
const bareAddress = /^[A-Za-z0-9._+-]+@[A-Za-z0-9.-]+$/;

function remember(parsed: ParsedMailboxes | undefined, item: string, mailbox: Mailbox): Mailbox {
  parsed?.set(item, mailbox);
  return mailbox;
}

function toMailbox(path: string, raw: string, name: string, address: string): Mailbox {
  const at = address.lastIndexOf('@');
  if (at <= 0) throw invalidAddress(path, raw);
  const local = address.slice(0, at);
  const domain = asciiDomain(address.slice(at + 1));
  if (!localPart.test(local) || local.length > 64 || !domain) throw invalidAddress(path, raw);
  const bare = `${local}@${domain}`;
  return { header: name ? `${quoteName(name)} <${bare}>` : bare, name, address: bare, domain };
}

/** Lower case A-label form of a domain, or undefined when it is not a usable host name. */
export function asciiDomain(raw: string): string | undefined {
  const trimmed = raw.trim().replace(/\.$/, '');
  if (!trimmed || trimmed.length > 253) return undefined;
  const ascii = domainToASCII(trimmed.toLowerCase());
  if (!ascii || !ascii.includes('.')) return undefined;
  return ascii.split('.').every((label) => domainLabel.test(label)) ? ascii : undefined;
}

/** A display name is quoted when it holds anything beyond atext and spaces. */
function quoteName(name: string): string {
  return /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]+$/.test(name) ? name : `"${name.replace(/(["\\])/g, '\\$1')}"`;
}

const invalidAddress = (path: string, raw: string) =>
  validationError(422, path, `Invalid \`${path}\` field. The email address needs to follow the \`email@example.com\` or \`Name <email@example.com>\` format (got ${JSON.stringify(raw.slice(0, 320))}).`);

/** The key a recipient is compared by (duplicates, suppressions): the whole address in lower case. */
export const addressKey = (address: string) => address.toLowerCase();
