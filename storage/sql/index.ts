// storage/sql: The database engine: opening SQLite or PostgreSQL, migrations, the table types, write transactions
// and group commit, list pages, and SQLite's raw fast path.
// Other rooms import this kind from here alone.
export * from './checkpointer.js';
export * from './chunked.js';
export * from './compiled.js';
export * from './db.js';
export * from './dialect.js';
export * from './group-commit.js';
export * from './lease-claim.js';
export * from './paginate.js';
export * from './postgres.js';
export * from './raw-sqlite.js';
export * from './rebuild.js';
export * from './sqlite-compiler.js';
export * from './tables.js';
export * from './team-scope.js';
export * from './transaction.js';
export * from './transaction-memo.js';
export * from './tx-statements.js';
export * from './wal-sync.js';
export * from './write-transaction.js';
