import { request } from 'node:http';

export interface AdminAnswer {
  status: number;
  body: unknown;
}

/** One HTTP call over the admin socket. */
export function adminCall(socketPath: string, method: string, path: string, body?: unknown): Promise<AdminAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request({
      socketPath, method, path,
      headers: { 'user-agent': 'svc-admin', ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: text });
        }
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') {
        reject(new Error(`no svc is listening on ${socketPath} (is the api role running: \`svc start\`, or svc-api.service?)`));
      } else if (err.code === 'EACCES') {
        reject(new Error(`${socketPath}: permission denied; run svc admin as the user svc runs as (svc under systemd), or as root`));
      } else {
        reject(err);
      }
    });
    req.end(payload);
  });
}
