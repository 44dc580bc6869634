import { createServer, type Socket } from 'node:net';
import type { Logger } from '../../core/logger.js';

export interface ShutdownResponder {
  close(): Promise<void>;
}

/**
 * While the SMTP listener drains on stop, new clients on its port hear `421` (RFC 5321 §3.8)
 * instead of a refused connection, so a sending MTA logs why and retries later. Best effort:
 * if the port cannot be taken again, clients are simply refused, which is also a retry for them.
 */
export async function startShutdownResponder(host: string, port: number, hostname: string, logger: Logger): Promise<ShutdownResponder> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.end(`421 4.3.2 ${hostname} shutting down, try again later\r\n`);
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (err) => { logger.warn({ port, err: err.message }, 'shutdown responder not listening: new SMTP clients are refused'); resolve(false); });
    server.listen(port, host, () => resolve(true));
  });
  return {
    close: () => new Promise<void>((resolve) => {
      if (!listening) return resolve();
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
