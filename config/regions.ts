import { fqdnProblem } from './hostname.js';

// The four regions of the spec and what an operator may set per region. On one VM every region
// may be this same host; a bigger site gives each region its own names and source address.

export const regionNames = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'] as const;
export type RegionName = (typeof regionNames)[number];

export interface RegionSettings {
  /** Target of the MAIL FROM (`send`) CNAME, or of its MX in mx_txt mode. */
  mail_from_host?: string;
  /** Host of the receiving MX record. */
  inbound_host?: string;
  /** Target of the tracking (`links`) CNAME. */
  tracking_host?: string;
  /** EHLO name of outbound connections. */
  ehlo_name?: string;
  /** Local address outbound connections bind to. */
  source_address?: string;
  /** Outbound connections at once for the region. */
  concurrency?: number;
  /** Outbound connections at once per destination domain. */
  per_domain_connections?: number;
  /** Whether the region accepts receiving (the spec: us-east-1 and eu-west-1). */
  receiving?: boolean;
  /** Region in the sending sandbox. */
  sandbox?: boolean;
}

export type RegionOverrides = Partial<Record<RegionName, RegionSettings>>;

const stringKeys = ['mail_from_host', 'inbound_host', 'tracking_host', 'ehlo_name', 'source_address'];
/** Names other servers see (record targets, EHLO): fully qualified only. */
const hostKeys = ['mail_from_host', 'inbound_host', 'tracking_host', 'ehlo_name'];
const intKeys = ['concurrency', 'per_domain_connections'];
const boolKeys = ['receiving', 'sandbox'];

/** Returns a problem, or undefined when the value is a valid RegionOverrides object. */
export function checkRegionOverrides(value: unknown): string | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'must be a JSON object keyed by region';
  for (const [region, settings] of Object.entries(value)) {
    if (!(regionNames as readonly string[]).includes(region)) return `unknown region "${region}"; one of ${regionNames.join(', ')}`;
    if (!settings || typeof settings !== 'object' || Array.isArray(settings)) return `${region} must be an object`;
    for (const [key, v] of Object.entries(settings)) {
      if (stringKeys.includes(key)) {
        if (typeof v !== 'string' || v === '') return `${region}.${key} must be a non-empty string`;
        const problem = hostKeys.includes(key) ? fqdnProblem(v) : undefined;
        if (problem) return `${region}.${key} must be a fully qualified host name; "${v}" is ${problem}`;
      }
      else if (intKeys.includes(key)) { if (!Number.isSafeInteger(v) || (v as number) < 1) return `${region}.${key} must be a whole number of at least 1`; }
      else if (boolKeys.includes(key)) { if (typeof v !== 'boolean') return `${region}.${key} must be true or false`; }
      else return `${region}.${key} is not a region setting`;
    }
  }
  return undefined;
}
