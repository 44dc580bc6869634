import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';

// The hosted-email SDK, unchanged, pointed at svc: every segments and contacts.segments call it
// has, and contacts.list by segment.
const app = await startTestAppliance();
t.teardown(() => app.stop());
const team = await app.newTeam('SDK segments');
const resend = new Resend(team.token, { baseUrl: app.baseUrl });

t.test('segments: create, get, list, update, remove', async (t) => {
  const created = await resend.segments.create({ name: 'SDK customers' });
  t.equal(created.error, null, JSON.stringify(created.error));
  t.equal(created.data?.object, 'segment');
  const id = created.data!.id;
  const got = await resend.segments.get(id);
  t.equal(got.error, null);
  t.match(got.data, { object: 'segment', id, name: 'SDK customers', created_at: /^\d{4}-/ });
  const list = await resend.segments.list({ limit: 10 });
  t.equal(list.error, null);
  t.match(list.data, { object: 'list', has_more: false });
  t.same(list.data!.data.map((s) => s.id), [id]);
  const updated = await resend.segments.update(id, { name: 'SDK buyers' });
  t.equal(updated.error, null, JSON.stringify(updated.error));
  t.same(updated.data, { object: 'segment', id });
  t.equal((await resend.segments.get(id)).data?.name, 'SDK buyers');
  const removed = await resend.segments.remove(id);
  t.same(removed.data, { object: 'segment', id, deleted: true });
  const gone = await resend.segments.get(id);
  t.equal(gone.error?.name, 'not_found');
});

t.test('contacts.segments: add, list, remove; contacts.list by segment; create with segments', async (t) => {
  const seg = (await resend.segments.create({ name: 'SDK members' })).data!.id;
  const made = await resend.contacts.create({ email: 'sdk-one@example.com', segments: [{ id: seg }] });
  t.equal(made.error, null, JSON.stringify(made.error));
  const other = (await resend.contacts.create({ email: 'sdk-two@example.com' })).data!.id;
  const added = await resend.contacts.segments.add({ contactId: other, segmentId: seg });
  t.equal(added.error, null, JSON.stringify(added.error));
  t.same(added.data, { id: seg });
  const byEmail = await resend.contacts.segments.list({ email: 'sdk-two@example.com' });
  t.equal(byEmail.error, null);
  t.match(byEmail.data, { object: 'list', has_more: false });
  t.same(byEmail.data!.data.map((s) => [s.id, s.name]), [[seg, 'SDK members']]);
  const members = await resend.contacts.list({ segmentId: seg });
  t.equal(members.error, null, JSON.stringify(members.error));
  t.same(members.data!.data.map((c) => c.email), ['sdk-two@example.com', 'sdk-one@example.com']);
  const page = await resend.contacts.list({ segmentId: seg, limit: 1, after: other });
  t.same(page.data!.data.map((c) => c.email), ['sdk-one@example.com']);
  const removed = await resend.contacts.segments.remove({ email: 'sdk-two@example.com', segmentId: seg });
  t.equal(removed.error, null);
  t.same(removed.data, { id: seg, deleted: true });
  t.same((await resend.contacts.list({ segmentId: seg })).data!.data.map((c) => c.email), ['sdk-one@example.com']);
  t.same((await resend.contacts.segments.list({ contactId: other })).data!.data, []);
});
