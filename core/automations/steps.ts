import type { Db } from '../../storage/sql/index.js';
import { contactPropertiesRepo, type AutomationRunRow } from '../../storage/repos/index.js';
import type { ConsentContext, ContactView, PropertyValue } from '../contacts/index.js';
import { ServiceError } from '../errors.js';
import { addExplicitMembers } from '../segments/index.js';
import { contactAudience } from './audience.js';
import { evaluate, readsMembership, type Rule } from './condition.js';
import { readDuration } from './durations.js';
import type { ConnectionType, Step } from './graph.js';
import type { RunCursor, RunnerDeps } from './runner.js';

// What each step type does. Reads happen here, before the worker's transaction; effects are
// returned as a write that commits with the run's cursor. A step's refusal (a send over quota, a
// segment deleted since) fails the run with the refusal's name and message.

export type StepFailure = { name: string; message: string } & Record<string, unknown>;

export type Outcome =
  | { kind: 'next'; branch?: ConnectionType; output?: unknown; write?: (trx: Db) => Promise<StepFailure | undefined>; afterCommit?: () => void }
  | { kind: 'park'; wakeAt: Date; first: boolean }
  | { kind: 'failed'; error: StepFailure };

const automationConsent: ConsentContext = { source: 'automation', ip: null, userAgent: null };
const contactGone: StepFailure = { name: 'not_found', message: 'The contact no longer exists.' };
const failureOf = (err: ServiceError): StepFailure => ({ name: err.errorName, message: err.message });

/** Runs `fn` in the transaction, answering a refusal as a failure (refusals are thrown before any write). */
async function refusable(fn: () => Promise<StepFailure | undefined | void>): Promise<StepFailure | undefined> {
  try {
    return (await fn()) ?? undefined;
  } catch (err) {
    if (err instanceof ServiceError) return failureOf(err);
    throw err;
  }
}

export async function runStep(deps: RunnerDeps, run: AutomationRunRow, step: Step, cursor: RunCursor): Promise<Outcome> {
  // Parsed only by the steps that read it: a payload may be 16 KB, and most steps are delays.
  const event = () => JSON.parse(run.event_data) as Record<string, unknown>;
  const c = step.config;
  switch (step.type) {
    case 'trigger':
      return { kind: 'next' };
    case 'delay':
      return delay(deps, step, cursor);
    case 'condition': {
      const contact = await deps.contacts.read(deps.db, run.team_id, run.contact_id);
      if (!contact) return { kind: 'failed', error: contactGone };
      const rule = c as unknown as Rule;
      const met = evaluate(rule, contact, event(), readsMembership(rule) ? await contactAudience(deps.db, run.team_id, contact) : undefined);
      return { kind: 'next', branch: met ? 'condition_met' : 'condition_not_met', output: { result: met } };
    }
    case 'send_email':
      return sendEmail(deps, run, step, event());
    case 'contact_update':
      return contactUpdate(deps, run, c);
    case 'add_to_segment': {
      if (!(await deps.contacts.row(deps.db, run.team_id, run.contact_id))) return { kind: 'failed', error: contactGone };
      const segmentId = c.segment_id as string;
      return { kind: 'next', output: { segment_id: segmentId }, write: (trx) => refusable(() => addExplicitMembers(trx, run.team_id, segmentId, [run.contact_id], deps.clock.now()).then(() => undefined)) };
    }
    case 'topic_update': {
      const choice = { id: (c.topic_id as string).toLowerCase(), subscription: c.subscription as 'opt_in' | 'opt_out' };
      return {
        kind: 'next', output: { topic_id: choice.id, subscription: choice.subscription },
        write: (trx) => refusable(async () => ((await deps.contacts.setTopics(trx, run.team_id, run.contact_id, [choice], automationConsent)) ? undefined : contactGone)),
      };
    }
  }
}

function delay(deps: RunnerDeps, step: Step, cursor: RunCursor): Outcome {
  const now = deps.clock.now();
  if (cursor.wakeAt !== undefined) {
    const wakeAt = new Date(cursor.wakeAt);
    // Woken before its time (a poll, a moved clock): parked again for the rest.
    return wakeAt > now ? { kind: 'park', wakeAt, first: false } : { kind: 'next', output: { waited_until: cursor.wakeAt } };
  }
  const { duration, until } = step.config;
  const wakeAt = duration !== undefined ? new Date(now.getTime() + readDuration(duration)!) : new Date(until as string);
  return wakeAt > now ? { kind: 'park', wakeAt, first: true } : { kind: 'next', output: { waited_until: wakeAt.toISOString() } };
}

async function sendEmail(deps: RunnerDeps, run: AutomationRunRow, step: Step, event: Record<string, unknown>): Promise<Outcome> {
  const contact = await deps.contacts.read(deps.db, run.team_id, run.contact_id);
  if (!contact) return { kind: 'failed', error: contactGone };
  const template = step.config.template as { id: string; variables?: Record<string, unknown> };
  const overrides = Object.fromEntries(['from', 'subject', 'reply_to', 'topic_id'].filter((k) => step.config[k] !== undefined).map((k) => [k, step.config[k] as string]));
  let staged;
  try {
    staged = await deps.templates.stage({
      teamId: run.team_id, templateId: template.id, variables: resolveVariables(template.variables ?? {}, contact, event), contact,
      event: { name: run.event_name, data: event }, overrides, idempotencyKey: `automation-run:${run.id}:${step.key}`,
      origin: { automationId: run.automation_id, runId: run.id, chain: chainOf(run, event) },
    });
  } catch (err) {
    if (err instanceof ServiceError) return { kind: 'failed', error: failureOf(err) };
    throw err;
  }
  return { kind: 'next', output: { email_id: staged.emailId }, write: (trx) => refusable(() => staged.commit(trx)), afterCommit: () => staged.accepted() };
}

/**
 * The automations whose runs led to this one's send: the chain of the email whose svc:email.*
 * event enrolled the run, then this automation. Enrolment never starts an automation already in
 * the chain (enrol.ts), so mail from flows cannot re-enrol them in a loop.
 */
export function chainOf(run: AutomationRunRow, event: Record<string, unknown>): string[] {
  const before = run.event_name.startsWith('svc:email.') && Array.isArray(event.automation_chain) ? event.automation_chain.filter((id): id is string => typeof id === 'string') : [];
  return [...before.filter((id) => id !== run.automation_id), run.automation_id];
}

async function contactUpdate(deps: RunnerDeps, run: AutomationRunRow, c: Record<string, unknown>): Promise<Outcome> {
  const properties = (c.properties ?? {}) as Record<string, PropertyValue | null>;
  // Type clashes with declared properties are found before the write, so a refusal leaves nothing half-done.
  const declared = await contactPropertiesRepo(deps.db).byKeys(run.team_id, Object.keys(properties));
  for (const d of declared) {
    const value = Object.entries(properties).find(([k]) => k.toLowerCase() === d.key_fold)?.[1];
    if (value !== null && value !== undefined && typeof value !== d.type) {
      return { kind: 'failed', error: { name: 'invalid_parameter', message: `Property \`${d.key}\` is a ${d.type}; the step sets a ${typeof value}.` } };
    }
  }
  const input = {
    ...(c.first_name !== undefined ? { first_name: c.first_name as string | null } : {}),
    ...(c.last_name !== undefined ? { last_name: c.last_name as string | null } : {}),
    ...(c.unsubscribed !== undefined ? { unsubscribed: c.unsubscribed as boolean } : {}),
    ...(c.properties !== undefined ? { properties } : {}),
  };
  return {
    kind: 'next', output: { updated: Object.keys(input) },
    write: (trx) => refusable(async () => ((await deps.contacts.update(trx, run.team_id, run.contact_id, input, automationConsent)) ? undefined : contactGone)),
  };
}

/** `{ var: 'event.total' }`, `{ var: 'contact.first_name' }`, `{ var: 'properties.plan' }` or a bare name. */
export function resolveVariables(variables: Record<string, unknown>, contact: ContactView, event: Record<string, unknown>): Record<string, unknown> {
  const props = Object.fromEntries(Object.entries(contact.properties).map(([k, v]) => [k, v.value]));
  const lookup = (path: string): unknown => {
    const [head, ...rest] = path.split('.');
    const tail = rest.join('.');
    if (head === 'event') return event[tail];
    if (head === 'properties') return props[tail];
    if (head === 'contact') return tail.startsWith('properties.') ? props[tail.slice(11)] : (contact as unknown as Record<string, unknown>)[tail];
    return (contact as unknown as Record<string, unknown>)[path] ?? props[path] ?? event[path];
  };
  return Object.fromEntries(Object.entries(variables).map(([k, v]) => {
    const ref = typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { var?: unknown }).var === 'string' ? (v as { var: string }).var : undefined;
    return [k, ref === undefined ? v : lookup(ref) ?? null];
  }));
}
