import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// A certificate authority for one test run, made with the `openssl` command (as mta/inbound/tls.ts
// makes its self-signed certificate): svc trusts it through `outbound_tls_ca_file`, and it signs
// the certificates of the fake MX and the MTA-STS policy host for the names a test chooses.

const run = promisify(execFile);

export interface TestCa {
  /** PEM file of the CA certificate (for SVC_OUTBOUND_TLS_CA_FILE). */
  caFile: string;
  caPem: string;
  /** A key and certificate signed by the CA, valid for these DNS names. */
  issue(names: string[]): Promise<{ key: string; cert: string }>;
}

export async function makeTestCa(): Promise<TestCa> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-ca-'));
  const caKey = join(dir, 'ca.key');
  const caFile = join(dir, 'ca.pem');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', caFile, '-days', '2',
    '-subj', '/CN=svc test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  let serial = 0;
  return {
    caFile,
    caPem: readFileSync(caFile, 'utf8'),
    async issue(names) {
      const n = ++serial;
      const key = join(dir, `leaf${n}.key`);
      const csr = join(dir, `leaf${n}.csr`);
      const cert = join(dir, `leaf${n}.pem`);
      const ext = join(dir, `leaf${n}.ext`);
      writeFileSync(ext, `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
      await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${names[0]}`]);
      await run('openssl', ['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext]);
      return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
    },
  };
}
