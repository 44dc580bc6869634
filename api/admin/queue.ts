import type { Router } from 'express';
import { traceFilterOf, type AttemptTraceLine } from '../../core/emails/index.js';
import type { ApiDeps } from '../deps.js';

// The operator's queue tools (admin socket only): `svc admin queue …` and `svc admin trace`.
// Reads answer JSON; the trace is a stream of JSON lines (one per attempt) until the client hangs
// up or the process stops.
export function queueRoutes(router: Router, deps: ApiDeps): void {
  const queue = deps.sending.queue;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

  router.get('/queue/summary', async (req, res) => {
    res.json(await queue.summary({ region: text(req.query.region), limit: text(req.query.limit) }));
  });
  router.get('/queue', async (req, res) => {
    const q = req.query;
    const teamId = text(q.team) ? (await deps.foundation.teams.resolve(text(q.team)!)).id : undefined;
    res.json(await queue.list({
      region: text(q.region), domain: text(q.domain), state: text(q.state), teamId, olderThan: text(q.older_than), limit: text(q.limit),
    }));
  });
  router.get('/queue/:id', async (req, res) => {
    res.json(await queue.show(req.params.id!, { recipient: text(req.query.recipient), body: req.query.body === 'true' }));
  });
  router.post('/queue/flush', async (req, res) => { res.json(await queue.flush(req.body ?? {})); });
  router.post('/queue/hold', async (req, res) => { res.json(await queue.hold(req.body ?? {})); });
  router.post('/queue/release', async (req, res) => { res.json(await queue.release(req.body ?? {})); });
  router.post('/queue/:id/delete', async (req, res) => {
    res.json(await queue.remove(req.params.id!, (req.body as { reason?: unknown } | undefined)?.reason));
  });

  // `?target=` an email id, an address or a destination domain; none: every attempt.
  router.get('/trace', (req, res) => {
    const filter = traceFilterOf(text(req.query.target));
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    // The first line says the watch has begun: the client (and a test) knows nothing is missed after it.
    res.write(`${JSON.stringify({ object: 'trace', watching: filter })}\n`);
    const stop = deps.sending.traces.watch(filter, (line: AttemptTraceLine) => res.write(`${JSON.stringify(line)}\n`), () => res.end());
    res.on('close', stop);
  });
}
