import t from 'tap';
import { messageCache } from '../../mta/outbound/messages.js';
import type { EmailAttachmentRow, EmailRow } from '../../storage/repos/index.js';

// The outbound message cache keeps at most its count and about its byte budget of emails: the
// oldest go first, and a later delivery of an evicted email loads it again.

function fakeDeps(attachmentBytes: number) {
  const loads: string[] = [];
  const deps = {
    emails: {
      byIdAnyTeam: async (id: string) => { loads.push(id); return { id, team_id: 't', from_email: 'a@example.com', text: 'hi', html: null, attachment_count: 1 } as unknown as EmailRow; },
      attachments: async (id: string) => [{ email_id: id, content: Buffer.alloc(attachmentBytes) } as unknown as EmailAttachmentRow],
    },
    domains: { sendingDomain: async () => ({ dkim: { domain: 'example.com', selector: 's', privateKeyPem: 'pem' }, openTracking: false, clickTracking: false }) },
    builder: { build: async () => Buffer.alloc(attachmentBytes * 2), close: async () => undefined },
    clock: { now: () => new Date() },
  };
  return { loads, deps: deps as unknown as Parameters<typeof messageCache>[0] };
}

t.test('emails over the byte budget are evicted oldest first and loaded again when needed', async (t) => {
  const { loads, deps } = fakeDeps(1000); // about 3,000 bytes an email once built
  const messageFor = messageCache(deps, 500, 10_000);
  for (const id of ['e1', 'e2', 'e3', 'e4', 'e5']) t.ok(await messageFor(id, 0));
  t.same(loads, ['e1', 'e2', 'e3', 'e4', 'e5']);
  await messageFor('e5', 1); // the newest is kept
  await messageFor('e1', 1); // the oldest went
  t.same(loads, ['e1', 'e2', 'e3', 'e4', 'e5', 'e1']);
});

t.test('the newest email stays even when larger than the budget', async (t) => {
  const { loads, deps } = fakeDeps(50_000);
  const messageFor = messageCache(deps, 500, 10_000);
  await messageFor('big', 0);
  await messageFor('big', 1);
  t.same(loads, ['big']);
});

t.test('within the budget, the count bounds the cache', async (t) => {
  const { loads, deps } = fakeDeps(10);
  const messageFor = messageCache(deps, 2);
  for (const id of ['e1', 'e2', 'e3']) await messageFor(id, 0);
  await messageFor('e3', 1);
  await messageFor('e1', 1);
  t.same(loads, ['e1', 'e2', 'e3', 'e1']);
});
