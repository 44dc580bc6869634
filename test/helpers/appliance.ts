import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { startAppliance, type Appliance, type Role } from '../../bin/appliance.js';
import type { ApiRole } from '../../bin/roles/api.js';
import type { Clock } from '../../core/clock.js';
import { startTestRedis, type TestRedis } from './redis.js';

export interface TestAppliance {
  baseUrl: string;
  config: Config;
  appliance: Appliance;
  redis: TestRedis;
  adminSocket: string;
  /** Creates a team and a key over the admin socket's core services; returns the token. */
  newTeam(name?: string, permission?: 'full_access' | 'sending_access'): Promise<{ teamId: string; keyId: string; token: string }>;
  stop(): Promise<void>;
}

export interface TestApplianceOptions {
  env?: Record<string, string>;
  roles?: Role[];
  clock?: Clock;
  redis?: TestRedis;
  /** database_url: a PostgreSQL database (test/helpers/postgres.ts) instead of the SQLite file. */
  databaseUrl?: string;
  /** Where the appliance's pino lines go (set SVC_LOG_LEVEL in `env` too: the default is silent). */
  logDestination?: { write(line: string): void };
}

/** A real appliance on loopback: temp data folder, real SQLite file, private Redis on a free port. */
export async function startTestAppliance(options: TestApplianceOptions = {}): Promise<TestAppliance> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const redis = options.redis ?? (await startTestRedis());
  const config = loadConfig({
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_HOST: '127.0.0.1',
    SVC_HTTP_PORT: '0',
    SVC_REDIS_URL: redis.url,
    SVC_LOG_LEVEL: 'silent',
    // Tests that scan start their own clamd; none should pick up a machine's by `auto`.
    SVC_SCANNER_CLAMD: '',
    SVC_LOGS_FLUSH_MS: '20',
    // A fully qualified name of the test's own: the machine's may be a bare one, which svc refuses.
    SVC_MAIL_HOSTNAME: 'mta.svc-test.net',
    // Roomy by default: a test that fires requests quickly must not meet the spec's 10/s bucket by
    // chance. test/api/rate-limit.test.ts sets the spec's figures itself.
    SVC_RATE_LIMIT_BURST: '100000',
    SVC_RATE_LIMIT_PER_SECOND: '100000',
    // Same for the per-client bucket of the public routes (test/api/public-rate-limit.test.ts).
    SVC_PUBLIC_RATE_LIMIT_BURST: '100000',
    SVC_PUBLIC_RATE_LIMIT_PER_SECOND: '100000',
    ...(options.databaseUrl ? { SVC_DATABASE_URL: options.databaseUrl } : {}),
    ...options.env,
  });
  const appliance = await startAppliance({
    config, roles: options.roles ?? ['api'], logger: options.logDestination ? pino({ level: config.log_level }, options.logDestination) : pino({ level: config.log_level }), version: 'test', clock: options.clock,
  });
  const api = appliance.running.find((r) => r.name === 'api') as ApiRole | undefined;
  const services = appliance.services.api;
  return {
    baseUrl: api ? `http://127.0.0.1:${api.http.port}` : '',
    config,
    appliance,
    redis,
    adminSocket: api?.admin.address ?? '',
    async newTeam(name = 'Team', permission = 'full_access') {
      const team = await services.foundation.teams.create(name);
      const key = await services.foundation.apiKeys.create(team.id, { name: `${name} key`, permission }, { kind: 'operator' });
      return { teamId: team.id, keyId: key.id, token: key.token };
    },
    async stop() {
      await appliance.stop();
      if (!options.redis) await redis.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
