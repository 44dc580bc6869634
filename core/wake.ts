// A wake-up that crosses from where work is created (an API request queued a webhook replay) to
// the loop that does it (jobs/), without core holding a timer: the loop listens, anyone wakes.
// In a process without the loop (an API-only role), a wake does nothing.

export interface WakeSignal {
  wake(): void;
  /** The loop's own wake; answers the function that stops listening. */
  listen(onWake: () => void): () => void;
}

export function wakeSignal(): WakeSignal {
  let listener: (() => void) | undefined;
  return {
    wake: () => listener?.(),
    listen(onWake) {
      listener = onWake;
      return () => { if (listener === onWake) listener = undefined; };
    },
  };
}
