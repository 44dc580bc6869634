import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import t from 'tap';
import ts from 'typescript';
import generated from '../../api/generated/swagger.json' with { type: 'json' };
import { operationMatcher } from '../../api/operations.js';
import { errorNames } from '../../core/errors.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { call } from '../helpers/http.js';
import { fakeSendingDomains } from '../helpers/sending.js';

// The document generated clients are made from: the one a running appliance serves.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const team = await app.newTeam('OpenAPI');
const served = await call(app.baseUrl, 'GET', '/openapi.json');
type Operation = Record<string, any>;
const doc = served.body as { paths: Record<string, Record<string, Operation>>; components: Record<string, any> };
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method, op })));
// Tests run from dist/test/api; node_modules is at the repository root.
const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Lint findings judged not to apply, each with the reason; every other finding fails the test. */
const accepted = [
  // `/emails/receiving/<x>` against `/emails/<x>/cancel|share|attachments`: the two would only
  // collide if an email id were the word `receiving` or a received email's id `cancel`, `share` or
  // `attachments`. Ids are UUIDv7, so a real request matches one template (checked below).
  ...['cancel', 'share', 'attachments'].map((tail) => ({
    rule: 'no-ambiguous-paths', path: `/emails/{email_id}/${tail}`, also: '/emails/receiving/{email_id}',
  })),
  // `/contacts/imports/<x>` against `/contacts/<x>/topics` and `/contacts/<x>/segments`: a contact
  // is named by an id or an address, never the word `imports`, and an import id is never `topics`
  // or `segments` (checked below).
  ...['topics', 'segments'].map((tail) => ({ rule: 'no-ambiguous-paths', path: '/contacts/imports/{id}', also: `/contacts/{contact}/${tail}` })),
  // Liveness and readiness read no input and need no key: there is no 4xx they could answer.
  { rule: 'operation-4xx-response', path: '/health', also: '' },
  { rule: 'operation-4xx-response', path: '/ready', also: '' },
];

const pathOf = (p: NormalizedProblem) => {
  const pointer = p.location[0]?.pointer ?? '';
  return decodeURIComponent(pointer.split('/')[2] ?? '').replaceAll('~1', '/').replaceAll('~0', '~');
};
const isAccepted = (p: NormalizedProblem) =>
  accepted.some((a) => a.rule === p.ruleId && a.path === pathOf(p) && p.message.includes(a.also));
const describe = (p: NormalizedProblem) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`;

t.test('the served document lints clean with the recommended ruleset', async (t) => {
  t.equal(served.status, 200);
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
  const errors = problems.filter((p) => p.severity === 'error');
  t.equal(errors.length, 0, `no errors:\n${errors.map(describe).join('\n')}`);
  const unexplained = problems.filter((p) => !isAccepted(p));
  t.same(unexplained.map(describe), [], 'no warning either, outside the accepted ones');
  for (const a of accepted) {
    const still = problems.some((p) => p.ruleId === a.rule && pathOf(p) === a.path);
    t.ok(still, `${a.rule} ${a.path} is still reported (else drop it from the accepted list)`);
  }
  const match = operationMatcher(doc);
  const id = '01900000-0000-7000-8000-000000000001';
  for (const tail of ['cancel', 'share', 'attachments']) {
    const method = tail === 'attachments' ? 'GET' : 'POST';
    const found = match(method, `/emails/${id}/${tail}`);
    t.equal(found.kind === 'operation' && found.operation.template, `/emails/{email_id}/${tail}`);
  }
  const received = match('GET', `/emails/receiving/${id}`);
  t.equal(received.kind === 'operation' && received.operation.template, '/emails/receiving/{email_id}');
  const contactImport = match('GET', `/contacts/imports/${id}`);
  t.equal(contactImport.kind === 'operation' && contactImport.operation.template, '/contacts/imports/{id}');
  const topics = match('GET', `/contacts/${id}/topics`);
  t.equal(topics.kind === 'operation' && topics.operation.template, '/contacts/{contact}/topics');
  const segments = match('GET', `/contacts/${id}/segments`);
  t.equal(segments.kind === 'operation' && segments.operation.template, '/contacts/{contact}/segments');
});

t.test('a bearer key on every authenticated operation, none on liveness and readiness', async (t) => {
  t.same(Object.keys(doc.components.securitySchemes), ['bearer']);
  t.match(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' });
  const open = operations.filter(({ op }) => op['x-svc-permission'] === 'none').map(({ method, path }) => `${method} ${path}`);
  t.same(open.sort(), ['get /health', 'get /ready']);
  t.notOk(Object.keys(doc.paths).some((p) => /^\/(downloads|share)\//.test(p)), 'signed links are not API operations');
  const placeholder = '01900000-0000-7000-8000-000000000002';
  for (const { path, method, op } of operations) {
    const name = `${method.toUpperCase()} ${path}`;
    const keyless = await call(app.baseUrl, method.toUpperCase(), path.replace(/\{[^}]+\}/g, placeholder));
    if (op['x-svc-permission'] === 'none') {
      t.same(op.security, [], `${name} declares no security`);
      t.equal(keyless.status, 200, `${name} answers without a key`);
    } else {
      t.same(op.security, [{ bearer: [] }], `${name} requires the bearer key`);
      t.equal(keyless.status, 401, `${name} refuses a call without a key`);
    }
  }
});

t.test('unique ids, a summary, a tag and the error answers on each operation', async (t) => {
  const ids = operations.map(({ op }) => op.operationId as string);
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  t.ok(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id)), 'operationIds are camelCase');
  t.ok(['sendEmail', 'listEmails', 'getEmail', 'createApiKey', 'listWebhooks'].every((id) => ids.includes(id)));
  const body = doc.components.schemas.ErrorBody;
  t.same(body.required, ['statusCode', 'name', 'message']);
  t.same(Object.keys(body.properties).sort(), ['claimable', 'code', 'details', 'errors', 'message', 'name', 'statusCode']);
  t.same(doc.components.schemas.ErrorName.enum, [...errorNames]);
  const errorRef = { $ref: '#/components/schemas/ErrorBody' };
  for (const { path, method, op } of operations) {
    const name = `${method.toUpperCase()} ${path}`;
    t.ok(op.summary && op.tags?.length === 1, `${name} has a summary and a tag`);
    if (op.security.length === 0) continue;
    const statuses = path.includes('{') ? ['401', '403', '404', '429', '500'] : ['401', '403', '429', '500'];
    for (const status of statuses) {
      t.same(op.responses[status]?.content?.['application/json']?.schema, errorRef, `${name} documents ${status}`);
    }
    t.ok(op.responses['429'].headers['retry-after'], `${name}: 429 names retry-after`);
  }
});

t.test('x-svc-permission and x-svc-scope are served exactly as generated', async (t) => {
  const source = generated as unknown as typeof doc;
  for (const { path, method, op } of operations) {
    const original = source.paths[path]![method]!;
    const extensions = (o: Operation) => [o['x-svc-permission'], o['x-svc-scope']];
    t.same(extensions(op), extensions(original), `${method} ${path}`);
  }
  t.equal(operations.length, Object.values(source.paths).flatMap((item) => Object.keys(item)).length);
});

// Written beside the generated types and type-checked against them; then run against the
// appliance. No User-Agent is set: fetch sends one, as HTTP clients do.
const clientSource = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type ErrorName = components['schemas']['ErrorBody']['name'];

export async function run(baseUrl: string, key: string, from: string, to: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });
  const created = await client.POST('/api-keys', { body: { name: 'made by a generated client' } });
  const token: string | undefined = created.data?.token;
  const listed = await client.GET('/api-keys', { params: { query: { limit: '100' } } });
  const names: string[] = (listed.data?.data ?? []).map((k) => k.name);
  const sent = await client.POST('/emails', {
    params: { header: { 'idempotency-key': 'generated-client-1' } },
    body: { from, to, subject: 'From a generated client', text: 'Typed all the way.' },
  });
  const id: string | undefined = sent.data?.id;
  const shown = id ? await client.GET('/emails/{email_id}', { params: { path: { email_id: id } } }) : undefined;
  const unknownId = '01900000-0000-7000-8000-00000000000f';
  const missing = await client.GET('/emails/{email_id}', { params: { path: { email_id: unknownId } } });
  const missingName: ErrorName | undefined = missing.error?.name;
  return {
    created: created.response.status, token, names, sent: sent.response.status, id,
    shownId: shown?.data?.id, missing: missing.response.status, missingName,
  };
}

/** Never called: mistakes the generated types must refuse. */
export function mistakes(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error the document has no such path
  void client.GET('/no-such-path');
  // @ts-expect-error a key needs a name
  void client.POST('/api-keys', { body: {} });
  // @ts-expect-error email_id is a path parameter
  void client.GET('/emails/{email_id}', {});
}
`;

t.test('a typed client generated from the served document compiles and calls the appliance', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-client-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(doc as never)));
  writeFileSync(join(dir, 'client.ts'), clientSource);

  const program = ts.createProgram([join(dir, 'client.ts')], {
    target: ts.ScriptTarget.ES2023, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'], types: [], strict: true, skipLibCheck: true, outDir: dir,
  });
  const emitted = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  const text = diagnostics.map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  t.same(text, [], 'the generated types and the client compile, and refuse the mistakes');

  fakeSendingDomains(app).add({ teamId: team.teamId, name: 'typed-client.net' });
  type Run = (baseUrl: string, key: string, from: string, to: string) => Promise<Record<string, any>>;
  const client = (await import(pathToFileURL(join(dir, 'client.js')).href)) as { run: Run };
  const to = `delivered@${app.config.mailbox_simulator_domain}`;
  const result = await client.run(app.baseUrl, team.token, 'hello@typed-client.net', to);
  t.equal(result.created, 201);
  t.match(result.token, /^svc_/);
  t.ok(result.names.includes('made by a generated client'), 'the new key is listed');
  t.equal(result.sent, 200);
  t.match(result.id, /^[0-9a-f-]{36}$/);
  t.equal(result.shownId, result.id, 'the email reads back through the typed path');
  t.equal(result.missing, 404);
  t.equal(result.missingName, 'not_found');
});
