import { newId } from '../../core/ids.js';
import { call } from './http.js';
import type { ZoneRecord } from './dns-server.js';

// Shared pieces of the fault and hostile-input suites (test/faults, test/hostile, bench/faults).

/** A valid-looking UUIDv7 that names nothing. */
export const randomId = (): string => newId();

export interface IdOperation {
  method: string;
  /** The OpenAPI path template, e.g. `/emails/{email_id}/attachments/{attachment_id}`. */
  path: string;
  /** Path parameter names in order. */
  params: string[];
  /** The request body's schema, resolved one level ($ref followed), when the operation takes one. */
  bodySchema?: JsonSchema;
}

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  $ref?: string;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** Every operation of a running appliance's OpenAPI document whose path has a `{…}` parameter. */
export async function idOperations(baseUrl: string): Promise<IdOperation[]> {
  const doc = (await call(baseUrl, 'GET', '/openapi.json')).body as OpenApiDocument;
  const resolve = (schema: JsonSchema | undefined): JsonSchema | undefined =>
    schema?.$ref ? doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] : schema;
  const out: IdOperation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    if (params.length === 0) continue;
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      out.push({ method: method.toUpperCase(), path, params, bodySchema: resolve(op.requestBody?.content?.['application/json']?.schema) });
    }
  }
  return out;
}

/**
 * The key of the resource a path parameter names: the path up to and including it, earlier
 * parameters written `{}`. `/emails/{email_id}/attachments/{attachment_id}` has the keys
 * `/emails/{}` and `/emails/{}/attachments/{}`.
 */
export function resourceKeys(path: string): string[] {
  const keys: string[] = [];
  const re = /\{[^}]+\}/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(path))) keys.push(path.slice(0, m.index).replace(/\{[^}]+\}/g, '{}') + '{}');
  return keys;
}

/**
 * URLs that must never be fetched from svc (the webhook SSRF suite's forms: metadata, link-local,
 * IPv4-mapped and embedding IPv6, unspecified, multicast, broadcast, reserved, every odd IPv4
 * spelling of loopback, private ranges, names resolving to any of those, names that do not
 * resolve). `ssrfZone` holds the test names they use.
 */
export const ssrfRefusedUrls = [
  'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/', 'http://[fe80::1]/',
  'http://[::ffff:127.0.0.1]/', 'http://[::ffff:169.254.169.254]/', 'http://[0:0:0:0:0:ffff:7f00:1]/', 'http://[::ffff:10.0.0.1]/',
  'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/', 'http://0.0.0.0/', 'http://0/', 'http://[::]/',
  'http://224.0.0.1/', 'http://255.255.255.255/', 'http://[ff02::1]/', 'http://198.18.0.1/', 'http://192.0.2.1/',
  'http://meta.ssrf.test/', 'http://mapped.ssrf.test/', 'http://nothing.ssrf.test/', 'http://servfail.ssrf.test/',
  'ftp://public.ssrf.test/', 'file:///etc/passwd', 'gopher://public.ssrf.test/', 'javascript:alert(1)', 'http://', 'not a url',
  'http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://LOCALHOST./hook', 'http://api.localhost/hook', 'http://[::1]/',
  'http://10.0.0.1/', 'http://172.16.5.4/', 'http://192.168.1.1/', 'http://100.64.0.1/', 'http://[fc00::1]/',
  'http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.0.0.1/', 'http://0x7f000001/', 'http://127.1/', 'http://017700000001/',
  'http://loop.ssrf.test/', 'http://alias.ssrf.test/', 'http://mixed.ssrf.test/', 'http://private6.ssrf.test/',
];

export const ssrfZone: Record<string, ZoneRecord[]> = {
  'public.ssrf.test': [{ type: 'A', value: '93.184.215.14' }],
  'loop.ssrf.test': [{ type: 'A', value: '127.0.0.1' }],
  'meta.ssrf.test': [{ type: 'A', value: '169.254.169.254' }],
  'mapped.ssrf.test': [{ type: 'AAAA', value: '::ffff:127.0.0.1' }],
  'mixed.ssrf.test': [{ type: 'A', value: '93.184.215.14' }, { type: 'A', value: '10.0.0.5' }],
  'private6.ssrf.test': [{ type: 'AAAA', value: 'fd12::1' }],
  'alias.ssrf.test': [{ type: 'CNAME', value: 'loop.ssrf.test' }],
};

/** Runs `work` and answers its result with the milliseconds it took. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - started) };
}
