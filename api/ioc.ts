import type { IocContainer, IocContainerFactory } from '@tsoa/runtime';
import type { Request } from 'express';
import type { ApiDeps } from './deps.js';

// tsoa asks this for a controller per request; controllers get the app's injected deps, so two
// apps in one process (tests, the admin socket) never share state by accident.
export const iocContainer: IocContainerFactory<Request> = (request: Request): IocContainer => ({
  get<T>(controller: unknown): T {
    const Ctor = controller as new (deps: ApiDeps) => T;
    return new Ctor(request.app.locals.deps as ApiDeps);
  },
});
