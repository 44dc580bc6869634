// Row types of custom events and automations (migration 022).

export interface EventDefinitionRow {
  id: string;
  team_id: string;
  name: string;
  /** JSON: a flat map of payload key to 'string' | 'number' | 'boolean' | 'date', or null. */
  schema: string | null;
  created_at: string;
  updated_at: string | null;
  deleted_at: string | null;
}

export interface CustomEventRow {
  id: string;
  team_id: string;
  name: string;
  /** Null: a store event waiting with its browser (anonymous_id) until the browser is tied. */
  contact_id: string | null;
  anonymous_id: string | null;
  idempotency_key: string | null;
  /** JSON object. */
  payload: string;
  /** 1: enrols runs; 0: recorded only. */
  start_flows: number;
  occurred_at: string;
  created_at: string;
}

export interface StoreBrowserRow {
  team_id: string;
  anonymous_id: string;
  contact_id: string;
  created_at: string;
}

export type AutomationStatus = 'enabled' | 'disabled';

export interface AutomationRow {
  id: string;
  team_id: string;
  name: string;
  status: AutomationStatus;
  /** The current version: what new runs start on. */
  version: number;
  /** The current version's trigger `event_name`. */
  trigger_event: string;
  created_at: string;
  updated_at: string | null;
  deleted_at: string | null;
}

export interface AutomationVersionRow {
  automation_id: string;
  version: number;
  /** JSON: the checked steps. */
  steps: string;
  /** JSON: the checked connections, `type` filled in. */
  connections: string;
  created_at: string;
}

export interface AutomationExitEventRow {
  team_id: string;
  automation_id: string;
  version: number;
  event_name: string;
}

export type RunStatus = 'running' | 'completed' | 'failed' | 'cancelled';

export interface AutomationRunRow {
  id: string;
  team_id: string;
  automation_id: string;
  version: number;
  contact_id: string;
  /** The enrolling event's id (a custom event's or a platform event's): one run per contact each. */
  source_event_id: string;
  event_name: string;
  /** JSON: the event's payload or data, for templates and conditions. */
  event_data: string;
  status: RunStatus;
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}

export type RunStepStatus = 'running' | 'completed' | 'failed' | 'waiting';

export interface AutomationRunStepRow {
  run_id: string;
  step_key: string;
  type: string;
  status: RunStepStatus;
  /** JSON or null. */
  output: string | null;
  /** JSON or null. */
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}
