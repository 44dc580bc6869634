// The automations area's public face (campaigns tier): the automations and runs API service,
// enrolment (handed to the events area as its `Enrol` port), the run handler and the platform
// stream reader the durable worker runs, the template-send port and its plain stand-in.
export { automationsService, type AutomationInput, type AutomationsDeps, type AutomationsService } from './service.js';
export { enroller, idFloorAt, platformStreamWork, PLATFORM_STREAM_WORK, type Enroller, type StreamReaderOptions } from './enrol.js';
export { automationRunWork, type RunCursor, type RunnerDeps } from './runner.js';
export { graphCache, RUN_WORK_KIND, type GraphCache } from './lifecycle.js';
export { plainTemplateSender, type PlainTemplateSenderDeps } from './plain-template-sender.js';
export type { StagedTemplateSend, TemplateSender, TemplateSendRequest } from './ports.js';
export type {
  AutomationConnectionView, AutomationItem, AutomationStepView, AutomationView, RunItem, RunStepStatusView, RunStepView, RunView,
} from './view.js';
export { STEPS_MAX } from './graph.js';
export { publishedTemplateSender, type TemplateSenderDeps } from './template-sender.js';
