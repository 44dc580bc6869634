import t from 'tap';
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { eventWithin, exitWithin, waitFor, withDeadline } from './helpers/deadline.js';

// The suite's own rules: every test file ends (a file-level timeout), every wait goes through the
// one bounded helper (test/helpers/deadline.ts), and no test passes through a fallback that
// asserts nothing. This file runs from dist/test/; it reads the TypeScript sources. Then the
// shared waits themselves.
const root = resolve(import.meta.dirname, '../..');
const testRoot = join(root, 'test');

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : sourcesUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const sources = sourcesUnder(testRoot).map((path) => ({ name: relative(root, path), text: readFileSync(path, 'utf8') }));
const offenders = (pattern: RegExp, except: string[] = []) => sources.filter((s) => !except.includes(s.name) && pattern.test(s.text)).map((s) => s.name);

t.test('every test file has a finite file-level timeout', async (t) => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { tap?: { timeout?: unknown } };
  const timeout = pkg.tap?.timeout;
  t.type(timeout, 'number', 'package.json sets tap.timeout');
  t.ok(Number(timeout) > 0 && Number(timeout) <= 600, `a finite timeout of at most ten minutes per file (${String(timeout)} s)`);
  const script = readFileSync(join(root, 'scripts/test.sh'), 'utf8');
  t.match(script, /node dist\/test\/run-suite\.js/, 'scripts/test.sh runs the suite with test/run-suite.ts');
  const runner = readFileSync(join(testRoot, 'run-suite.ts'), 'utf8');
  t.match(runner, /TAP_TIMEOUT: String\(timeoutS\)/, 'which hands every file that timeout');
  t.match(runner, /const hardLimitMs = 15 \* 60_000;/, 'and kills a file hung past tap\'s own timer');
  t.notMatch(script + runner, /--timeout[= ]0\b|--no-timeout|TAP_TIMEOUT=0\b/, 'the runner does not switch it off');
  t.same(offenders(/\bt\.setTimeout\(\s*0\s*\)/), [], 'no test file switches it off either');
});

t.test('the runner lists the files that used the most CPU', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-runner-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const burner = join(dir, 'burner.test.js');
  writeFileSync(burner, [
    'const end = Date.now() + 600;',
    'while (Date.now() < end);',
    "console.log('TAP version 14\\nok 1 - burned 0.6 s of CPU\\n1..1\\n# { total: 1, pass: 1 }\\n# time=600ms');",
  ].join('\n'));
  const runner = spawn(process.execPath, [join(root, 'dist/test/run-suite.js'), '--jobs=1', burner], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  runner.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  const code = await withDeadline('the runner to run one file', new Promise<number | null>((done) => runner.once('close', done)), 60_000);
  t.equal(code, 0, `the runner passes the file:\n${out}`);
  const listed = out.match(/^#\s+([\d.]+) s\s+\S*burner\.test\.js$/m);
  t.ok(listed, `the file is listed by its CPU:\n${out}`);
  t.ok(Number(listed?.[1]) >= 0.4, `with the CPU it used (${listed?.[1]} s of about 0.6)`);
});

t.test('waits are bounded by the one shared helper, not copies', async (t) => {
  t.ok(sources.length >= 100, `the check reads the test sources (${sources.length} files)`);
  const helper = 'test/helpers/deadline.ts';
  t.same(offenders(/\bfunction (waitFor|withDeadline|within)\b|\bconst (waitFor|withDeadline|within)\s*=/, [helper]), [], `waitFor and withDeadline are defined in ${helper} only`);
  t.ok(sources.filter((s) => /from '\.{1,2}\/(helpers\/)?deadline\.js'/.test(s.text)).length >= 20, 'and used across the suite');
});

t.test('no test passes through a fallback that asserts nothing', async (t) => {
  const self = 'test/suite.test.ts';
  t.same(offenders(/\bt\.pass\(/, [self]), [], 'no t.pass: each check asserts what it claims');
  t.same(offenders(/\belse\s+t\.comment\(|\belse\s*\{\s*t\.comment\(/, [self]), [], 'no assertion falls back to a comment');
  t.same(offenders(/\bif\s*\(.*\)\s*\{?\s*t\.comment\(.*\);\s*continue;/, [self]), [], 'no check is skipped behind a comment');
});

t.test('the shared waits end, naming what they waited for', async (t) => {
  await t.rejects(waitFor('a thing that never comes', async () => false, 200), /timed out after 200 ms waiting for a thing that never comes/);
  const hanging = waitFor('a check that never answers', () => new Promise<never>(() => undefined), 200);
  await t.rejects(hanging, /timed out after 200 ms waiting for a check that never answers/, 'a check that hangs is cut off too');
  let calls = 0;
  t.equal(await waitFor('the third look', async () => (++calls === 3 ? 'seen' : undefined), 5000, 1), 'seen', 'answers the value once it comes');
  await t.rejects(waitFor('a check that throws', async () => { throw new Error('broken probe'); }, 5000), /broken probe/, 'a failing check fails at once');
  await t.rejects(withDeadline('a promise that never settles', new Promise(() => undefined), 100), /timed out after 100 ms waiting for a promise that never settles/);
  t.equal(await withDeadline('a settled promise', Promise.resolve(7), 100), 7);
  const emitter = new EventEmitter();
  await t.rejects(eventWithin('an event never emitted', emitter, 'ready', 100), /waiting for an event never emitted/);
  t.equal(emitter.listenerCount('ready') + emitter.listenerCount('error'), 0, 'its listeners are removed');
  const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
  await t.rejects(exitWithin('a child that does not exit', sleeper, 200), /waiting for a child that does not exit/);
  sleeper.kill('SIGKILL');
  await exitWithin('the killed child to exit', sleeper, 10_000);
  t.not(sleeper.signalCode, null, 'a child that exits is seen exiting');
});
