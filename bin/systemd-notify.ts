import { spawn } from 'node:child_process';
import type { Logger } from '../core/logger.js';

// Type=notify under systemd: READY=1 once every role of the process listens, then WATCHDOG=1 at
// half of WATCHDOG_USEC while the event loop turns, and STOPPING=1 when a stop begins.
//
// Node cannot write to a unix datagram socket, and a package that can is a native addon the
// carried runtime would have to build. So each message is sent by systemd's own `systemd-notify`,
// and the units say NotifyAccess=all (the sender is this process's child, not the main process).
// systemd-notify (252) waits, without --no-block, until the service manager has processed the
// message (a BARRIER=1 round trip), so it is still alive when PID 1 looks up its unit: the race
// where a message from an exited helper cannot be attributed (man systemd-notify) does not occur.
// Without NOTIFY_SOCKET (svc run by hand, make run, tests) nothing is sent.

export interface SystemdNotifier {
  /** Whether systemd asked for notifications (NOTIFY_SOCKET is set). */
  enabled: boolean;
  /** READY=1 with a status line; resolves once systemd-notify has exited. */
  ready(status: string): Promise<void>;
  /** WATCHDOG=1 every WATCHDOG_USEC / 2, when systemd set a watchdog for this process. */
  startWatchdog(): void;
  stopping(): Promise<void>;
  /** Clears the watchdog timer. */
  close(): void;
}

export interface NotifierOptions {
  env: NodeJS.ProcessEnv;
  pid: number;
  logger: Logger;
  /** The program that sends; systemd-notify from PATH unless a test names another. */
  command?: string;
}

export function systemdNotifier(options: NotifierOptions): SystemdNotifier {
  const { env, logger } = options;
  const enabled = !!env.NOTIFY_SOCKET;
  let timer: NodeJS.Timeout | undefined;
  let failed = false;
  const send = (args: string[]) => new Promise<void>((resolve) => {
    if (!enabled) return resolve();
    const child = spawn(options.command ?? 'systemd-notify', args, { stdio: 'ignore', env });
    const report = (problem: string) => {
      // Once: a watchdog ping that cannot be sent would otherwise log every few seconds.
      if (!failed) logger.error({ args, problem }, 'systemd-notify failed: systemd may not see svc ready or alive');
      failed = true;
    };
    child.once('error', (err) => { report(err.message); resolve(); });
    child.once('exit', (code) => { if (code !== 0) report(`exit code ${code}`); resolve(); });
  });
  return {
    enabled,
    async ready(status) {
      await send(['--ready', `--status=${status}`]);
      if (enabled) logger.info({ pid: options.pid }, 'told systemd: ready');
    },
    startWatchdog() {
      const usec = Number(env.WATCHDOG_USEC);
      // WATCHDOG_PID names the process the watchdog is for (systemd sets it to the main PID).
      const forUs = !env.WATCHDOG_PID || Number(env.WATCHDOG_PID) === options.pid;
      if (!enabled || !forUs || !Number.isFinite(usec) || usec <= 0 || timer) return;
      const everyMs = Math.max(Math.floor(usec / 2000), 100);
      let pinging = false;
      // A ping still in flight (systemd busy) is not doubled: the next tick tries again.
      timer = setInterval(() => {
        if (pinging) return;
        pinging = true;
        void send(['WATCHDOG=1']).then(() => { pinging = false; });
      }, everyMs);
      timer.unref();
      logger.info({ everyMs }, 'systemd watchdog pings started');
    },
    stopping: () => send(['STOPPING=1']),
    close() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
