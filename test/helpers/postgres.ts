import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';

// A real PostgreSQL for tests, each test (or test file) in a database of its own. The server is,
// in order: the one SVC_TEST_PG_URL names (a URL whose user may create databases); the one this
// machine and CI run at 127.0.0.1:5432 (trust auth, user postgres); else a private cluster made
// with initdb in a temp folder on a free port, run as the `postgres` OS user when we are root (the
// server refuses to run as root) and stopped when this process exits.

export interface TestDatabase {
  /** postgres://… of the fresh, empty database. */
  url: string;
  name: string;
  /** Drops the database (closing whatever connections are still open on it). */
  drop(): Promise<void>;
}

const LOCAL_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

let server: Promise<string> | undefined;

/** The maintenance URL of the server tests use (found or started once per process). */
export function testPostgresServer(): Promise<string> {
  server ??= findServer();
  return server;
}

/** A new empty database `svc_test_<random>` on the test server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = await testPostgresServer();
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  await withClient(admin, (c) => c.query(`create database ${name}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await withClient(admin, (c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

async function findServer(): Promise<string> {
  const given = process.env.SVC_TEST_PG_URL;
  if (given) return given;
  if (await answers(LOCAL_URL)) return LOCAL_URL;
  return startPrivateCluster();
}

async function answers(url: string): Promise<boolean> {
  try {
    await withClient(url, (c) => c.query('select 1'));
    return true;
  } catch {
    return false;
  }
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The folder holding initdb and pg_ctl: the newest /usr/lib/postgresql/<version>/bin. */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  throw new Error('test postgres: no server at 127.0.0.1:5432, no SVC_TEST_PG_URL and no initdb under /usr/lib/postgresql (make setup installs postgresql)');
}

/** Runs a PostgreSQL program, as the postgres OS user when this process is root. */
function runAsServerUser(program: string, args: string[]): void {
  const asRoot = userInfo().uid === 0;
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
  const result = spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`test postgres: ${program} failed: ${(result.stderr || result.stdout || String(result.error)).trim().slice(0, 500)}`);
}

/** A private cluster on a free loopback port (trust auth, user postgres), stopped at exit. */
export async function startPrivateCluster(): Promise<string> {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  const data = join(dir, 'data');
  if (userInfo().uid === 0) {
    const owner = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (owner.status !== 0) throw new Error('test postgres: running as root and there is no postgres OS user to run the server');
    chownSync(dir, Number(owner.stdout.trim()), Number(group.stdout.trim()));
  }
  runAsServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  const port = await freePort();
  const stop = () => {
    try {
      runAsServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']);
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  try {
    runAsServerUser(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`, 'start']);
  } catch (err) {
    process.removeListener('exit', stop);
    stop();
    throw err;
  }
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}
