import type { Router } from 'express';
import { validationError } from '../../core/errors.js';
import type { ApiDeps } from '../deps.js';

// The operator's hold on a team (admin socket only): its plan, suspension, review (trust), its
// usage, and its members. `:team` is an id or a unique name.
export function teamRoutes(router: Router, deps: ApiDeps): void {
  const teams = deps.foundation.teams;
  const resolve = (ref: string | undefined) => teams.resolve(ref ?? '');

  router.get('/plans', (_req, res) => {
    res.json({ object: 'list', has_more: false, data: teams.plans().map((p) => ({ object: 'plan', code: p.code, name: p.name, limits: p.limits, ramp: p.ramp, paid: p.paid })) });
  });
  router.get('/teams/:team', async (req, res) => {
    const team = await resolve(req.params.team);
    res.json({ ...team, usage: await deps.audience.team.usage(team.id) });
  });
  // Any of `status` (active | suspended), `plan` (a configured code), `trusted` (boolean).
  router.patch('/teams/:team', async (req, res) => {
    const team = await resolve(req.params.team);
    const body = (req.body ?? {}) as { status?: unknown; plan?: unknown; trusted?: unknown };
    if (body.status !== undefined && body.status !== 'active' && body.status !== 'suspended') {
      throw validationError(422, 'status', '`status` must be active or suspended.');
    }
    if (body.trusted !== undefined && typeof body.trusted !== 'boolean') throw validationError(422, 'trusted', '`trusted` must be true or false.');
    if (body.plan !== undefined) await teams.setPlan(team.id, body.plan);
    if (body.status !== undefined) await teams.setStatus(team.id, body.status);
    if (body.trusted !== undefined) await teams.setTrusted(team.id, body.trusted);
    res.json(await teams.resolve(team.id));
  });

  router.post('/teams/:team/members', async (req, res) => {
    const team = await resolve(req.params.team);
    const member = await deps.audience.members.add(team.id, req.body ?? {});
    res.status(member.created ? 201 : 200).json(member);
  });
  router.get('/teams/:team/members', async (req, res) => {
    const team = await resolve(req.params.team);
    const query = req.query as Record<string, string | undefined>;
    res.json(await deps.audience.members.list(team.id, { limit: query.limit ?? '100', after: query.after, before: query.before }));
  });
  router.delete('/teams/:team/members/:member', async (req, res) => {
    const team = await resolve(req.params.team);
    res.json(await deps.audience.members.remove(team.id, req.params.member!));
  });
}
