// storage/files: Files under the data folder: the spool of raw messages, backups, the secret box, disk-full
// detection, and owner-only file creation.
// Other rooms import this kind from here alone.
export * from './backup.js';
export * from './disk-full.js';
export * from './private-files.js';
export * from './secret-box.js';
export * from './spool-sweep.js';
export * from './spool.js';
