import { Extension, Get, OperationId, Response, Route, Tags } from '@tsoa/runtime';
import type { Liveness, Readiness } from '../../core/health.js';
import { SvcController } from './base.js';

@Route('')
@Tags('operations')
export class HealthController extends SvcController {
  /**
   * Liveness: the process answers. Needs neither key nor User-Agent.
   * @summary Liveness
   */
  @Get('health')
  @OperationId('getHealth')
  @Extension('x-svc-permission', 'none')
  @Extension('x-svc-scope', null)
  public async health(): Promise<Liveness> {
    return { status: 'ok', version: this.deps.version, env: this.deps.env };
  }

  /**
   * Readiness: SQLite, Redis and (when configured) clamd answer; 503 with `failed` otherwise.
   * Needs neither key nor User-Agent.
   * @summary Readiness
   */
  @Get('ready')
  @OperationId('getReadiness')
  @Response<Readiness>(503, 'Not ready: `failed` names the checks that did not answer.')
  @Extension('x-svc-permission', 'none')
  @Extension('x-svc-scope', null)
  public async ready(): Promise<Readiness> {
    const readiness = await this.deps.readiness();
    if (readiness.status !== 'ok') this.setStatus(503);
    return readiness;
  }
}
