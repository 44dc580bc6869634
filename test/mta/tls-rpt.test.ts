import t from 'tap';
import { gunzipSync } from 'node:zlib';
import { simpleParser } from 'mailparser';
import type { JobsRole } from '../../bin/roles/jobs.js';
import { buildTlsReport, parseTlsRptRecord } from '../../core/tls-reports/index.js';
import { failedTlsResult, sessionTlsResult } from '../../mta/outbound/tls-results.js';
import { addTlsRptCounts, markTlsRptReported, mtaStsPolicy, pruneTlsRpt, saveMtaStsPolicy, tlsRptCountsOf, unreportedTlsRptDays, type TlsRptCountRow } from '../../storage/repos/index.js';
import { startTestAppliance } from '../helpers/appliance.js';
import { waitFor } from '../helpers/deadline.js';
import { mailZone } from '../helpers/email-fixtures.js';
import { testClock } from '../helpers/test-clock.js';
import { startFakeMx } from '../helpers/fake-mx.js';
import { startPolicyServer } from '../helpers/policy-server.js';
import { makeTestCa } from '../helpers/test-ca.js';
import { openPgFixture } from '../helpers/pg-rows.js';
import { migrateToLatest } from '../../storage/sql/index.js';

// TLS-RPT (RFC 8460): the daily report built from the outbound role's session counts, sent by the
// jobs role to the policy domain's rua — as report mail to a mailto: address (delivered by svc's
// own SMTP code to a fake MX) or POSTed to an https: collector — once per domain and day.
t.setTimeout(120_000);

const policyText = 'version: STSv1\nmode: testing\nmx: mx.rpt-mail.net\nmx: *.backup.rpt-mail.net\nmax_age: 86400\n';
const row = (over: Partial<TlsRptCountRow>): TlsRptCountRow => ({ day: '2026-03-01', policy_domain: 'rpt-mail.net', policy_id: 'p1', mx_host: 'mx.rpt-mail.net', result: 'success', sessions: 1, ...over });
const policyRow = {
  domain: 'rpt-mail.net', policy_id: 'p1', mode: 'testing' as const, max_age: 86400, mx: '["mx.rpt-mail.net","*.backup.rpt-mail.net"]',
  policy_text: policyText, fetched_at: '2026-03-01T00:00:00.000Z', expires_at: '2026-03-02T00:00:00.000Z',
};

t.test('the report JSON: policy, summary and failure details (RFC 8460 section 4)', async (t) => {
  const report = buildTlsReport({ organization: 'mail.svc.example', contact: 'postmaster@mail.svc.example' }, 'rpt-mail.net', '2026-03-01', [
    row({ sessions: 40 }), row({ mx_host: 'mx2.backup.rpt-mail.net', sessions: 2 }),
    row({ result: 'certificate-host-mismatch', sessions: 3 }), row({ mx_host: 'other.net', result: 'validation-failure', sessions: 1 }),
    row({ policy_id: '', mx_host: '', result: 'sts-policy-fetch-error', sessions: 5 }),
  ], policyRow);
  t.same(report, {
    'organization-name': 'mail.svc.example',
    'date-range': { 'start-datetime': '2026-03-01T00:00:00Z', 'end-datetime': '2026-03-01T23:59:59Z' },
    'contact-info': 'postmaster@mail.svc.example',
    'report-id': '2026-03-01.rpt-mail.net@mail.svc.example',
    policies: [
      {
        policy: { 'policy-type': 'sts', 'policy-domain': 'rpt-mail.net', 'policy-string': ['version: STSv1', 'mode: testing', 'mx: mx.rpt-mail.net', 'mx: *.backup.rpt-mail.net', 'max_age: 86400'], 'mx-host': ['mx.rpt-mail.net', '*.backup.rpt-mail.net'] },
        summary: { 'total-successful-session-count': 42, 'total-failure-session-count': 4 },
        'failure-details': [
          { 'result-type': 'certificate-host-mismatch', 'receiving-mx-hostname': 'mx.rpt-mail.net', 'failed-session-count': 3 },
          { 'result-type': 'validation-failure', 'receiving-mx-hostname': 'other.net', 'failed-session-count': 1 },
        ],
      },
      {
        policy: { 'policy-type': 'sts', 'policy-domain': 'rpt-mail.net' },
        summary: { 'total-successful-session-count': 0, 'total-failure-session-count': 5 },
        'failure-details': [{ 'result-type': 'sts-policy-fetch-error', 'failed-session-count': 5 }],
      },
    ],
  });
});

t.test('session results in TLS-RPT\'s words', async (t) => {
  t.equal(sessionTlsResult(null), 'starttls-not-supported', 'a plaintext session');
  t.equal(sessionTlsResult({ version: 'TLSv1.3', cipher: 'x', verified: true }), 'success');
  t.equal(sessionTlsResult({ version: 'TLSv1.3', cipher: 'x', verified: false, failure: 'ERR_TLS_CERT_ALTNAME_INVALID' }), 'certificate-host-mismatch');
  t.equal(sessionTlsResult({ version: 'TLSv1.3', cipher: 'x', verified: false, failure: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), 'certificate-not-trusted');
  t.equal(sessionTlsResult({ version: 'TLSv1.3', cipher: 'x', verified: false, failure: 'CERT_HAS_EXPIRED' }), 'certificate-expired');
  t.equal(failedTlsResult({ code: 'ETLS', command: 'STARTTLS', message: 'Error upgrading connection with STARTTLS' }), 'starttls-not-supported');
  t.equal(failedTlsResult({ code: 'ESOCKET', originalCode: 'ERR_TLS_CERT_ALTNAME_INVALID' }), 'certificate-host-mismatch');
  t.equal(failedTlsResult({ code: 'ESOCKET', originalCode: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }), 'certificate-not-trusted');
  t.equal(failedTlsResult({ code: 'ECONNECTION', originalCode: 'ECONNREFUSED' }), null, 'not a TLS failure');
});

t.test('the _smtp._tls record: rua destinations', async (t) => {
  t.same(parseTlsRptRecord(['v=TLSRPTv1; rua=mailto:tls@example.net,https://r.example.net/v1']), [
    { kind: 'mailto', address: 'tls@example.net' }, { kind: 'https', url: 'https://r.example.net/v1' },
  ]);
  t.same(parseTlsRptRecord(['v=TLSRPTv1;rua=mailto:a@b.net']), [{ kind: 'mailto', address: 'a@b.net' }]);
  t.same(parseTlsRptRecord(['v=spf1 -all']), [], 'not a TLS-RPT record');
  t.same(parseTlsRptRecord(['v=TLSRPTv1; rua=mailto:a@b.net', 'v=TLSRPTv1; rua=mailto:c@d.net']), [], 'two records: none');
  t.same(parseTlsRptRecord(['v=TLSRPTv1; rua=http://insecure.net/']), [], 'http: is not a transport');
});

t.test('the jobs role sends each finished day once: mailto to the rua\'s MX, https POSTed, none without a record', async (t) => {
  const ca = await makeTestCa();
  const collector = await startPolicyServer(await ca.issue(['collector.rpt-https.net']));
  const dns = await mailZone(['collector.net']);
  dns.set('_smtp._tls.rpt-mail.net', [{ type: 'TXT', value: 'v=TLSRPTv1; rua=mailto:reports@collector.net' }]);
  dns.set('_smtp._tls.rpt-https.net', [{ type: 'TXT', value: `v=TLSRPTv1; rua=https://collector.rpt-https.net:${collector.port}/tlsrpt` }]);
  dns.set('collector.rpt-https.net', [{ type: 'A', value: '127.0.0.1' }]);
  const mx = await startFakeMx();
  const clock = testClock(new Date('2026-03-02T01:00:00Z'));
  const app = await startTestAppliance({
    clock, roles: ['jobs'],
    env: {
      SVC_DNS_SERVERS: dns.address, SVC_DNS_CACHE_TTL_S: '0', SVC_OUTBOUND_PORT: String(mx.port), SVC_MAIL_HOSTNAME: 'mail.svc-test.net',
      SVC_OUTBOUND_TLS_CA_FILE: ca.caFile, SVC_MTA_STS_ALLOW_PRIVATE: 'true',
    },
  });
  t.teardown(async () => { await app.stop(); await mx.stop(); await collector.stop(); await dns.stop(); });
  const db = app.appliance.services.database.db;
  await saveMtaStsPolicy(db, policyRow);
  await addTlsRptCounts(db, [
    row({ sessions: 7 }), row({ result: 'starttls-not-supported', sessions: 2 }),
    row({ policy_domain: 'rpt-https.net', policy_id: 'h1', mx_host: 'mx.rpt-https.net', sessions: 3 }),
    row({ policy_domain: 'rpt-none.net', policy_id: 'n1', mx_host: 'mx.rpt-none.net', sessions: 1 }),
    row({ day: '2026-03-02', sessions: 9 }), // today: not finished, not reported yet
  ]);
  const jobs = app.appliance.running.find((r) => r.name === 'jobs') as JobsRole;
  t.ok(await jobs.scheduler.runNow('tls-reports'));
  const reportMail = await waitFor('the report mail at the collector MX', async () => mx.received.find((m) => m.rcptTo === 'reports@collector.net'));
  const parsed = await simpleParser(reportMail.raw);
  t.equal(parsed.headers.get('tls-report-domain'), 'rpt-mail.net');
  t.equal(parsed.headers.get('tls-report-submitter'), 'mail.svc-test.net');
  t.match(parsed.subject, /^Report Domain: rpt-mail\.net Submitter: mail\.svc-test\.net Report-ID: </);
  t.match(String((parsed.headers.get('content-type') as { value: string; params: Record<string, string> }).value), 'multipart/report');
  t.equal((parsed.headers.get('content-type') as { params: Record<string, string> }).params['report-type'], 'tlsrpt');
  t.equal(reportMail.mailFrom, 'tlsrpt-noreply@mail.svc-test.net');
  const attachment = parsed.attachments[0]!;
  t.equal(attachment.contentType, 'application/tlsrpt+gzip');
  t.match(attachment.filename, /^mail\.svc-test\.net!rpt-mail\.net!1772323200!1772409599\.json\.gz$/);
  const json = JSON.parse(gunzipSync(attachment.content).toString()) as Record<string, any>;
  t.match(json, {
    'organization-name': 'mail.svc-test.net', 'contact-info': 'postmaster@mail.svc-test.net',
    'date-range': { 'start-datetime': '2026-03-01T00:00:00Z' },
    policies: [{
      policy: { 'policy-type': 'sts', 'policy-domain': 'rpt-mail.net', 'mx-host': ['mx.rpt-mail.net', '*.backup.rpt-mail.net'] },
      summary: { 'total-successful-session-count': 7, 'total-failure-session-count': 2 },
      'failure-details': [{ 'result-type': 'starttls-not-supported', 'receiving-mx-hostname': 'mx.rpt-mail.net', 'failed-session-count': 2 }],
    }],
  });
  t.equal(collector.posts.length, 1, 'the https rua got its report');
  t.equal(collector.posts[0]!.path, '/tlsrpt');
  t.equal(collector.posts[0]!.contentType, 'application/tlsrpt+gzip');
  t.match(JSON.parse(gunzipSync(collector.posts[0]!.body).toString()), { policies: [{ policy: { 'policy-domain': 'rpt-https.net' }, summary: { 'total-successful-session-count': 3 } }] });
  const outcomes = await db.selectFrom('tls_rpt_reports').select(['policy_domain', 'day', 'outcome']).orderBy('policy_domain').execute();
  t.same(outcomes, [
    { policy_domain: 'rpt-https.net', day: '2026-03-01', outcome: 'sent' },
    { policy_domain: 'rpt-mail.net', day: '2026-03-01', outcome: 'sent' },
    { policy_domain: 'rpt-none.net', day: '2026-03-01', outcome: 'no_rua' },
  ], 'today is not reported; a domain without a record is marked, not mailed');
  t.ok(await jobs.scheduler.runNow('tls-reports'));
  t.equal(mx.received.length, 1, 'a second run sends nothing again');
  t.equal(collector.posts.length, 1);
});

t.test('the counts and policies on PostgreSQL: upserts add up, reported days drop out', async (t) => {
  const fixture = await openPgFixture();
  t.teardown(() => fixture.close());
  const db = fixture.database.db;
  await migrateToLatest(db);
  await saveMtaStsPolicy(db, policyRow);
  await saveMtaStsPolicy(db, { ...policyRow, policy_id: 'p2', mode: 'enforce' });
  t.match(await mtaStsPolicy(db, 'rpt-mail.net'), { policy_id: 'p2', mode: 'enforce' }, 'a new policy replaces the old');
  await addTlsRptCounts(db, [row({ sessions: 2 }), row({ result: 'certificate-expired' })]);
  await addTlsRptCounts(db, [row({ sessions: 3 })]);
  t.same((await tlsRptCountsOf(db, 'rpt-mail.net', '2026-03-01')).map((r) => [r.result, r.sessions]), [['certificate-expired', 1], ['success', 5]]);
  t.same(await unreportedTlsRptDays(db, '2026-03-02'), [{ policy_domain: 'rpt-mail.net', day: '2026-03-01' }]);
  await markTlsRptReported(db, { policy_domain: 'rpt-mail.net', day: '2026-03-01', outcome: 'sent', detail: null, at: '2026-03-02T01:00:00Z' });
  t.same(await unreportedTlsRptDays(db, '2026-03-02'), []);
  t.equal(await pruneTlsRpt(db, '2026-03-02'), 2);
});
