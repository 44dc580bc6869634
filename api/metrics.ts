import express, { type Express, type RequestHandler } from 'express';
import { make } from './errors.js';
import { sendError } from './middleware/send-error.js';

// The operator's GET /metrics: the exposition text a metrics scraper reads. Served on the admin
// socket (whoever can open it is the operator) and, when `ops_metrics_port` is set, on a listener
// of its own that serves nothing else: it carries no key, so it belongs on loopback or a private
// network, never beside the public API.

export interface MetricsExposition {
  contentType: string;
  render(): Promise<string>;
}

export function metricsHandler(exposition: MetricsExposition): RequestHandler {
  return (_req, res) => {
    exposition.render().then(
      (body) => { res.status(200).type(exposition.contentType).send(body); },
      () => { sendError(res, make(503, 'service_unavailable', 'The metrics could not be gathered; try again.')); },
    );
  };
}

/** The listener of `ops_metrics_port`: GET /metrics, and the spec's 404 body for anything else. */
export function metricsApp(exposition: MetricsExposition): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/metrics', metricsHandler(exposition));
  app.use((_req, res) => { sendError(res, make(404, 'not_found', 'Only GET /metrics is served here.')); });
  return app;
}
