import type { Clock } from '../../core/clock.js';

/** A clock the test moves by hand; starts at the real time so signatures stay within tolerance. */
export interface TestClock extends Clock {
  advance(ms: number): void;
  set(at: Date | string): void;
}

export function testClock(start = new Date()): TestClock {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance(ms) {
      now += ms;
    },
    set(at) {
      now = new Date(at).getTime();
    },
  };
}

/**
 * The real time, moved ahead by hand: for an appliance that must keep running (deliveries, timers)
 * and yet reach a later minute at once, instead of the test waiting for it.
 */
export function runningClock(): TestClock {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance(ms) {
      offset += ms;
    },
    set(at) {
      offset = new Date(at).getTime() - Date.now();
    },
  };
}

/** Runs `fn` with Date.now() reading the test clock: for verifiers that check timestamps against it. */
export function atClockTime<T>(clock: Clock, fn: () => T): T {
  const real = Date.now;
  Date.now = () => clock.now().getTime();
  try {
    return fn();
  } finally {
    Date.now = real;
  }
}
