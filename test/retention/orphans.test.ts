import t from 'tap';
import { existsSync } from 'node:fs';
import { utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import type { Logger } from '../../core/logger.js';
import { sweepOrphanRaw } from '../../core/retention/orphans.js';
import { startFullOrphanSweep, sweepOrphanRawJob } from '../../jobs/retention.js';
import { receivedRawKey } from '../../storage/files/index.js';
import { rfc822, startInboundRig } from '../helpers/inbound-rig.js';
import { testClock } from '../helpers/test-clock.js';

// Received mail is written at its record's name and fsynced before the record commits. A crash in
// between leaves a raw file under received/ that no record names; sweepIncoming only looks at
// incoming/. The orphan sweep removes such files once they are an hour old, and never a file a
// record owns.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const clock = testClock();
const rig = await startInboundRig({ clock });
t.teardown(() => rig.stop());
const team = await rig.app.newTeam('Orphans');
rig.addDomain(team.teamId, 'orphan-inbox.net');
const services = rig.app.appliance.services;
const { spool, routing } = services.receiving;
const deps = { db: services.database.db, spool, clock };

const send = async (raw: string) => (await rig.send({ from: 'env@far.example', to: ['desk@orphan-inbox.net'] }, raw)).id;
/** A raw file as DATA leaves it after the fsync and before the commit: durable, named, no record. */
async function crashLeftover(id: string, ageMs: number): Promise<string> {
  const writer = await spool.create(receivedRawKey(id));
  await writer.write(Buffer.from('Subject: never committed\r\n\r\nbody\r\n'));
  await writer.finish();
  await age(receivedRawKey(id), ageMs);
  return receivedRawKey(id);
}
const age = async (key: string, ageMs: number) => {
  const at = new Date(clock.now().getTime() - ageMs);
  await utimes(join(spool.dir, key), at, at);
};

function recordingLogger(): Logger & { lines: { obj: Record<string, unknown>; msg?: string }[] } {
  const lines: { obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (obj: object, msg?: string) => { lines.push({ obj: obj as Record<string, unknown>, msg }); };
  const logger = { lines, info: at, warn: at, error: at, debug: at, child: () => logger };
  return logger;
}

t.test('sweepIncoming does not cover received/: a crash leftover there survives it', async (t) => {
  const leftover = await crashLeftover(uuidv7(), 2 * HOUR);
  t.equal(await spool.sweepIncoming(HOUR, clock.now().getTime()), 0, 'incoming/ has nothing to sweep');
  t.ok(await spool.exists(leftover), 'the received/ leftover is still there');
  await spool.remove(leftover);
});

t.test('files no record owns go once an hour old; owned files and young ones stay', async (t) => {
  const kept = await send(rfc822({ From: 'x@far.example', Subject: 'kept' }, 'kept body'));
  const parseFailed = await send('no header section at all\r\n');
  const real = routing.mailboxes;
  routing.mailboxes = { claims: async () => false };
  const noMailbox = await send(rfc822({ From: 'x@far.example', Subject: 'dropped' }, 'dropped body'));
  routing.mailboxes = real;
  for (const id of [kept, parseFailed]) await age(receivedRawKey(id), 30 * DAY);

  const oldLeftover = await crashLeftover(uuidv7(), 2 * HOUR);
  const youngLeftover = await crashLeftover(uuidv7(), 10 * 60_000);
  // A dropped record whose raw name was not removed after its commit (a crash right then).
  const droppedLeftover = await crashLeftover(noMailbox, 2 * HOUR);

  const result = await sweepOrphanRaw(deps);
  t.match(result, { removed: 2 }, 'the old crash leftover and the dropped record\'s stray name');
  t.notOk(await spool.exists(oldLeftover), 'no record: removed');
  t.notOk(await spool.exists(droppedLeftover), 'the record exists but keeps no raw source: removed');
  t.ok(await spool.exists(youngLeftover), 'ten minutes old: its commit may still be on the way, kept');
  t.ok(await spool.exists(receivedRawKey(kept)), 'a kept message\'s raw file stays, however old');
  t.ok(await spool.exists(receivedRawKey(parseFailed)), 'a parse_failed drop\'s raw source stays');
  const got = await rig.api(team.token, 'GET', `/emails/receiving/${kept}`);
  t.equal((await fetch(got.body.raw.download_url)).status, 200, 'and still downloads');

  clock.advance(HOUR);
  t.match(await sweepOrphanRaw(deps), { removed: 1 }, 'an hour later the young leftover is old enough');
  t.notOk(await spool.exists(youngLeftover));
  t.ok(await spool.exists(receivedRawKey(kept)));
});

t.test('the hourly job looks at the last two days; the start-up sweep at every folder', async (t) => {
  const longAgo = clock.now().getTime() - 10 * DAY;
  const oldFolderLeftover = await crashLeftover(uuidv7({ msecs: longAgo }), 10 * DAY);
  const folder = join(spool.dir, oldFolderLeftover.split('/').slice(0, 2).join('/'));
  const job = sweepOrphanRawJob(deps);
  t.equal(job.name, 'sweep-orphan-raw');
  t.match(await job.run(), { removed: 0 }, 'a folder ten days old is outside the hourly window');
  t.ok(await spool.exists(oldFolderLeftover));

  const logger = recordingLogger();
  await startFullOrphanSweep(deps, logger).done;
  t.match(logger.lines, [{ obj: { job: 'sweep-orphan-raw', full: true, result: { removed: 1, empty_folders_removed: 1 } }, msg: 'job finished' }],
    'one line with its counts');
  t.notOk(await spool.exists(oldFolderLeftover), 'the start-up sweep finds it');
  t.notOk(existsSync(folder), 'and removes the per-minute folder it left empty');
});
