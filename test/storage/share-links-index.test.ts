import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../storage/sql/index.js';

// Migration 036: revoking an email's share links reads them by email through an index, not by
// scanning every team's links.
const dir = mkdtempSync(join(tmpdir(), 'svc-share-links-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('SQLite: the revoke finds an email\'s links through email_share_links_email', async (t) => {
  const database = await openDatabase({ path: join(dir, 'svc.sqlite'), synchronous: 'NORMAL' });
  t.teardown(() => database.close());
  const plan = (await sql<{ detail: string }>`explain query plan update email_share_links set revoked_at = 'x'
    where email_id = 'e1' and revoked_at is null and expires_at > 'x'`.execute(database.db)).rows.map((p) => p.detail);
  t.match(plan.join(' | '), /USING INDEX email_share_links_email \(email_id=\?\)/, plan.join(' | '));
});
