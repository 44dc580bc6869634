// The custom events area's public face (campaigns tier): event definitions, POST /events/send,
// and the event names automations may start on. Enrolment is handed in (`Enrol`, built by the
// automations area), so this area never imports that one.
export { eventsService, refuseAll, type EnrollingEvent, type Enrol, type EventDefinitionItem, type EventDefinitionView, type EventsDeps, type EventsService } from './service.js';
export {
  EVENT_NAME_MAX, isPlatformEvent, isStoreEvent, PAYLOAD_BYTES_MAX, platformEmailEvents, SCHEMA_KEYS_MAX, storeEvents, type EventSchema, type SchemaType,
} from './names.js';
export type { SendEventInput } from './send.js';
