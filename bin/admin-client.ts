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

export interface StreamEnd {
  status: number;
  /** The error body, when the answer was not a stream (status >= 400). */
  body?: unknown;
  /** The stream ended because `signal` aborted it (Ctrl-C, --timeout), not because svc closed it. */
  aborted: boolean;
}

/**
 * A streamed answer over the admin socket (`svc admin trace`): `onLine` gets each JSON line as it
 * arrives, until svc ends the stream or `signal` aborts it.
 */
export function adminStream(socketPath: string, path: string, onLine: (line: unknown) => void, signal: AbortSignal): Promise<StreamEnd> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let pending = '';
    const req = request({ socketPath, method: 'GET', path, signal, headers: { 'user-agent': 'svc-admin' } }, (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        if (status >= 400) return;
        let eol: number;
        while ((eol = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, eol);
          pending = pending.slice(eol + 1);
          if (line.trim()) onLine(JSON.parse(line));
        }
      });
      res.on('end', () => resolve({ status, aborted: false, ...(status >= 400 ? { body: parsed(pending) } : {}) }));
      res.on('error', () => resolve({ status, aborted: signal.aborted }));
      res.on('close', () => resolve({ status, aborted: signal.aborted }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (signal.aborted) resolve({ status, aborted: true });
      else reject(err.code === 'ENOENT' || err.code === 'ECONNREFUSED' ? new Error(`no svc is listening on ${socketPath} (is the api role running: \`svc start\`, or svc-api.service?)`) : err);
    });
    req.end();
  });
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
