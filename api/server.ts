import { chmodSync, existsSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface Listening {
  server: Server;
  /** host:port, or the socket path. */
  address: string;
  port?: number;
  close(): Promise<void>;
}

export async function listenTcp(app: Express | RequestListener, host: string, port: number): Promise<Listening> {
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const info = server.address() as AddressInfo;
  return { server, address: `${info.address}:${info.port}`, port: info.port, close: () => closeServer(server) };
}

/** The admin socket: owner-only, replaced if a stale one is left from a crash. */
export async function listenSocket(app: Express, path: string): Promise<Listening> {
  if (existsSync(path)) rmSync(path);
  const server = createServer(app);
  const previousMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  } finally {
    process.umask(previousMask);
  }
  chmodSync(path, 0o600);
  return { server, address: path, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 5_000).unref();
  });
}
