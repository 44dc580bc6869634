import { once } from 'node:events';
import { startTestAppliance } from './appliance.js';
import { fakeSendingDomains } from './sending.js';
import { testClock } from './test-clock.js';

// A second appliance (api role) in a process of its own, on the same data folder and Redis as the
// test's: node team-send-child.js <data dir> <redis url> <plans JSON> <team id> <domain> <clock ISO>
// Prints its base URL on one line once listening; stops when stdin ends.
const [dataDir, redisUrl, plans, teamId, domain, at] = process.argv.slice(2) as [string, string, string, string, string, string];
const app = await startTestAppliance({
  clock: testClock(new Date(at)),
  redis: { url: redisUrl, port: 0, stop: async () => undefined },
  env: { SVC_DATA_DIR: dataDir, SVC_PLANS: plans },
});
fakeSendingDomains(app).add({ teamId, name: domain });
process.stdout.write(`${app.baseUrl}\n`);
process.stdin.resume();
await once(process.stdin, 'end');
await app.stop();
process.exit(0);
