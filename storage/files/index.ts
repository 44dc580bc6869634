// storage/files: Files under the data folder: the spool of raw messages, backups, the secret box, disk-full
// detection, owner-only file creation, and the locks that keep two copies of a role off one folder.
// Other rooms import this kind from here alone.
export * from './backup.js';
export * from './disk-full.js';
export * from './folder-lock.js';
export * from './import-files.js';
export * from './private-files.js';
export * from './secret-box.js';
export * from './spool-sweep.js';
export * from './spool.js';
