// VERP return paths (MAIL FROM): bounces+<email id as 32 hex>-<recipient index>@<return-path host>,
// e.g. bounces+0193a5b0c1d27e3f8a9b0c1d2e3f4a5b-0@send.example.com. One SMTP transaction per
// recipient carries its own return path, so a bounce sent to it names the exact email and
// recipient without reading the bounce's content. The receiving side maps an address back with
// parseVerp; the recipient id is `<email id>.<index>`, the row id of email_recipients.

const verpLocal = /^bounces\+([0-9a-f]{32})-(\d{1,3})$/i;

export function verpAddress(recipientId: string, returnPathHost: string): string {
  const dot = recipientId.lastIndexOf('.');
  const emailId = recipientId.slice(0, dot);
  const index = recipientId.slice(dot + 1);
  return `bounces+${emailId.replace(/-/g, '')}-${index}@${returnPathHost}`;
}

/** The email and recipient a VERP address stands for, or undefined for any other address. */
export function parseVerp(address: string): { emailId: string; recipientId: string } | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const match = verpLocal.exec(address.slice(0, at));
  if (!match) return undefined;
  const hex = match[1]!.toLowerCase();
  const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { emailId, recipientId: `${emailId}.${Number(match[2])}` };
}
