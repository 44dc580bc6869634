import type { Config } from '../../config/schema.js';
import { ConfigError } from '../../config/load.js';
import { isRegionName, regionNames, type RegionName } from '../../core/regions.js';

/** The regions this process serves: `outbound_regions`, or every region when it is empty. */
export function servedRegions(config: Config): RegionName[] {
  if (config.outbound_regions.length === 0) return [...regionNames];
  for (const name of config.outbound_regions) {
    if (!isRegionName(name)) throw new ConfigError('outbound_regions', `unknown region "${name}"; one of ${regionNames.join(', ')}`);
  }
  return [...config.outbound_regions] as RegionName[];
}
