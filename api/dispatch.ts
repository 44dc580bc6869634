import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { ServiceError } from '../core/errors.js';
import { contextOf } from './context.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface RouteEntry {
  handlers: RequestHandler[];
  /** Path parameter names in order, and the pattern capturing their values. */
  names: string[];
  pattern: RegExp;
}

/**
 * The generated routes, reached by the operation the guard already matched instead of by
 * express's router walking every route's pattern in turn (each request paid for ~60 tests). The
 * generated code registers its routes on whatever it is given: here a recorder of them.
 */
export function operationRoutes(register: (router: Router) => void): RequestHandler {
  const routes = recordRoutes(register);
  return (req: Request, res: Response, next: NextFunction) => {
    const operation = contextOf(res).operation;
    const route = operation && routes.get(`${operation.method} ${operation.template}`);
    if (!route) return next();
    try {
      req.params = pathParameters(route, req.path);
    } catch (err) {
      return next(err);
    }
    runHandlers(route.handlers, req, res, next);
  };
}

export function recordRoutes(register: (router: Router) => void): Map<string, RouteEntry> {
  const routes = new Map<string, RouteEntry>();
  const record = (method: Method) => (path: string, ...handlers: RequestHandler[]) => {
    const template = path.replace(/:(\w+)/g, '{$1}');
    const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const pattern = new RegExp('^' + path.split('/').map((s) => (s.startsWith(':') ? '([^/]+)' : escape(s))).join('/') + '/?$');
    routes.set(`${method.toUpperCase()} ${template}`, { handlers, names, pattern });
    return recorder;
  };
  const recorder = { get: record('get'), post: record('post'), put: record('put'), patch: record('patch'), delete: record('delete') };
  register(recorder as unknown as Router);
  return routes;
}

function pathParameters(route: RouteEntry, path: string): Record<string, string> {
  const params: Record<string, string> = {};
  if (route.names.length === 0) return params;
  const values = route.pattern.exec(path);
  route.names.forEach((name, i) => {
    const raw = values?.[i + 1] ?? '';
    try {
      params[name] = decodeURIComponent(raw);
    } catch {
      throw new ServiceError(400, 'validation_error', `The path parameter \`${name}\` is not valid percent-encoding.`);
    }
  });
  return params;
}

/** As express runs a route's handlers: each calls next() to pass on, or next(err) to fail. */
function runHandlers(handlers: RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let index = 0;
  const step = (err?: unknown): void => {
    if (err !== undefined && err !== 'route') return done(err);
    const handler = handlers[index++];
    if (!handler || err === 'route') return done();
    try {
      const returned = handler(req, res, step) as unknown;
      if (returned instanceof Promise) returned.catch(step);
    } catch (thrown) {
      step(thrown);
    }
  };
  step();
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
