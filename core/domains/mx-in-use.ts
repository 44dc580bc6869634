import { resolveMailRoute } from '../../dns/mx.js';
import type { DnsResolver } from '../../dns/resolver.js';
import { normalHost } from '../../dns/verify.js';
import { ServiceError } from '../errors.js';
import { regionNames, type RegionDirectory } from '../regions.js';

/**
 * Turning receiving on (or moving it) where the name's MX records already deliver to another
 * mailbox provider would take that mail away from it: refused with 409 receiving_mx_in_use unless
 * the caller sends `confirm_replace_mx` (spec, Domains). No MX, a null MX, or MX records that
 * already point at one of svc's inbound hosts are fine. When DNS cannot answer, the change is
 * refused with 503 (the caller may confirm instead of waiting).
 */
export async function checkReceivingMx(resolver: DnsResolver, regions: RegionDirectory, receivingName: string): Promise<void> {
  const route = await resolveMailRoute(resolver, receivingName);
  if (route.kind === 'temporary') {
    throw new ServiceError(503, 'service_unavailable', `DNS could not tell where mail for ${receivingName} goes now (${route.error}); try again, or pass confirm_replace_mx.`);
  }
  if (route.kind !== 'hosts' || route.implicit) return;
  const ours = new Set(regionNames.map((r) => normalHost(regions(r).inboundHost)));
  const elsewhere = route.hosts.filter((h) => !ours.has(normalHost(h.exchange)));
  if (elsewhere.length === 0) return;
  throw new ServiceError(409, 'receiving_mx_in_use',
    `Mail for ${receivingName} is delivered to ${elsewhere.map((h) => h.exchange).join(', ')} today. Turning receiving on means publishing svc's MX there; pass confirm_replace_mx: true to go ahead.`,
    { details: { mx: elsewhere.map((h) => h.exchange) } });
}
