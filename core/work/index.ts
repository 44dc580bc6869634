// The durable worker: long-running work in small committed steps under a lease (worker.ts).
export { durableWorker, type DurableWorker, type DurableWorkerDeps, type EnqueueOptions } from './worker.js';
export type { AfterCommit, StepResult, StepWrite, WorkHandler, WorkItem } from './types.js';
