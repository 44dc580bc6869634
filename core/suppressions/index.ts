// The suppressions area. Other areas (sending, bounces, complaints, unsubscribes) import from here:
// isSuppressed before handing mail over, addSuppression inside the transaction that learned why.
export { addSuppression, isSuppressed, removeSuppression, suppressionEventData, suppressionKey, type AddedSuppression } from './suppress.js';
export { isAddress as isBareAddress, suppressionsService, type SuppressionsService, type SuppressionView } from './service.js';
export { suppressionsRepo, type SuppressionOrigin, type SuppressionRow, type SuppressionsRepo } from '../../storage/repos/index.js';
