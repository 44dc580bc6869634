// The contacts area's public face: contacts and their properties (the API services), the consent
// trail, topic choices, and what other areas use — the delivery path's audience-from-sends hook
// and the erasure-proof address hash.
export { contactsService, type ContactList, type ContactsDeps, type ContactsService, type ContactTopicItem, type ListContactsQuery } from './service.js';
export { contactPropertiesService, type ContactPropertiesService, type ContactPropertyListItem, type ContactPropertyView, type CreatePropertyInput } from './properties-service.js';
export { consentHasher, type ConsentContext, type ConsentHasher } from './consent.js';
export { audienceFromSends, type AudienceFromSends } from './from-sends.js';
export { planContactLimit, type ContactLimitOf } from './limit.js';
export { PROPERTIES_PER_TEAM, type TypedValue } from './properties.js';
export { NAME_MAX, PROPERTY_KEY_MAX, PROPERTY_STRING_MAX, type ContactInput, type CreateContactInput, type PropertyInput, type PropertyValue, type TopicChoiceInput } from './input.js';
export type { ContactListItem, ContactView } from './view.js';
export type { ContactOrigin, PropertyType, SubscriptionStatus } from '../../storage/repos/index.js';
export { applyTopicChoices } from './choices.js';
export { setOwnSubscription, type SelfServiceDeps } from './self-service.js';
// For contact imports (core/contact-imports): the same checks, and property declarations by type.
export { checkPropertyKey, checkTopicChoices, emailKeyOf } from './input.js';
export { declareProperty, storedValue } from './properties.js';
export { contactWritesIn, type ContactWritesIn } from './in-transaction.js';
export { checkName as checkContactName, checkProperties as checkContactProperties } from './input.js';
export type { WriteDeps as ContactWriteDeps } from './write.js';
