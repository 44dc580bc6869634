import type { Test } from 'tap';
import { countMembers } from '../../core/segments/index.js';
import type { TestAppliance } from './appliance.js';
import { platformEvents } from './audience.js';
import { call } from './http.js';

// The segment membership scenario, run on SQLite and on PostgreSQL: a small audience with typed
// properties, topic choices and a global unsubscribe, then filters whose exact member sets are
// known, read through GET /segments/{id}/contacts and GET /contacts?segment_id=.

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

export function apiOf(app: TestAppliance, token: string): Api {
  return (method, path, body) => call(app.baseUrl, method, path, { token, body });
}

/** Every member's address, walking the list with `after` `limit` at a time until an empty page. */
export async function memberEmails(api: Api, segmentId: string, limit = 2, via: 'segments' | 'contacts' = 'segments'): Promise<string[]> {
  const seen: string[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const cursor = after ? `&after=${after}` : '';
    const path = via === 'segments' ? `/segments/${segmentId}/contacts?limit=${limit}${cursor}` : `/contacts?segment_id=${segmentId}&limit=${limit}${cursor}`;
    const r = await api('GET', path);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.data.length === 0) return seen.sort();
    seen.push(...r.body.data.map((c: { email: string }) => c.email));
    after = r.body.data.at(-1).id;
  }
  throw new Error('the walk did not end');
}

export async function membershipScenario(t: Test, app: TestAppliance, teamName: string): Promise<void> {
  const { token, teamId } = await app.newTeam(teamName);
  const db = app.appliance.services.database.db;
  const api = apiOf(app, token);
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const news = (await ok('POST', '/topics', { name: 'News', default_subscription: 'opt_in' })).id;
  const offers = (await ok('POST', '/topics', { name: 'Offers', default_subscription: 'opt_out' })).id;
  // ann: pro, 10 seats, vip, chose offers; bob: basic, 2 seats, left news; cy: no properties,
  // globally unsubscribed; dee: pro, 5 seats, not vip, chose offers but unsubscribed from all.
  await ok('POST', '/contacts', { email: 'ann@example.com', first_name: 'Ann', last_name: 'Archer', properties: { plan: 'pro', seats: 10, vip: true }, topics: [{ id: offers, subscription: 'opt_in' }] });
  await ok('POST', '/contacts', { email: 'Bob@Example.com', first_name: 'Bob', properties: { plan: 'basic', seats: 2, vip: false }, topics: [{ id: news, subscription: 'opt_out' }] });
  await ok('POST', '/contacts', { email: 'cy@other.org', unsubscribed: true });
  await ok('POST', '/contacts', { email: 'dee@other.org', first_name: 'Dee', properties: { plan: 'pro', seats: 5, vip: false }, topics: [{ id: offers, subscription: 'opt_in' }] });
  await ok('PATCH', '/contacts/dee@other.org', { unsubscribed: true });
  const seg = async (filter: unknown) => (await ok('POST', '/segments', { name: `s${Math.random()}`, filter })).id as string;
  const cases: [string, unknown, string[]][] = [
    ['plan eq pro', { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }] }, ['ann@example.com', 'dee@other.org']],
    ['plan neq pro (absent counts as not equal)', { all: [{ field: 'properties.plan', op: 'neq', value: 'pro' }] }, ['Bob@Example.com', 'cy@other.org']],
    ['plan contains "RO" (case-insensitive)', { all: [{ field: 'properties.plan', op: 'contains', value: 'RO' }] }, ['ann@example.com', 'dee@other.org']],
    ['plan in', { any: [{ field: 'properties.plan', op: 'in', value: ['basic', 'gold'] }] }, ['Bob@Example.com']],
    ['plan exists false', { all: [{ field: 'properties.plan', op: 'exists', value: false }] }, ['cy@other.org']],
    ['seats gt 2', { all: [{ field: 'properties.seats', op: 'gt', value: 2 }] }, ['ann@example.com', 'dee@other.org']],
    ['seats gte 2 and lte 5', { all: [{ field: 'properties.seats', op: 'gte', value: 2 }, { field: 'properties.seats', op: 'lte', value: 5 }] }, ['Bob@Example.com', 'dee@other.org']],
    ['seats in', { all: [{ field: 'properties.seats', op: 'in', value: [10, 5] }] }, ['ann@example.com', 'dee@other.org']],
    ['seats exists', { all: [{ field: 'properties.seats', op: 'exists' }] }, ['Bob@Example.com', 'ann@example.com', 'dee@other.org']],
    ['vip eq true', { all: [{ field: 'properties.vip', op: 'eq', value: true }] }, ['ann@example.com']],
    ['vip eq false', { all: [{ field: 'properties.vip', op: 'eq', value: false }] }, ['Bob@Example.com', 'dee@other.org']],
    ['any of two', { any: [{ field: 'first_name', op: 'eq', value: 'Bob' }, { field: 'email', op: 'contains', value: '@OTHER.' }] }, ['Bob@Example.com', 'cy@other.org', 'dee@other.org']],
    ['not', { not: { field: 'email', op: 'contains', value: 'other.org' } }, ['Bob@Example.com', 'ann@example.com']],
    ['not of a list (none of them)', { not: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { field: 'properties.seats', op: 'eq', value: 10 }] }, ['Bob@Example.com', 'cy@other.org', 'dee@other.org']],
    ['email eq ignores case', { all: [{ field: 'email', op: 'eq', value: 'BOB@example.com' }] }, ['Bob@Example.com']],
    ['email neq', { all: [{ field: 'email', op: 'neq', value: 'bob@example.com' }] }, ['ann@example.com', 'cy@other.org', 'dee@other.org']],
    ['email in', { all: [{ field: 'email', op: 'in', value: ['ANN@example.com', 'cy@other.org'] }] }, ['ann@example.com', 'cy@other.org']],
    ['first_name exists', { all: [{ field: 'first_name', op: 'exists' }] }, ['Bob@Example.com', 'ann@example.com', 'dee@other.org']],
    ['first_name neq (no name counts)', { all: [{ field: 'first_name', op: 'neq', value: 'Ann' }] }, ['Bob@Example.com', 'cy@other.org', 'dee@other.org']],
    ['last_name in', { all: [{ field: 'last_name', op: 'in', value: ['Archer'] }] }, ['ann@example.com']],
    ['unsubscribed eq true', { all: [{ field: 'unsubscribed', op: 'eq', value: true }] }, ['cy@other.org', 'dee@other.org']],
    ['created_at gte a past date', { all: [{ field: 'created_at', op: 'gte', value: '2020-01-01' }] }, ['Bob@Example.com', 'ann@example.com', 'cy@other.org', 'dee@other.org']],
    ['created_at lt a past instant', { all: [{ field: 'created_at', op: 'lt', value: '2020-01-01T00:00:00Z' }] }, []],
    ['news opt_in: default in, global unsubscribe wins', { all: [{ topic: news, subscription: 'opt_in' }] }, ['ann@example.com']],
    ['news opt_out', { all: [{ topic: news, subscription: 'opt_out' }] }, ['Bob@Example.com', 'cy@other.org', 'dee@other.org']],
    ['offers opt_in: default out, own choice in, unsubscribe wins', { all: [{ topic: offers, subscription: 'opt_in' }] }, ['ann@example.com']],
    ['offers opt_out', { all: [{ topic: offers, subscription: 'opt_out' }] }, ['Bob@Example.com', 'cy@other.org', 'dee@other.org']],
    ['three deep', { all: [{ any: [{ not: { field: 'properties.vip', op: 'eq', value: true } }, { topic: offers, subscription: 'opt_in' }] }, { field: 'properties.seats', op: 'exists' }] }, ['Bob@Example.com', 'ann@example.com', 'dee@other.org']],
    // Counted from a property's index range, the rest asked of the value row's contact id (topics,
    // the global unsubscribe, other properties) or, when it names a contact field, of the row.
    ['plan eq pro and news opt_in', { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { topic: news, subscription: 'opt_in' }] }, ['ann@example.com']],
    ['plan eq pro and news opt_out', { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { topic: news, subscription: 'opt_out' }] }, ['dee@other.org']],
    ['seats gte 2 and offers opt_in', { all: [{ field: 'properties.seats', op: 'gte', value: 2 }, { topic: offers, subscription: 'opt_in' }] }, ['ann@example.com']],
    ['seats gte 2 and offers opt_out', { all: [{ field: 'properties.seats', op: 'gte', value: 2 }, { topic: offers, subscription: 'opt_out' }] }, ['Bob@Example.com', 'dee@other.org']],
    ['plan in and unsubscribed eq true', { all: [{ field: 'properties.plan', op: 'in', value: ['pro', 'basic'] }, { field: 'unsubscribed', op: 'eq', value: true }] }, ['dee@other.org']],
    ['plan in and unsubscribed eq false', { all: [{ field: 'properties.plan', op: 'in', value: ['pro', 'basic'] }, { field: 'unsubscribed', op: 'eq', value: false }] }, ['Bob@Example.com', 'ann@example.com']],
    ['seats gt 1 and any of vip, not news opt_in', { all: [{ field: 'properties.seats', op: 'gt', value: 1 }, { any: [{ field: 'properties.vip', op: 'eq', value: true }, { not: { topic: news, subscription: 'opt_in' } }] }] }, ['Bob@Example.com', 'ann@example.com', 'dee@other.org']],
    ['seats lt 10, plan neq pro, seats exists', { all: [{ field: 'properties.seats', op: 'lt', value: 10 }, { field: 'properties.plan', op: 'neq', value: 'pro' }, { field: 'properties.seats', op: 'exists' }] }, ['Bob@Example.com']],
    ['plan eq pro and first_name (reads the row)', { all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { field: 'first_name', op: 'eq', value: 'Dee' }] }, ['dee@other.org']],
  ];
  for (const [label, filter, expected] of cases) {
    const id = await seg(filter);
    t.same(await memberEmails(api, id), [...expected].sort(), label);
    t.equal(await countMembers(db, teamId, id), expected.length, `${label}: counted`);
  }

  const vip = await seg({ all: [{ field: 'properties.vip', op: 'eq', value: true }] });
  t.same(await memberEmails(api, vip, 1, 'contacts'), ['ann@example.com'], 'GET /contacts?segment_id= is the same list');
  const added = await api('POST', `/contacts/cy@other.org/segments/${vip}`);
  t.equal(added.status, 200, JSON.stringify(added.body));
  t.same(added.body, { id: vip });
  t.same(await memberEmails(api, vip), ['ann@example.com', 'cy@other.org'], 'a contact added by hand is in');
  t.equal(await countMembers(db, teamId, vip), 2, 'counted: one by the filter, one by hand');
  t.equal((await api('POST', `/contacts/ann@example.com/segments/${vip}`)).status, 200);
  t.equal(await countMembers(db, teamId, vip), 2, 'counted once though added by hand and matching');
  t.equal((await api('DELETE', `/contacts/ann@example.com/segments/${vip}`)).status, 200);
  t.same((await api('GET', '/contacts/cy@other.org/segments')).body.data.map((s: { id: string }) => s.id).filter((id: string) => id === vip), [vip]);
  const entered = (await platformEvents(app, teamId)).filter((e) => e.type === 'svc:segment.entered' && e.data.segment_id === vip);
  t.same(entered.map((e) => e.data.contact_id), [(await ok('GET', '/contacts/cy@other.org')).id], 'svc:segment.entered for the addition');
  t.same((await api('DELETE', `/contacts/cy@other.org/segments/${vip}`)).body, { id: vip, deleted: true });
  t.same(await memberEmails(api, vip), ['ann@example.com'], 'and out again once removed');
  t.equal((await api('DELETE', `/contacts/ann@example.com/segments/${vip}`)).status, 404, 'a member by filter was never added by hand');

  // A contact write that makes a contact match: one svc:segment.entered, and none for a write that changes nothing.
  await ok('PATCH', '/contacts/bob@example.com', { properties: { vip: true } });
  await ok('PATCH', '/contacts/bob@example.com', { first_name: 'Robert' });
  const bob = (await ok('GET', '/contacts/bob@example.com')).id;
  const bobEntered = (await platformEvents(app, teamId)).filter((e) => e.type === 'svc:segment.entered' && e.contact_id === bob).map((e) => e.data.segment_id);
  t.ok(bobEntered.includes(vip), 'Bob entered the vip segment');
  t.equal(bobEntered.filter((id) => id === vip).length, 1, 'once');
  t.same(await memberEmails(api, vip), ['Bob@Example.com', 'ann@example.com']);
}
