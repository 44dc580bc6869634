import express, { type Router } from 'express';
import type { ApiDeps } from '../deps.js';
import { missingField } from '../../core/errors.js';
import { teamRoutes } from './teams.js';
import { queueRoutes } from './queue.js';
import { applianceRoutes } from './appliance.js';

export interface AdminStatus {
  version: string;
  env: string;
  pid: number;
  uptime_s: number;
  /** The roles of the process answering. */
  roles: string[];
  data_dir: string;
  /** Every svc process running on this data folder, this one included. */
  processes: AdminProcess[];
}

/** One svc process of the appliance (under systemd, one unit). */
export interface AdminProcess {
  pid: number;
  roles: string[];
  /** The sending regions its outbound role serves. */
  regions: string[];
  version: string;
  started_at: string;
  private_redis: boolean;
  this_process: boolean;
}

/**
 * Operator-only routes, served only on the admin socket (mode 0600): whoever can open the socket
 * is the operator, so no API key is asked. This is how a fresh install gets its first team and key.
 */
export function adminRouter(deps: ApiDeps, status: () => AdminStatus): Router {
  const router = express.Router();
  router.use(express.json({ limit: '1mb' }));
  router.get('/status', async (_req, res) => {
    const readiness = await deps.readiness();
    res.json({ object: 'status', ...status(), readiness });
  });
  router.post('/teams', async (req, res) => {
    res.status(201).json(await deps.foundation.teams.create(req.body?.name, req.body?.plan));
  });
  router.get('/teams', async (_req, res) => {
    res.json({ object: 'list', has_more: false, data: await deps.foundation.teams.list() });
  });
  teamRoutes(router, deps);
  queueRoutes(router, deps);
  applianceRoutes(router, deps);
  router.post('/api-keys', async (req, res) => {
    const { team: teamRef, ...input } = (req.body ?? {}) as Record<string, unknown>;
    if (typeof teamRef !== 'string') throw missingField('team');
    const team = await deps.foundation.teams.resolve(teamRef);
    const created = await deps.foundation.apiKeys.create(team.id, input, { kind: 'operator' });
    res.status(201).json({ ...created, team_id: team.id });
  });
  router.get('/api-keys', async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    const teamId = query.team ? (await deps.foundation.teams.resolve(query.team)).id : undefined;
    res.json(await deps.foundation.apiKeys.list(teamId, { ...query, status: query.status ?? 'all', limit: query.limit ?? '100' }));
  });
  // The key is named in the body, never in the path: the reference may be the leaked token itself.
  router.post('/api-keys/revoke', async (req, res) => {
    const done = await deps.foundation.apiKeys.revokeByReference((req.body as { key?: unknown } | undefined)?.key);
    if (done.revoked) deps.logger.info({ apiKeyId: done.id, teamId: done.team_id }, 'api key revoked by the operator');
    res.json(done);
  });
  router.get('/domains', async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    const teamId = query.team ? (await deps.foundation.teams.resolve(query.team)).id : undefined;
    res.json(await deps.sending.domains.list(teamId, { limit: query.limit ?? '100', after: query.after, before: query.before }));
  });
  router.post('/backup', async (req, res) => {
    const path = (req.body as { path?: unknown } | undefined)?.path;
    res.json(await deps.foundation.backup.run(typeof path === 'string' && path ? path : undefined));
  });
  router.post('/domains/:id/verify', async (req, res) => {
    res.json(await deps.sending.domains.verifyAnyTeam(req.params.id!));
  });
  return router;
}
