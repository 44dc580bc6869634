import { readFileSync } from 'node:fs';

// Report samples kept as fixtures (test/fixtures/reports/*.eml) with {{…}} placeholders for the
// addresses a test fills in; lines are sent with CRLF as an MTA would.

const fixtures = new URL('../../../test/fixtures/reports/', import.meta.url);

export const values = {
  VERP: 'bounces+0193a5b0c1d27e3f8a9b0c1d2e3f4a5b-0@send.sender.net',
  RECIPIENT: 'ann@mailbox-provider.net',
  MESSAGE_ID: '<0193a5b0-c1d2-7e3f-8a9b-0c1d2e3f4a5b@sender.net>',
  FEEDBACK: 'feedback@mx.svc-test.net',
};

export function fixture(name: string, fill: Record<string, string> = values): Buffer {
  const text = readFileSync(new URL(name, fixtures), 'utf8').replace(/\{\{(\w+)\}\}/g, (_, key: string) => fill[key] ?? '');
  return Buffer.from(text.replace(/\r?\n/g, '\r\n'));
}
