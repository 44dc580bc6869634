import type { AutomationRow, AutomationRunRow, AutomationRunStepRow, RunStatus } from '../../storage/repos/index.js';
import type { ConnectionType, Graph, StepType } from './graph.js';

// Wire shapes: an automation (with its current version's graph), a run in a list, a run with its
// steps in graph order (a walk from the trigger, `condition_met` before `condition_not_met`).

export interface AutomationItem {
  id: string;
  name: string;
  status: 'enabled' | 'disabled';
  created_at: string;
  updated_at: string | null;
}

export interface AutomationStepView {
  key: string;
  type: StepType;
  config: { [key: string]: unknown };
}

export interface AutomationConnectionView {
  from: string;
  to: string;
  type: ConnectionType;
}

export interface AutomationView extends AutomationItem {
  object: 'automation';
  /** The current version: what new runs start on. */
  version: number;
  steps: AutomationStepView[];
  connections: AutomationConnectionView[];
}

export interface RunItem {
  id: string;
  status: RunStatus;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

export type RunStepStatusView = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'waiting';

export interface RunStepView {
  key: string;
  type: StepType;
  status: RunStepStatusView;
  output: { [key: string]: unknown } | null;
  error: { [key: string]: unknown } | null;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

export interface RunView extends RunItem {
  object: 'automation_run';
  automation_id: string;
  contact_id: string;
  /** The version the run started on and keeps. */
  version: number;
  steps: RunStepView[];
}

export const automationItem = (row: AutomationRow): AutomationItem => ({
  id: row.id, name: row.name, status: row.status, created_at: row.created_at, updated_at: row.updated_at,
});

export const automationView = (row: AutomationRow, graph: Graph): AutomationView => ({
  object: 'automation', ...automationItem(row), version: row.version,
  steps: graph.steps.map((s) => ({ key: s.key, type: s.type, config: s.config })),
  connections: graph.connections.map((c) => ({ from: c.from, to: c.to, type: c.type })),
});

export const runItem = (row: AutomationRunRow): RunItem => ({
  id: row.id, status: row.status, started_at: row.started_at, completed_at: row.completed_at, created_at: row.created_at,
});

const json = (text: string | null) => (text === null ? null : JSON.parse(text) as { [key: string]: unknown });

/** Every step of the run's version in graph order: what it did, or pending (running run) / skipped (finished run). */
export function runView(row: AutomationRunRow, graph: Graph, steps: AutomationRunStepRow[]): RunView {
  const done = new Map(steps.map((s) => [s.step_key, s]));
  const unreached: RunStepStatusView = row.status === 'running' ? 'pending' : 'skipped';
  return {
    object: 'automation_run', ...runItem(row), automation_id: row.automation_id, contact_id: row.contact_id, version: row.version,
    steps: graph.order.map((key) => {
      const step = graph.byKey.get(key)!;
      const record = done.get(key);
      if (!record) return { key, type: step.type, status: unreached, output: null, error: null, started_at: null, completed_at: null, created_at: row.created_at };
      return {
        key, type: step.type, status: record.status, output: json(record.output), error: json(record.error),
        started_at: record.started_at, completed_at: record.completed_at, created_at: record.created_at,
      };
    }),
  };
}
