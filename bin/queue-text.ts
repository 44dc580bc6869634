// The queue tools' plain text: aligned columns an operator reads at a glance (svc admin queue …,
// svc admin trace). The JSON they are made from is what --json prints.

type Json = Record<string, unknown>;

/** Rows under a header, each column as wide as its widest cell, two spaces apart. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

/** 45s, 12m, 3h05m, 2d04h. */
export function spanText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

/** How long ago `at` was. */
export const ageText = (at: string | null, now: number) => (at ? spanText(now - Date.parse(at)) : '-');

/** When the next attempt comes: `now` when due, `in 4m`; held and in-flight rows have none. */
export function untilText(at: string | null, now: number, state?: string): string {
  if (!at || state === 'held' || state === 'submitting' || state === 'ambiguous') return '-';
  const ms = Date.parse(at) - now;
  return ms <= 0 ? 'now' : `in ${spanText(ms)}`;
}

const states = ['queued', 'deferred', 'held', 'submitting', 'ambiguous', 'scheduled'] as const;

function groupRow(first: string[], group: Json, now: number): string[] {
  const counts = group.counts as Record<string, number>;
  return [...first, String(counts.total), ...states.map((s) => String(counts[s] ?? 0)), ageText(group.oldest_at as string | null, now),
    untilText(group.next_attempt_at as string | null, now)];
}

export function summaryLines(summary: Json): string[] {
  const now = Date.parse(summary.generated_at as string);
  const totals = summary.totals as Record<string, number>;
  if (!totals.total) return ['the outbound queue is empty'];
  const countHeader = ['TOTAL', ...states.map((s) => s.toUpperCase()), 'OLDEST', 'NEXT'];
  const destinations = summary.destinations as Json[];
  const lines = [
    `${totals.total} recipients in the outbound queue: ${states.map((s) => `${totals[s]} ${s}`).join(', ')}`, '',
    ...table(['REGION', ...countHeader], (summary.regions as Json[]).map((g) => groupRow([String(g.region)], g, now))), '',
    ...table(['DESTINATION', 'REGION', ...countHeader], destinations.map((g) => groupRow([String(g.domain), String(g.region)], g, now))),
  ];
  const hidden = (summary.destinations_total as number) - destinations.length;
  if (hidden > 0) lines.push(`… and ${hidden} more destinations (--limit, or --json for all shown)`);
  return lines;
}

export function showLines(email: Json): string[] {
  const lines = [
    `email ${email.id}  team ${email.team_id}  region ${email.region}  status ${email.status}  last event ${email.last_event}`,
    `accepted ${email.accepted_at}${email.scheduled_at ? `  scheduled for ${email.scheduled_at}` : ''}`,
    `envelope from ${(email.envelope as Json).from} (each recipient from its own signed return path)`, '', 'headers:',
    ...(email.headers as { name: string; value: string }[]).map((h) => `  ${h.name}: ${h.value}`),
    ...(email.attachments ? [`  (${email.attachments} attachments)`] : []),
  ];
  for (const r of email.recipients as Json[]) {
    const next = r.next_attempt_at && (r.state === 'queued' || r.state === 'deferred') ? `  next attempt ${r.next_attempt_at}` : '';
    lines.push('', `recipient ${r.address} (${r.kind})  ${r.state}  ${r.attempts} attempts${next}${r.expires_at ? `  expires ${r.expires_at}` : ''}`);
    const history = r.history as Json[];
    if (history.length === 0) lines.push(r.last_response ? `  last reply: ${r.last_response}` : '  not tried yet');
    for (const a of history) lines.push(`  #${a.attempt}  ${a.at}  ${a.outcome}  ${a.relay ?? '-'}  ${a.reply}`);
    if (r.state === 'failed' && r.last_response) lines.push(`  failed: ${r.last_response}`);
  }
  const body = email.body as { html: string | null; text: string | null; attachments: Json[] } | undefined;
  if (body) {
    lines.push('', '--- text ---', body.text ?? '(none)', '--- html ---', body.html ?? '(none)');
    for (const a of body.attachments) lines.push(`attachment ${a.filename ?? '(no name)'}  ${a.content_type}  ${a.size} bytes`);
  }
  return lines;
}

/** One traced attempt: time, outcome, recipient, attempt number, relay, TLS, duration, reply, email. */
export function attemptLine(a: Json): string {
  return [a.at, a.status, a.rcpt, `#${a.attempt}`, a.relay, `tls ${a.tls}`, `${a.attempt_s}s`, a.reply, `email ${a.email_id}`].join('  ');
}
