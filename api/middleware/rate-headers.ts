import type { Response } from 'express';
import type { RateDecision } from '../../core/rate-limit.js';

/** The spec's three rate headers, from one bucket decision (every response carries them). */
export function setRateHeaders(res: Response, decision: RateDecision): void {
  res.setHeader('ratelimit-limit', String(decision.limit));
  res.setHeader('ratelimit-remaining', String(decision.remaining));
  res.setHeader('ratelimit-reset', String(decision.resetSeconds));
}
