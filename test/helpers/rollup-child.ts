import { once } from 'node:events';
import { metricsRollup } from '../../core/metrics/index.js';
import { openDatabase } from '../../storage/sql/index.js';

// A second process folding the same outbox as the test's appliance:
//   node rollup-child.js <sqlite file> <batch size>
// Prints "ready" once the database is open, starts when a line arrives on stdin, then prints the
// number of events it folded itself.
const [path, batch] = process.argv.slice(2);
const database = await openDatabase({ path: path!, synchronous: 'FULL' });
process.stdout.write('ready\n');
await once(process.stdin, 'data');
const { events } = await metricsRollup({ db: database.db, batchSize: Number(batch) }).catchUp();
await database.close();
process.stdout.write(`${events}\n`);
process.exit(0);
