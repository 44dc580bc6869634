import express, { type Express, type Router } from 'express';
import generatedDocument from './generated/swagger.json' with { type: 'json' };
import { RegisterRoutes } from './generated/routes.js';
import type { ApiDeps } from './deps.js';
import { publishedDocument } from './openapi-document.js';
import { operationMatcher } from './operations.js';
import { requestContext } from './middleware/context.js';
import { guard } from './middleware/guard.js';
import { setRateHeaders } from './middleware/rate-headers.js';
import { requestLog } from './middleware/request-log.js';
import { publicRateLimit } from './middleware/public-rate-limit.js';
import { errorHandler } from './middleware/error-handler.js';
import { metricsHandler, type MetricsExposition } from './metrics.js';
import { jsonBody as boundedJsonBody } from './middleware/json-body.js';
import { operationRoutes } from './route-table.js';
import { brandKitRoutes } from './public/brand-kit.js';
import { receivedDownloads } from './public/received-downloads.js';
import { sentEmailRoutes } from './public/sent-emails.js';
import { preferenceRoutes } from './public/preferences.js';

/** The document served at /openapi.json and routed by (api/openapi-document.ts). */
const openapiDocument = publishedDocument(generatedDocument);

export interface AppOptions {
  /** Extra routes mounted at /admin: only the admin socket's app gets them. */
  admin?: Router;
  /** The operator's GET /metrics (./metrics.ts): only the admin socket's app serves it. */
  metrics?: MetricsExposition;
}

/** The HTTP stack: every route gets the contract layer (404/405, User-Agent, auth, rate limit, log). */
export function httpApp(deps: ApiDeps, options: AppOptions = {}): Express {
  const app = express();
  app.locals.deps = deps;
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.use(requestContext);
  if (options.admin) app.use('/admin', options.admin);
  if (options.metrics) app.get('/metrics', metricsHandler(options.metrics));
  const router = publicRouter(deps);
  app.use('/api/v1', router);
  app.use(router);
  app.use(errorHandler(deps));
  return app;
}

function publicRouter(deps: ApiDeps): Router {
  const router = express.Router();
  // The spec's rate headers on every response: a full bucket for what charges no team (the
  // OpenAPI document, health, a refused key); the guard and the public routes' bucket replace
  // them with the bucket a request spent from.
  router.use((_req, res, next) => { setRateHeaders(res, deps.rateLimit.untouched()); next(); });
  router.get('/openapi.json', (_req, res) => { res.json(openapiDocument); });
  // Signed downloads, share pages and brand kit images: the link is the credential (an image is
  // public), so they sit before the contract layer, each behind the per-client bucket (no key, no
  // team to charge). Plain routes on this router: a sub-router would be entered by every request.
  const limited = publicRateLimit(deps.publicRateLimit);
  receivedDownloads(router, limited, deps.inbox.receiving, deps.logger);
  sentEmailRoutes(router, limited, deps.sending.shares, deps.logger);
  brandKitRoutes(router, limited, deps.audience.brandKitUploads, deps.logger);
  preferenceRoutes(router, limited, deps.audience.preferences, deps.logger);
  // The log hook goes first so that a request refused after authentication (429) is logged too.
  router.use(requestLog(deps));
  router.use(guard(deps, operationMatcher(openapiDocument)));
  // An empty body sent as application/json means "no body" (SDKs send the header on every call).
  // GET and HEAD carry no body svc reads: not even looked for. Bodies are held to shape bounds
  // (depth, members) before any validator walks them.
  const jsonBody = boundedJsonBody(deps.bodyLimitBytes);
  router.use((req, res, next) => (req.method === 'GET' || req.method === 'HEAD' ? next() : jsonBody(req, res, next)));
  router.use(operationRoutes(RegisterRoutes));
  return router;
}

export { openapiDocument };
