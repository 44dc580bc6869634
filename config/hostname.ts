import { isIP } from 'node:net';

// mail_hostname and the per-region host names are what other mail servers and DNS see: the EHLO
// name, the targets of the records every sending domain publishes (MX, MAIL FROM, tracking). A
// bare `vm` there is a record pointing nowhere, so only a fully qualified name is taken.

/** What is wrong with `name` as a fully qualified host name; undefined when it is one. */
export function fqdnProblem(name: string): string | undefined {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  if (isIP(bare)) return 'an address, not a name';
  const labels = bare.split('.');
  if (labels.length < 2) return 'a single label, not a fully qualified name';
  if (bare.length > 253) return 'longer than 253 characters';
  for (const label of labels) {
    if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i.test(label)) return `"${label}" is not a host name label (letters, digits and inner hyphens, at most 63)`;
  }
  if (/^\d+$/.test(labels.at(-1)!)) return 'its last label is a number';
  return undefined;
}

/** The name without the trailing dot of an absolute DNS name. */
export const withoutRootDot = (name: string): string => (name.endsWith('.') ? name.slice(0, -1) : name);
