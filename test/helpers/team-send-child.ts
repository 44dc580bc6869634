import { once } from 'node:events';
import { httpApp } from '../../api/app.js';
import { listenTcp } from '../../api/server.js';
import { startTestAppliance } from './appliance.js';
import { fakeSendingDomains } from './sending.js';
import { testClock } from './test-clock.js';

// A second appliance process on the same data folder and Redis as the test's, answering the API:
//   node team-send-child.js <data dir> <redis url> <plans JSON> <team id> <domain> <clock ISO>
// It starts no role (the data folder's api lock is the first process's) and serves the same HTTP
// stack itself. Prints its base URL on one line once listening; stops when stdin ends.
const [dataDir, redisUrl, plans, teamId, domain, at] = process.argv.slice(2) as [string, string, string, string, string, string];
const app = await startTestAppliance({
  clock: testClock(new Date(at)),
  redis: { url: redisUrl, port: 0, stop: async () => undefined },
  env: { SVC_DATA_DIR: dataDir, SVC_PLANS: plans },
  roles: [],
});
fakeSendingDomains(app).add({ teamId, name: domain });
const server = await listenTcp(httpApp(app.appliance.services.api), '127.0.0.1', 0);
process.stdout.write(`http://127.0.0.1:${server.port}\n`);
process.stdin.resume();
await once(process.stdin, 'end');
await server.close();
await app.stop();
process.exit(0);
