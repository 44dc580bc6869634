import { checkContactName, checkContactProperties } from '../contacts/index.js';
import { isPlatformEvent, isStoreEvent } from '../events/index.js';
import { ServiceError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { readIsoInstant } from '../time.js';
import { checkRule } from './condition.js';
import { DAY_MS, readDuration } from './durations.js';
import type { Problems, Step } from './graph.js';

// Each step type's config (spec Automation, the step table), checked without state. What a config
// names — templates, segments, topics, properties, custom events — is collected as references and
// resolved against the team at once (validate.ts).

export const DELAY_MAX_MS = 30 * DAY_MS;
export const REENTRY_MAX_MS = 90 * DAY_MS;
export const EXIT_EVENTS_MAX = 10;
/** Store triggers that may end their own runs: a new order starts the flow afresh. */
const selfExiting = new Set(['store:order.placed', 'store:order.paid']);

export type RefKind = 'template' | 'segment' | 'topic' | 'property' | 'event';
export interface Ref {
  key: string;
  kind: RefKind;
  value: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Ctx {
  step: Step;
  problems: Problems;
  refs: Ref[];
  now: Date;
}

const allowed: Record<Step['type'], readonly string[]> = {
  trigger: ['event_name', 'segment_id', 'topic_id', 'exit_events', 'reentry_after'],
  send_email: ['template', 'subject', 'from', 'reply_to', 'topic_id'],
  delay: ['duration', 'until'],
  condition: ['type', 'field', 'operator', 'value', 'rules'],
  contact_update: ['first_name', 'last_name', 'unsubscribed', 'properties'],
  add_to_segment: ['segment_id'],
  topic_update: ['topic_id', 'subscription'],
};

/** Checks one step's config; its problems go under its key, its references to `refs`. */
export function checkConfig(step: Step, problems: Problems, refs: Ref[], now: Date): void {
  const ctx: Ctx = { step, problems, refs, now };
  for (const extra of Object.keys(step.config).filter((k) => !allowed[step.type].includes(k))) problems.add(step.key, `Unknown config field \`${extra}\`.`);
  switch (step.type) {
    case 'trigger': return trigger(ctx);
    case 'send_email': return sendEmail(ctx);
    case 'delay': return delay(ctx);
    case 'condition': return condition(ctx);
    case 'contact_update': return contactUpdate(ctx);
    case 'add_to_segment': return idRef(ctx, 'segment_id', 'segment', true);
    case 'topic_update': return topicUpdate(ctx);
  }
}

const problem = (ctx: Ctx, message: string) => ctx.problems.add(ctx.step.key, message);

function idRef(ctx: Ctx, field: string, kind: RefKind, required: boolean): void {
  const value = ctx.step.config[field];
  if (value === undefined || value === null) {
    if (required) problem(ctx, `\`config.${field}\` is required.`);
    return;
  }
  if (typeof value !== 'string' || !looksLikeId(value)) return problem(ctx, `\`config.${field}\` must be a ${kind} id.`);
  ctx.refs.push({ key: ctx.step.key, kind, value: value.toLowerCase() });
}

/** An event name a trigger or exit may name: platform, store, or a custom one (resolved later). */
function eventRef(ctx: Ctx, name: unknown, path: string): void {
  if (typeof name !== 'string' || name.length === 0) return problem(ctx, `\`${path}\` must be an event name.`);
  if (name.startsWith('svc:')) {
    if (!isPlatformEvent(name)) problem(ctx, `\`${name}\` is no platform event.`);
  } else if (name.startsWith('store:')) {
    if (!isStoreEvent(name)) problem(ctx, `\`${name}\` is no store event.`);
  } else ctx.refs.push({ key: ctx.step.key, kind: 'event', value: name });
}

function trigger(ctx: Ctx): void {
  const { event_name: name, exit_events: exits, reentry_after: reentry } = ctx.step.config;
  eventRef(ctx, name, 'config.event_name');
  if (name === 'svc:segment.entered') idRef(ctx, 'segment_id', 'segment', true);
  else if (ctx.step.config.segment_id !== undefined) problem(ctx, '`config.segment_id` is for `svc:segment.entered` triggers.');
  if (name === 'svc:topic.subscribed' || name === 'svc:topic.unsubscribed') idRef(ctx, 'topic_id', 'topic', false);
  else if (ctx.step.config.topic_id !== undefined) problem(ctx, '`config.topic_id` is for `svc:topic.*` triggers.');
  let exitsItself = false;
  if (exits !== undefined) {
    if (!Array.isArray(exits) || exits.length > EXIT_EVENTS_MAX) problem(ctx, `\`config.exit_events\` is an array of at most ${EXIT_EVENTS_MAX} event names.`);
    else exits.forEach((exit, i) => {
      eventRef(ctx, exit, `config.exit_events[${i}]`);
      if (exit !== name) return;
      exitsItself = true;
      if (!selfExiting.has(String(name))) problem(ctx, `Only a \`store:order.placed\` or \`store:order.paid\` trigger may list itself in \`exit_events\`.`);
    });
  }
  if (reentry === undefined) return;
  if (typeof name !== 'string' || !name.startsWith('store:')) return problem(ctx, '`config.reentry_after` is for `store:` triggers.');
  if (exitsItself) return problem(ctx, '`config.reentry_after` is refused on a trigger that exits on itself.');
  const ms = readDuration(reentry);
  if (ms === undefined || ms <= 0 || ms > REENTRY_MAX_MS) problem(ctx, '`config.reentry_after` is a duration such as "7 days", at most 90 days.');
}

function sendEmail(ctx: Ctx): void {
  const { template, subject, from, reply_to: replyTo } = ctx.step.config;
  if (!isObject(template) || typeof template.id !== 'string') return problem(ctx, '`config.template` is `{ id, variables }` naming a published template.');
  for (const extra of Object.keys(template).filter((k) => k !== 'id' && k !== 'variables')) problem(ctx, `Unknown field \`template.${extra}\`.`);
  if (template.variables !== undefined && !isObject(template.variables)) problem(ctx, '`config.template.variables` must be an object.');
  for (const [field, value] of Object.entries({ subject, from, reply_to: replyTo })) {
    if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 998)) problem(ctx, `\`config.${field}\` must be a non-empty string.`);
  }
  ctx.refs.push({ key: ctx.step.key, kind: 'template', value: template.id });
  idRef(ctx, 'topic_id', 'topic', false);
}

function delay(ctx: Ctx): void {
  const { duration, until } = ctx.step.config;
  if ((duration === undefined) === (until === undefined)) return problem(ctx, 'A delay takes exactly one of `duration` and `until`.');
  if (duration !== undefined) {
    const ms = readDuration(duration);
    if (ms === undefined || ms <= 0) return problem(ctx, '`config.duration` is a duration such as "3 days", "12 hours" or "P3D".');
    if (ms > DELAY_MAX_MS) problem(ctx, 'A delay is at most 30 days.');
    return;
  }
  const at = typeof until === 'string' ? readIsoInstant(until) : undefined;
  if (!at) return problem(ctx, '`config.until` is an ISO 8601 date and time with a zone.');
  if (at.getTime() > ctx.now.getTime() + DELAY_MAX_MS) problem(ctx, 'A delay is at most 30 days out.');
}

function condition(ctx: Ctx): void {
  const messages: string[] = [];
  const names = { properties: new Set<string>(), segments: new Set<string>(), topics: new Set<string>() };
  checkRule(ctx.step.config, messages, names);
  for (const m of messages) problem(ctx, m);
  for (const key of names.properties) ctx.refs.push({ key: ctx.step.key, kind: 'property', value: key });
  for (const id of names.segments) ctx.refs.push({ key: ctx.step.key, kind: 'segment', value: id });
  for (const id of names.topics) ctx.refs.push({ key: ctx.step.key, kind: 'topic', value: id });
}

/** Literals only (spec): a `{ var }` reference is refused. */
function contactUpdate(ctx: Ctx): void {
  const c = ctx.step.config;
  if (Object.keys(c).length === 0) return problem(ctx, 'A contact_update sets at least one of first_name, last_name, unsubscribed, properties.');
  try {
    for (const field of ['first_name', 'last_name'] as const) {
      if (c[field] !== undefined && c[field] !== null && typeof c[field] !== 'string') problem(ctx, `\`config.${field}\` must be a string or null.`);
      else checkContactName(c[field] as string | null | undefined, field);
    }
    if (c.unsubscribed !== undefined && typeof c.unsubscribed !== 'boolean') problem(ctx, '`config.unsubscribed` must be a boolean.');
    if (c.properties !== undefined) {
      if (!isObject(c.properties)) return problem(ctx, '`config.properties` must be an object of literal values.');
      for (const [key, value] of Object.entries(c.properties)) {
        if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) problem(ctx, `\`config.properties.${key}\` must be a literal string, number, boolean or null.`);
      }
      checkContactProperties(c.properties as Record<string, string | number | boolean | null>);
    }
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    problem(ctx, err.message);
  }
}

function topicUpdate(ctx: Ctx): void {
  idRef(ctx, 'topic_id', 'topic', true);
  const s = ctx.step.config.subscription;
  if (s !== 'opt_in' && s !== 'opt_out') problem(ctx, '`config.subscription` is `opt_in` or `opt_out`.');
}
