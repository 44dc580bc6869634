import ipaddr from 'ipaddr.js';
import { ConfigError } from '../config/load.js';
import { ServiceError } from './errors.js';

// Where share links and signed download links point. Never the request's Host header: a caller
// picks that header, so a link minted from it can send the secret token to any host the caller
// names (and a cache or proxy in between may hand that answer to someone else).
//
// public_base_url when set. Else the listener's own address, which is only an address people can
// use when http_host is loopback (the default, 127.0.0.1): the API is then reached on this host,
// or through a reverse proxy (the documented way to publish it) whose public name svc cannot know.
// Any other http_host is a wildcard (0.0.0.0, ::), which is no address at all, or a LAN address
// that would route links around that proxy and its TLS; so outside loopback, with no
// public_base_url, links are refused with a 503 naming the setting instead of being guessed. 503
// and not a 4xx: the request is fine, the server is not set up to answer it.

export interface LinkBaseSettings {
  publicBaseUrl: string;
  httpHost: string;
  /** 0 picks a free port: the address is then known once the listener is bound. */
  httpPort: number;
}

export interface LinkBase {
  /** scheme://host[:port] of every link, no trailing slash; throws a 503 ServiceError when none can be known. */
  url(): string;
  /** The port the API listener was bound to. */
  listening(port: number): void;
}

export function linkBase(settings: LinkBaseSettings): LinkBase {
  const configured = settings.publicBaseUrl ? checkedPublicBase(settings.publicBaseUrl) : undefined;
  const host = loopbackHost(settings.httpHost);
  let port = settings.httpPort;
  return {
    url() {
      if (configured) return configured;
      if (!host) throw refusal(`the API listens on ${settings.httpHost}, not a loopback address, so svc cannot tell the address clients reach it by`);
      if (port === 0) throw refusal('the API listener is not bound yet');
      return `http://${host}:${port}`;
    },
    listening(bound) {
      port = bound;
    },
  };
}

const refusal = (why: string) => new ServiceError(503, 'service_unavailable',
  `Links cannot be made: ${why}. The operator must set \`public_base_url\` (the public https address of the API).`);

/** The host part of a link to a loopback listener (IPv6 in brackets), or undefined. */
function loopbackHost(httpHost: string): string | undefined {
  if (httpHost.toLowerCase() === 'localhost') return 'localhost';
  if (!ipaddr.isValid(httpHost)) return undefined;
  const address = ipaddr.process(httpHost);
  if (address.range() !== 'loopback') return undefined;
  return address.kind() === 'ipv6' ? `[${address.toString()}]` : address.toString();
}

function checkedPublicBase(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('public_base_url', `must be an absolute http(s) URL; got "${raw}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError('public_base_url', `must be an http(s) URL; got "${raw}"`);
  if (url.username || url.password || url.search || url.hash) throw new ConfigError('public_base_url', 'must not carry credentials, a query or a fragment');
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
