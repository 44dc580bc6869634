import t from 'tap';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { adminCall } from '../../bin/admin-client.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';

// Outside systemd (no UMask=) svc runs under the login umask, 022 on most systems. Whatever it is,
// nothing svc makes under its data folder may be readable by anyone but its owner: the database
// and its -wal/-shm, secret.key, spool files, backups, the STARTTLS pair, the admin socket.
process.umask(0o022);
const parent = mkdtempSync(join(tmpdir(), 'svc-modes-'));
t.teardown(() => rmSync(parent, { recursive: true, force: true }));
const dataDir = join(parent, 'data'); // not there yet: svc makes it

interface Entry { path: string; kind: 'file' | 'dir' | 'socket' | 'other'; mode: number }

function walk(dir: string): Entry[] {
  const out: Entry[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    const kind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSocket() ? 'socket' : 'other';
    out.push({ path: relative(dataDir, path), kind, mode: st.mode & 0o777 });
    if (kind === 'dir') out.push(...walk(path));
  }
  return out;
}

t.test('every file svc creates under the data folder is owner-only under umask 022', async (t) => {
  const rig = await startInboundRig({ env: { SVC_DATA_DIR: dataDir } });
  let stopped = false;
  t.teardown(async () => { if (!stopped) await rig.stop(); });
  const team = await rig.app.newTeam('Modes');
  rig.addDomain(team.teamId, 'modes-inbox.net');
  await rig.send({ from: 'x@far.example', to: ['a@modes-inbox.net'] }, rfc822({ From: 'x@far.example', Subject: 'modes' }, 'hello'));
  const backup = await adminCall(rig.app.adminSocket, 'POST', '/admin/backup', {});
  t.equal(backup.status, 200, JSON.stringify(backup.body));

  const entries = walk(dataDir);
  const names = entries.map((e) => e.path);
  for (const expected of ['svc.sqlite', 'svc.sqlite-wal', 'svc.sqlite-shm', 'secret.key', 'admin.sock', 'smtp-tls/key.pem', 'smtp-tls/cert.pem']) {
    t.ok(names.includes(expected), `${expected} was made`);
  }
  t.ok(names.some((n) => /^spool\/received\/[0-9a-f]{8}\/[0-9a-f-]{36}\.eml$/.test(n)), 'a received message is in the spool');
  t.ok(names.some((n) => /^backups\/backup-[^/]+\/svc\.sqlite$/.test(n)), 'the backup\'s database copy');
  t.ok(names.some((n) => /^backups\/backup-[^/]+\/backup\.json$/.test(n)), 'the backup\'s summary');
  t.ok(names.some((n) => /^backups\/backup-[^/]+\/spool\/received\/.+\.eml$/.test(n)), 'the backup\'s spool copy');
  t.equal(statSync(dataDir).mode & 0o777, 0o700, 'the data folder svc made is 0700');

  const loose = entries.filter((e) => (e.kind === 'file' ? e.mode !== 0o600 : (e.mode & 0o077) !== 0));
  t.same(loose.map((e) => `${e.path} ${e.mode.toString(8)}`), [], 'no file or folder open to group or others');
  t.same(entries.filter((e) => e.kind === 'other').map((e) => e.path), [], 'nothing but files, folders and the socket');
  await rig.stop();
  stopped = true;
});

t.test('a database an older svc left 0644 is made owner-only at the next start', async (t) => {
  chmodSync(join(dataDir, 'svc.sqlite'), 0o644);
  const app = await startTestAppliance({ env: { SVC_DATA_DIR: dataDir } });
  t.teardown(() => app.stop());
  for (const file of ['svc.sqlite', 'svc.sqlite-wal', 'svc.sqlite-shm']) {
    t.equal(statSync(join(dataDir, file)).mode & 0o777, 0o600, `${file} is 0600`);
  }
});
