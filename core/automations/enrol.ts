import type { Db } from '../../storage/sql/index.js';
import { automationsRepo, teamAutomationsActOn, workRepo, type PlatformEventRow } from '../../storage/repos/index.js';
import type { EnrollingEvent } from '../events/index.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { WorkHandler } from '../work/index.js';
import { readDuration } from './durations.js';
import { cancelRuns, RUN_WORK_KIND, type GraphCache } from './lifecycle.js';

// Enrolment: an event for a contact first ends the contact's runs that exit on it, then starts
// one run in each enabled automation whose trigger it matches — a run row and its work item in
// the caller's transaction (the send's, or the stream reader's with its cursor). The unique
// (automation, event, contact) makes a redelivered event enrol once.
//
// Mail sent by flows never enrols in a loop: an svc:email.* event of an email a run sent carries
// the chain of automations whose runs led to it (the sender last, core/automations/steps.ts), and
// no automation in that chain is enrolled by it. Each hop adds a new automation to the chain, so
// a chain of flows triggered by each other's mail ends after at most as many hops as the team has
// automations; a flow never re-enrols itself on its own mail. The chain follows mail only: a
// flow's other effects (a topic choice, a segment entry) start their own flows as any change does.

export interface EnrolDeps {
  logger: Logger;
  graphs: GraphCache;
}

export function enroller(deps: EnrolDeps) {
  return async function enrol(trx: Db, event: EnrollingEvent): Promise<number> {
    const repo = automationsRepo(trx);
    const exiting = await repo.runsExitingOn(event.teamId, event.contactId, event.name);
    if (exiting.length) await cancelRuns(trx, exiting.map((r) => r.id), event.at, `exit_event:${event.name}`, deps.logger);
    let started = 0;
    for (const automation of await repo.enabledByTrigger(event.teamId, event.name)) {
      // The stream is read a little late: an event from before the automation existed is not its.
      if (event.at.toISOString() < automation.created_at) continue;
      if (inChain(event, automation.id)) continue;
      const graph = await deps.graphs.of(trx, automation.id, automation.version);
      const config = graph.trigger.config;
      if (config.segment_id !== undefined && event.data.segment_id !== config.segment_id) continue;
      if (config.topic_id !== undefined && event.data.topic_id !== config.topic_id) continue;
      if (config.reentry_after !== undefined) {
        const last = await repo.lastEntry(event.teamId, automation.id, event.contactId);
        if (last && Date.parse(last) + readDuration(config.reentry_after)! > event.at.getTime()) continue;
      }
      const at = event.at.toISOString();
      const runId = newId();
      const inserted = await repo.insertRunIfNew({
        id: runId, team_id: event.teamId, automation_id: automation.id, version: automation.version, contact_id: event.contactId,
        source_event_id: event.sourceId, event_name: event.name, event_data: JSON.stringify(event.data), status: 'running',
        error: null, created_at: at, started_at: null, completed_at: null,
      });
      if (!inserted) continue;
      await workRepo(trx).add({ id: newId(), kind: RUN_WORK_KIND, key: runId, team_id: event.teamId, payload: JSON.stringify({ run_id: runId }), due_at: at, created_at: at });
      deps.logger.info({ runId, automationId: automation.id, contactId: event.contactId, event: event.name }, 'automation run enrolled');
      started++;
    }
    return started;
  };
}

export type Enroller = ReturnType<typeof enroller>;

/** Whether the event is about mail that this automation's runs led to. */
function inChain(event: EnrollingEvent, automationId: string): boolean {
  const chain = event.name.startsWith('svc:email.') ? event.data.automation_chain : undefined;
  return Array.isArray(chain) && chain.includes(automationId);
}

export const PLATFORM_STREAM_WORK = { kind: 'automation-enrol', key: 'platform-events' } as const;

export interface StreamReaderOptions {
  batch: number;
  /** How long to park when the stream has nothing new. */
  idleMs: number;
  /**
   * Events younger than this are left for the next read: ids are taken before their transaction
   * commits, so a younger id may still be joined by an older one committing late.
   */
  settleMs: number;
  /** Wall-clock milliseconds, the clock ids are minted by. */
  wallNow(): number;
}

/** The lowest UUIDv7 minted at `ms`: ids below it were minted before. */
export function idFloorAt(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

/**
 * The platform event stream's reader (svc:contact.created, svc:topic.*, svc:segment.entered,
 * svc:email.*): one standing work item whose cursor is the last event id read; each step enrols a
 * batch of events in the worker's transaction with the moved cursor, so a crash neither skips nor
 * repeats one.
 */
export function platformStreamWork(enrol: Enroller, db: Db, options: StreamReaderOptions): WorkHandler<Record<string, never>, { after: string | null }> {
  return {
    kind: PLATFORM_STREAM_WORK.kind,
    async step(item) {
      const after = item.cursor?.after ?? null;
      const events = await automationsRepo(db).platformEvents(after, idFloorAt(options.wallNow() - options.settleMs), options.batch);
      if (events.length === 0) return { kind: 'continue', cursor: { after }, delayMs: options.idleMs };
      return {
        kind: 'continue', cursor: { after: events[events.length - 1]!.id },
        write: async (trx) => {
          // An import writes an event per contact; a team with no automation that could act on
          // an event's name skips it here with one read per team, not two queries per event.
          for (const e of events) {
            if (e.contact_id === null) continue;
            if (await teamAutomationsActOn(trx, e.team_id, e.type)) await enrol(trx, enrollingOf(e));
          }
        },
        // A full batch: more may be waiting, read again at once; otherwise after the settle time.
        ...(events.length < options.batch ? { delayMs: Math.min(options.idleMs, options.settleMs) } : {}),
      };
    },
  };
}

function enrollingOf(e: PlatformEventRow): EnrollingEvent {
  return { teamId: e.team_id, name: e.type, contactId: e.contact_id!, sourceId: e.id, data: JSON.parse(e.data) as Record<string, unknown>, at: new Date(e.created_at) };
}
