import type { Logger } from '../core/logger.js';
import { traceHub, type AttemptTraceLine, type TraceHub } from '../core/emails/index.js';
import { attemptTracePublisher, subscribeAttemptTraces, type RedisClient } from '../storage/redis/index.js';

// `svc admin trace`'s wiring. The hub lives in every process; only the one serving the admin
// socket has watchers. An outbound queue in that process hands its attempts to the hub; one in a
// process without the api role publishes them on Redis, which the api process follows while at
// least one watcher is connected.

export interface AttemptTraces {
  hub: TraceHub;
  /** Where an outbound queue sends its attempts: this process's hub, or Redis. */
  sink(local: boolean): (line: AttemptTraceLine) => void;
}

export function attemptTraces(redis: RedisClient, logger: Logger): AttemptTraces {
  let subscription: Promise<{ stop(): void }> | undefined;
  const relay = (text: string) => {
    try {
      hub.publish(JSON.parse(text) as AttemptTraceLine);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'attempt trace line from another process could not be read');
    }
  };
  const hub: TraceHub = traceHub((active) => {
    if (active) {
      subscription ??= subscribeAttemptTraces(redis, relay);
      return;
    }
    const stopping = subscription;
    subscription = undefined;
    void stopping?.then((s) => s.stop());
  });
  return {
    hub,
    sink(local) {
      if (local) return (line) => hub.publish(line);
      const publish = attemptTracePublisher(redis);
      return (line) => publish(JSON.stringify(line));
    },
  };
}
