// The content-checks area's public face (content tier): merge variables of campaign content and
// the pre-send content checks. It knows no broadcasts or templates; both hand it their content.
export {
  BUILT_IN_VARIABLES, UNSUBSCRIBE_VARIABLES, escapeHtml, hasUnsubscribeVariable, mergeTokens, renderMerge,
  type MergeMode, type MergeToken, type MergeValues,
} from './merge.js';
export {
  failedChecks, IMAGE_WEIGHT_WARN_BYTES, PREVIEW_WARN_CHARS, runContentChecks, SUBJECT_WARN_CHARS,
  type CheckName, type CheckStatus, type ContentCheck, type ContentInput,
} from './checks.js';
