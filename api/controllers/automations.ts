import {
  Body, Delete, Extension, Get, OperationId, Patch, Path, Post, Query, Request, Response, Route, SuccessResponse, Tags,
} from '@tsoa/runtime';
import type { Request as ExRequest } from 'express';
import type { ListEnvelope } from '../../core/pagination.js';
import { principalOf } from '../context.js';
import type { ErrorBody } from '../errors.js';
import {
  badRequest, forbidden, internal, notFound, rateLimited, unauthorized, unavailable, unprocessable,
} from '../openapi-responses.js';
import { SvcController } from './base.js';

interface StepBody {
  /** Unique within the automation. */
  key: string;
  /** trigger, send_email, delay, condition, contact_update, add_to_segment or topic_update. */
  type: string;
  config?: { [key: string]: unknown };
}

interface ConnectionBody {
  from: string;
  to: string;
  /** `default` (default), `condition_met` or `condition_not_met`. */
  type?: string;
}

interface CreateAutomationBody {
  name: string;
  /** Gates enrolment only; `disabled` by default. */
  status?: 'enabled' | 'disabled';
  /** At most 150 steps; exactly one trigger; every step reachable from it; acyclic. */
  steps: StepBody[];
  connections: ConnectionBody[];
}

interface UpdateAutomationBody {
  /** Accepted when equal to the path id. */
  id?: string;
  name?: string;
  status?: 'enabled' | 'disabled';
  /** With `connections`: publishes the next version (runs keep theirs). */
  steps?: StepBody[];
  connections?: ConnectionBody[];
}

interface AutomationItem {
  id: string;
  name: string;
  status: 'enabled' | 'disabled';
  created_at: string;
  updated_at: string | null;
}

interface Automation extends AutomationItem {
  object: 'automation';
  version: number;
  steps: { key: string; type: string; config: { [key: string]: unknown } }[];
  connections: { from: string; to: string; type: 'default' | 'condition_met' | 'condition_not_met' }[];
}

interface RunItem {
  id: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled';
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

interface RunStep {
  key: string;
  type: string;
  status: 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'waiting';
  output: { [key: string]: unknown } | null;
  error: { [key: string]: unknown } | null;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

interface Run extends RunItem {
  object: 'automation_run';
  automation_id: string;
  contact_id: string;
  version: number;
  steps: RunStep[];
}

type AutomationRef = { object: 'automation'; id: string };

@Route('automations')
@Tags('automations')
@Response<ErrorBody>(401, unauthorized)
@Response<ErrorBody>(403, forbidden)
@Response<ErrorBody, { 'retry-after': string }>(429, rateLimited)
@Response<ErrorBody>(500, internal)
@Response<ErrorBody, { 'retry-after': string }>(503, unavailable)
export class AutomationsController extends SvcController {
  /**
   * Writes version 1. The whole graph is checked against the team: 422 validation_error with one `errors[]` entry per offending step key.
   * @summary Create an automation
   */
  @Post()
  @OperationId('createAutomation')
  @SuccessResponse(201)
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:write')
  public async create(@Request() req: ExRequest, @Body() body: CreateAutomationBody): Promise<AutomationRef> {
    const result = await this.deps.campaigns.automations.create(principalOf(req).teamId, body);
    this.setStatus(201);
    return result;
  }

  /**
   * The team's automations, newest first; `status` filters by `enabled` or `disabled`.
   * @summary List automations
   */
  @Get()
  @OperationId('listAutomations')
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:read')
  public async list(
    @Request() req: ExRequest, @Query() limit?: string, @Query() after?: string, @Query() before?: string, @Query() status?: string,
  ): Promise<ListEnvelope<AutomationItem>> {
    return this.deps.campaigns.automations.list(principalOf(req).teamId, { limit, after, before, status });
  }

  /**
   * With its current version's steps and connections.
   * @summary Retrieve an automation
   */
  @Get('{automation_id}')
  @OperationId('getAutomation')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:read')
  public async get(@Request() req: ExRequest, @Path() automation_id: string): Promise<Automation> {
    return this.deps.campaigns.automations.get(principalOf(req).teamId, automation_id);
  }

  /**
   * `steps` with `connections` publish the next version; in-flight runs keep theirs. `status` gates enrolment only.
   * @summary Update an automation
   */
  @Patch('{automation_id}')
  @OperationId('updateAutomation')
  @Response<ErrorBody>(400, badRequest)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:write')
  public async update(@Request() req: ExRequest, @Path() automation_id: string, @Body() body: UpdateAutomationBody): Promise<AutomationRef> {
    return this.deps.campaigns.automations.update(principalOf(req).teamId, automation_id, body);
  }

  /**
   * Live runs are cancelled, then the automation is gone (404).
   * @summary Delete an automation
   */
  @Delete('{automation_id}')
  @OperationId('removeAutomation')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:write')
  public async remove(@Request() req: ExRequest, @Path() automation_id: string): Promise<AutomationRef & { deleted: true }> {
    return this.deps.campaigns.automations.remove(principalOf(req).teamId, automation_id);
  }

  /**
   * Disables the automation and cancels every live run.
   * @summary Stop an automation
   */
  @Post('{automation_id}/stop')
  @OperationId('stopAutomation')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:write')
  public async stop(@Request() req: ExRequest, @Path() automation_id: string): Promise<{ object: 'automation'; id: string; status: 'disabled' }> {
    return this.deps.campaigns.automations.stop(principalOf(req).teamId, automation_id);
  }

  /**
   * A new, disabled automation with the current version's graph.
   * @summary Duplicate an automation
   */
  @Post('{automation_id}/duplicate')
  @OperationId('duplicateAutomation')
  @SuccessResponse(201)
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:write')
  public async duplicate(@Request() req: ExRequest, @Path() automation_id: string): Promise<AutomationRef> {
    const result = await this.deps.campaigns.automations.duplicate(principalOf(req).teamId, automation_id);
    this.setStatus(201);
    return result;
  }

  /**
   * Newest first. `status`: a comma-separated subset of running, completed, failed, cancelled (any other member is 422 invalid_parameter).
   * @summary List an automation's runs
   */
  @Get('{automation_id}/runs')
  @OperationId('listAutomationRuns')
  @Response<ErrorBody>(404, notFound)
  @Response<ErrorBody>(422, unprocessable)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:read')
  public async listRuns(
    @Request() req: ExRequest, @Path() automation_id: string,
    @Query() limit?: string, @Query() after?: string, @Query() before?: string, @Query() status?: string,
  ): Promise<ListEnvelope<RunItem>> {
    return this.deps.campaigns.automations.listRuns(principalOf(req).teamId, automation_id, { limit, after, before, status });
  }

  /**
   * With its steps in graph order (a walk from the trigger, `condition_met` before `condition_not_met`).
   * @summary Retrieve a run
   */
  @Get('{automation_id}/runs/{run_id}')
  @OperationId('getAutomationRun')
  @Response<ErrorBody>(404, notFound)
  @Extension('x-svc-permission', 'full_access')
  @Extension('x-svc-scope', 'automations:read')
  public async getRun(@Request() req: ExRequest, @Path() automation_id: string, @Path() run_id: string): Promise<Run> {
    return this.deps.campaigns.automations.getRun(principalOf(req).teamId, automation_id, run_id);
  }
}
