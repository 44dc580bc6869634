// The segments area's public face: segment definitions and explicit membership (the API
// service), and the membership reads and writes other areas use — the contacts list by segment,
// broadcasts (count and walk members), imports and automations (add by hand), and contact writes
// (svc:segment.entered).
export { segmentsService, SEGMENT_NAME_MAX, type SegmentListItem, type SegmentsService, type SegmentView } from './service.js';
export { FILTER_CONDITIONS_MAX, FILTER_DEPTH_MAX } from './filter.js';
export {
  addExplicitMembers, checkSegmentsExist, countMembers, explicitMembership, filterContext, liveSegment, missingSegments, parseFilter, segmentMembersPage, segmentsContaining, SEGMENTS_PER_QUERY,
} from './membership.js';
export { watchSegmentEntry, type SegmentEntryWatch } from './entry.js';
export type { FilterContext, SegmentFilter, SegmentMembership } from '../../storage/repos/index.js';
