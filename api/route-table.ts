import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { ServiceError } from '../core/errors.js';
import { contextOf } from './context.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';


/**
 * The generated routes, reached by the operation the guard already matched (with its path
 * parameters) instead of by express's router walking every route's pattern in turn (each request
 * paid for ~60 tests). The generated code registers its routes on whatever it is given: here a
 * recorder of them.
 */
export function operationRoutes(register: (router: Router) => void): RequestHandler {
  const routes = recordRoutes(register);
  return (req: Request, res: Response, next: NextFunction) => {
    const { operation, pathParams } = contextOf(res);
    const handlers = operation && routes.get(`${operation.method} ${operation.template}`);
    if (!handlers) return next();
    try {
      req.params = decodeParameters(pathParams ?? {});
    } catch (err) {
      return next(err);
    }
    runHandlers(handlers, req, res, next);
  };
}

export function recordRoutes(register: (router: Router) => void): Map<string, RequestHandler[]> {
  const routes = new Map<string, RequestHandler[]>();
  const record = (method: Method) => (path: string, ...handlers: RequestHandler[]) => {
    routes.set(`${method.toUpperCase()} ${path.replace(/:(\w+)/g, '{$1}')}`, handlers);
    return recorder;
  };
  const recorder = { get: record('get'), post: record('post'), put: record('put'), patch: record('patch'), delete: record('delete') };
  register(recorder as unknown as Router);
  return routes;
}

function decodeParameters(raw: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    try {
      params[name] = decodeURIComponent(value);
    } catch {
      throw new ServiceError(400, 'validation_error', `The path parameter \`${name}\` is not valid percent-encoding.`);
    }
  }
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

