import type { Router } from 'express';
import { invalidParameter, missingField } from '../../core/errors.js';
import type { ApiDeps } from '../deps.js';

// The operator's checks of the appliance itself (admin socket only): `svc admin check dns` and
// `svc admin send-test` (which the CLI then follows with GET /queue/:id).
export function applianceRoutes(router: Router, deps: ApiDeps): void {
  router.post('/check/dns', async (req, res) => {
    const { port25_target: target, timeout_ms: timeout } = (req.body ?? {}) as Record<string, unknown>;
    if (target !== undefined && (typeof target !== 'string' || target === '')) throw invalidParameter('port25_target', '`port25_target` must be host[:port].');
    if (timeout !== undefined && (!Number.isSafeInteger(timeout) || (timeout as number) < 100 || (timeout as number) > 60_000)) {
      throw invalidParameter('timeout_ms', '`timeout_ms` must be a whole number of milliseconds from 100 to 60000.');
    }
    res.json(await deps.foundation.checkDns({ port25Target: target as string | undefined, timeoutMs: timeout as number | undefined }));
  });

  // The team's own send path, as the team (no key): what a customer's first send would meet.
  router.post('/send-test', async (req, res) => {
    const { team: teamRef, to, from } = (req.body ?? {}) as Record<string, unknown>;
    if (typeof teamRef !== 'string') throw missingField('team');
    const team = await deps.foundation.teams.resolve(teamRef);
    res.status(201).json({ object: 'test_send', team_id: team.id, to, ...(await deps.sending.emails.sendTest(team.id, { to, from })) });
  });
}
