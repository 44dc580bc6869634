import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { schema, envName } from '../config/schema.js';
import { startTestAppliance } from './helpers/appliance.js';
import { waitFor } from './helpers/deadline.js';
import { call } from './helpers/http.js';

// Tests run from dist/test; the docs live at the repository root.
const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

t.test('docs/configuration.md lists every config key with its environment name', async (t) => {
  const page = read('docs/configuration.md');
  for (const key of Object.keys(schema)) {
    t.match(page, `\`${key}\` (\`${envName(key)}\`)`, `${key} is documented`);
  }
});

t.test('README names the two commands and .ci/run calls the test one', async (t) => {
  const readme = read('README.md');
  t.match(readme, /make run/);
  t.match(readme, /make test/);
  t.match(read('.ci/run'), /^make test$/m);
});

// The SVC_ prefix is svc's: the loader stops at any SVC_ variable that is not a setting, so a page
// that names another (the README once said `export SVC_KEY=…`) breaks every later command.
const settings = new Set([...Object.keys(schema).map(envName), 'SVC_CONFIG']);
const pages = ['README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

t.test('every SVC_ name the README and docs give is one of svc\'s settings', async (t) => {
  for (const page of pages) {
    const named = [...read(page).matchAll(/\bSVC_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]);
    // scripts/install.sh reads SVC_INSTALL_* itself; they never reach svc.
    const strangers = [...new Set(named.filter((name) => !settings.has(name) && !name.startsWith('SVC_INSTALL_')))];
    t.same(strangers, [], `${page} names only real settings`);
  }
  const exported = [...read('README.md').matchAll(/^export ([A-Z0-9_]+)=/gm)].map((m) => m[1]!);
  t.ok(exported.includes('RESEND_API_KEY'), 'the README keeps the API key where the SDK reads it');
  t.same(exported.filter((name) => name.startsWith('SVC_')), [], 'and has the reader export no SVC_ name');
  t.match(read('docs/configuration.md'), /The `SVC_` prefix is reserved for svc's settings/, 'docs/configuration.md says the prefix is reserved');
});

t.test('the README\'s SDK snippet runs as written, with the variables the README exports', async (t) => {
  const readme = read('README.md');
  const snippet = /From an SDK[^]*?```js\n([^]*?)```/.exec(readme)?.[1];
  t.ok(snippet, 'the README has an SDK snippet');
  if (!snippet) return;
  // A fresh appliance as `make run` starts it (every sending role), no domain and no DNS.
  const app = await startTestAppliance({ roles: ['api', 'outbound'] });
  t.teardown(() => app.stop());
  const team = await app.newTeam('Readme');
  // Inside the project so that `resend` resolves from its node_modules, as after `npm install resend`.
  const file = fileURLToPath(new URL(`dist/readme-first-${process.pid}.mjs`, root));
  writeFileSync(file, snippet);
  t.teardown(() => rmSync(file, { force: true }));
  const run = await promisify(execFile)(process.execPath, [file], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', RESEND_API_KEY: team.token, RESEND_BASE_URL: app.baseUrl }, timeout: 30_000,
  });
  t.notMatch(run.stdout, /statusCode|name: '[a-z_]+_error'/, 'no error');
  const id = /id: '([0-9a-f-]{36})'/.exec(run.stdout)?.[1];
  t.ok(id, `it prints the email's id: ${run.stdout}`);
  const email = await waitFor('the first email delivered by the simulator', async () => {
    const got = await call(app.baseUrl, 'GET', `/emails/${id}`, { token: team.token });
    return got.body.last_event === 'delivered' ? got.body : undefined;
  });
  t.match(email, { from: /onboarding@simulator\.svc\.invalid/, to: ['delivered@simulator.svc.invalid'] });
});
