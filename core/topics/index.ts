// The topics area's public face: topic definitions (the API service) and the rule broadcasts
// will ask. A contact's own choices are written by the contacts area, which imports this one.
export { topicsService, TOPIC_DESCRIPTION_MAX, TOPIC_NAME_MAX, type TopicListItem, type TopicsService, type TopicView, type TopicVisibility } from './service.js';
export { effectiveSubscription } from './subscription.js';
export { topicsRepo, type TopicRow, type TopicSubscription, type TopicsRepo, type TopicWithChoice } from '../../storage/repos/index.js';
