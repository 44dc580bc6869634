import cron from 'node-cron';
import type { RecheckSummary } from '../core/domains/index.js';
import type { Job } from './scheduler.js';

/**
 * Every few hours (config `domains_recheck_cron`): every domain's records are asked again, so a
 * verified record that stopped resolving becomes drifted and raises domain.updated; replaced DKIM
 * keys past their grace period go; pending claims complete when their TXT record appears.
 */
export function recheckDomainsJob(recheckAll: () => Promise<RecheckSummary>, schedule: string): Job {
  // Name the setting: node-cron's own error would not say which key to fix.
  if (!cron.validate(schedule)) throw new Error(`config: domains_recheck_cron: "${schedule}" is not a valid cron schedule`);
  return {
    name: 'recheck-domains',
    schedule,
    leaseMs: 30 * 60_000,
    run: async () => JSON.stringify(await recheckAll()),
  };
}
