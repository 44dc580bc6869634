import type { Verdict } from './verdict.js';

export type FailMode = 'closed' | 'open';

/** What the listener does with a message after (or instead of) a scan. */
export type ScanDecision =
  | { action: 'keep'; status: 'clean' }
  | { action: 'keep'; status: 'unscanned'; reason: string }
  | { action: 'drop_virus'; signature: string }
  | { action: 'tempfail'; reason: string }
  | { action: 'refuse_too_big' };

export interface ScanPolicy {
  enabled: boolean;
  failMode: FailMode;
}

/**
 * Fail-closed (the default) never stores a message the scanner did not pass: the sender is told
 * 451 and retries later. Fail-open stores it marked unscanned. With scanning off there is nothing
 * to fail: every message is unscanned.
 */
export function decideScan(policy: ScanPolicy, verdict: Verdict | 'too_big'): ScanDecision {
  if (!policy.enabled) return { action: 'keep', status: 'unscanned', reason: 'scanning is off' };
  if (verdict === 'too_big') {
    return policy.failMode === 'open' ? { action: 'keep', status: 'unscanned', reason: 'larger than scanner_max_bytes' } : { action: 'refuse_too_big' };
  }
  switch (verdict.kind) {
    case 'clean':
      return { action: 'keep', status: 'clean' };
    case 'infected':
      return { action: 'drop_virus', signature: verdict.signature };
    case 'error':
      return policy.failMode === 'open' ? { action: 'keep', status: 'unscanned', reason: verdict.reason } : { action: 'tempfail', reason: verdict.reason };
  }
}
