import { regionNames, type RegionName, type RegionOverrides } from '../config/regions.js';

export { regionNames, type RegionName };

export interface Region {
  name: RegionName;
  mailFromHost: string;
  inboundHost: string;
  trackingHost: string;
  ehloName: string;
  sourceAddress?: string;
  concurrency: number;
  perDomainConnections: number;
  receiving: boolean;
  sandbox: boolean;
}

export type RegionDirectory = (name: RegionName) => Region;

export const isRegionName = (value: string): value is RegionName => (regionNames as readonly string[]).includes(value);

/** Every region's effective settings: the operator's overrides over this host's own name. */
export function regionDirectory(hostname: string, overrides: RegionOverrides): RegionDirectory {
  const regions = new Map<RegionName, Region>();
  for (const name of regionNames) {
    const o = overrides[name] ?? {};
    regions.set(name, {
      name,
      mailFromHost: o.mail_from_host ?? hostname,
      inboundHost: o.inbound_host ?? hostname,
      trackingHost: o.tracking_host ?? hostname,
      ehloName: o.ehlo_name ?? hostname,
      sourceAddress: o.source_address,
      concurrency: o.concurrency ?? 20,
      perDomainConnections: o.per_domain_connections ?? 5,
      receiving: o.receiving ?? (name === 'us-east-1' || name === 'eu-west-1'),
      sandbox: o.sandbox ?? false,
    });
  }
  return (name) => regions.get(name)!;
}
