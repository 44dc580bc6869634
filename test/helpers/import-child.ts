import { explicitMembership } from '../../core/segments/index.js';
import pino from 'pino';
import { systemClock } from '../../core/clock.js';
import { contactImportWork, threadedBatchReader } from '../../core/contact-imports/index.js';
import { consentHasher } from '../../core/contacts/index.js';
import { durableWorker } from '../../core/work/index.js';
import { startWorkRunner } from '../../jobs/work-runner.js';
import { openDatabase } from '../../storage/sql/index.js';

// A process working contact imports with the durable worker until killed:
//   node import-child.js <sqlite file> <imports folder> <lease ms> <rows per step>
// The test kills it with SIGKILL mid-import, starts it again, and at the end checks that every
// count is exact and every contact exists once.
const [path, folder, leaseMs, rows] = process.argv.slice(2);
const database = await openDatabase({ path: path!, synchronous: 'FULL' });
const logger = pino({ level: 'silent' });
const handler = contactImportWork({
  db: database.db, clock: systemClock, logger, reader: threadedBatchReader(folder!), hash: consentHasher(Buffer.alloc(32, 7)),
  contactLimit: async () => 0, segments: explicitMembership(database.db), batchRows: Number(rows), batchBytes: 4 * 1024 * 1024,
});
const worker = durableWorker({ db: database.db, clock: systemClock, logger, handlers: [handler], leaseMs: Number(leaseMs), concurrency: 2, stepsPerTurn: 5 });
startWorkRunner(worker, 20, logger);
process.stdout.write('ready\n');
