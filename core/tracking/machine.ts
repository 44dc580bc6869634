// Machine opens and clicks: hits no person made. Privacy proxies fetch every image of a message
// when it arrives (Apple Mail Privacy Protection), mail security gateways follow every link
// within seconds of delivery, and some clients are plainly programs. Such hits are still recorded
// (they are what happened) but flagged in the event (`machine: true` and `machineReason` inside
// `open` / `click`), and GET /emails/metrics?exclude_machine=true leaves them out.
//
// The rules, from what a hit carries (its user agent, and how long after the message was composed
// for the recipient — the token's mint time, which is when it was handed to the recipient's server):
//   open   automated_client  no user agent, or a program's (curl, python, bot, crawler, scanner…)
//   open   privacy_proxy     Apple's privacy proxy: its user agent is Safari's engine without a
//                            browser or mail client name (`Mozilla/5.0 (Macintosh; Intel Mac OS X
//                            10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)` exactly)
//   open   proxy_prefetch    an image proxy's user agent (Google, Yahoo) within 60 s of delivery:
//                            fetched on arrival, not when read (later ones are the reader's)
//   click  automated_client  as for opens, plus known link scanners (Safe Links, Proofpoint,
//                            Mimecast, Barracuda, Bitdefender…)
//   click  too_soon          within 5 s of delivery: no reader is that quick
//   click  link_burst        another link of the same message and recipient clicked less than
//                            1 s before (a scanner following every link)
// The IP ranges of the proxies are not known offline, so addresses are not judged.

export type MachineReason = 'automated_client' | 'privacy_proxy' | 'proxy_prefetch' | 'too_soon' | 'link_burst';

export const PROXY_PREFETCH_WINDOW_S = 60;
export const CLICK_TOO_SOON_S = 5;
export const LINK_BURST_MS = 1000;

const programs = /bot\b|crawler|spider|curl\/|wget\/|python|go-http-client|java\/|okhttp|libwww|httpclient|axios|node-fetch|undici|headless|phantomjs|scanner|preview|slurp/i;
const linkScanners = /safelinks|proofpoint|urldefense|mimecast|barracuda|bitdefender|trendmicro|symantec|forcepoint|sophos|fortinet|cisco|ironport|microsoft office|ms-office|outlook-ios-android|zscaler/i;
const applePrivacyProxy = /^Mozilla\/5\.0 \(Macintosh; Intel Mac OS X 10_15_7\) AppleWebKit\/605\.1\.15 \(KHTML, like Gecko\)$/;
const imageProxies = /GoogleImageProxy|YahooMailProxy|ggpht\.com/i;

export interface HitFacts {
  kind: 'open' | 'click';
  userAgent: string;
  /** Seconds from the message's composition to the hit. */
  sinceSentS: number;
  /** Milliseconds since the previous click on another link of the same message and recipient. */
  sinceOtherClickMs?: number;
}

export function machineReason(hit: HitFacts): MachineReason | undefined {
  const ua = hit.userAgent.trim();
  if (!ua || programs.test(ua)) return 'automated_client';
  if (hit.kind === 'open') {
    if (applePrivacyProxy.test(ua)) return 'privacy_proxy';
    if (imageProxies.test(ua) && hit.sinceSentS < PROXY_PREFETCH_WINDOW_S) return 'proxy_prefetch';
    return undefined;
  }
  if (linkScanners.test(ua)) return 'automated_client';
  if (hit.sinceSentS < CLICK_TOO_SOON_S) return 'too_soon';
  if (hit.sinceOtherClickMs !== undefined && hit.sinceOtherClickMs < LINK_BURST_MS) return 'link_burst';
  return undefined;
}
