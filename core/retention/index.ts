// The retention area's public face: other rooms and areas import it from here alone.
// Retention of what ages out: dropped received records, outbox events, orphaned raw files,
// consent records past three years, contact import files a week after their import.
export * from './consent.js';
export * from './dropped.js';
export * from './events.js';
export * from './orphans.js';
export * from './import-files.js';
