import t from 'tap';
import { Resend } from 'resend';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { call } from '../helpers/http.js';

// The onboarding sender: a fresh team, with no domain and no DNS, sends its first email from
// onboarding@simulator.svc.invalid to the mailbox simulator through the unchanged SDK, as the
// README's first steps show; to anyone else, or from another address there, it is refused with why.
t.setTimeout(60_000);
const app = await startTestAppliance({ roles: ['api', 'outbound'] });
t.teardown(() => app.stop());
const team = await app.newTeam('Onboarding');
const resend = new Resend(team.token, { baseUrl: app.baseUrl });

t.test('the README snippet: onboarding@ to delivered@ is delivered by the simulator', async (t) => {
  const sent = await resend.emails.send({
    from: 'Acme <onboarding@simulator.svc.invalid>', to: ['delivered@simulator.svc.invalid'], subject: 'Hello from svc', html: '<p>It works!</p>',
  });
  t.equal(sent.error, null);
  const id = sent.data!.id;
  const got = await waitFor('delivered', async () => { const r = await resend.emails.get(id); return r.data?.last_event === 'delivered' ? r : undefined; });
  t.match(got.data, { id, from: 'Acme <onboarding@simulator.svc.invalid>', to: ['delivered@simulator.svc.invalid'] });
  const bounced = await resend.emails.send({ from: 'onboarding@simulator.svc.invalid', to: 'bounced@simulator.svc.invalid', subject: 'b', text: 'b' });
  t.equal(bounced.error, null);
  await waitFor('bounced', async () => (await resend.emails.get(bounced.data!.id)).data?.last_event === 'bounced');
});

t.test('any recipient outside the simulator is refused, naming the onboarding sender and why', async (t) => {
  for (const body of [
    { to: 'you@example.com' },
    { to: 'delivered@simulator.svc.invalid', cc: 'boss@example.com' },
    { to: 'delivered@simulator.svc.invalid', bcc: ['x@example.org'] },
  ]) {
    const r = await call(app.baseUrl, 'POST', '/emails', { token: team.token, body: { from: 'onboarding@simulator.svc.invalid', subject: 'Hi', text: 'Hi', ...body } });
    t.equal(r.status, 403, JSON.stringify(body));
    t.equal(r.body.name, 'validation_error');
    t.match(r.body.message, /^The onboarding sender onboarding@simulator\.svc\.invalid may send only to the mailbox simulator \(delivered@, bounced@, complained@, suppressed@simulator\.svc\.invalid\); \S+@example\.\w+ is not one of them\. Add and verify a domain/);
  }
  const sdk = await resend.emails.send({ from: 'onboarding@simulator.svc.invalid', to: 'you@example.com', subject: 'Hi', text: 'Hi' });
  t.match(sdk.error, { name: 'validation_error', statusCode: 403 });
});

t.test('another sender on the simulator domain is refused, naming the only one', async (t) => {
  const r = await call(app.baseUrl, 'POST', '/emails', {
    token: team.token, body: { from: 'hello@simulator.svc.invalid', to: 'delivered@simulator.svc.invalid', subject: 'Hi', text: 'Hi' },
  });
  t.equal(r.status, 403);
  t.match(r.body, { name: 'validation_error', message: /its only sender is onboarding@simulator\.svc\.invalid/ });
});

t.test('a batch may mix it in; permissive keeps the allowed one', async (t) => {
  const r = await call(app.baseUrl, 'POST', '/emails/batch', {
    token: team.token, headers: { 'x-batch-validation': 'permissive' }, body: [
      { from: 'onboarding@simulator.svc.invalid', to: 'delivered@simulator.svc.invalid', subject: 'ok', text: 'ok' },
      { from: 'onboarding@simulator.svc.invalid', to: 'you@example.com', subject: 'no', text: 'no' },
    ],
  });
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.equal(r.body.data.length, 1);
  t.match(r.body.errors, [{ index: 1, message: /may send only to the mailbox simulator/ }]);
});
