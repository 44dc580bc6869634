// A domain's TLS-RPT record (RFC 8460 section 3): one TXT record at `_smtp._tls.<domain>` that
// starts `v=TLSRPTv1`, whose `rua` lists where reports go, comma-separated: `mailto:` addresses
// and `https:` URLs. Anything else (several records, no rua, other schemes) means no report.

export type ReportDestination = { kind: 'mailto'; address: string } | { kind: 'https'; url: string };

export function parseTlsRptRecord(records: readonly string[]): ReportDestination[] {
  const ours = records.filter((r) => /^v=TLSRPTv1\s*(;|$)/.test(r.trim()));
  if (ours.length !== 1) return [];
  const fields = ours[0]!.split(';').map((f) => f.trim()).filter(Boolean);
  const rua = fields.map((f) => /^rua\s*=\s*(.+)$/i.exec(f)?.[1]).find(Boolean);
  if (!rua) return [];
  const out: ReportDestination[] = [];
  for (const raw of rua.split(',').map((u) => u.trim()).filter(Boolean)) {
    const mailto = /^mailto:([^@\s?]+@[^@\s?]+)$/i.exec(raw);
    if (mailto) { out.push({ kind: 'mailto', address: decodeURIComponent(mailto[1]!) }); continue; }
    if (/^https:\/\//i.test(raw)) {
      try { out.push({ kind: 'https', url: new URL(raw).href }); } catch { /* not a URL: skipped */ }
    }
  }
  return out;
}
