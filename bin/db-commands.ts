import { join } from 'node:path';
import { regionNames } from '../config/regions.js';
import type { Config } from '../config/schema.js';
import { FolderInUseError, lockDataFolder } from '../storage/files/index.js';
import { rebuildSqliteFile, RebuildRefusedError, SQLITE_PAGE_BYTES } from '../storage/sql/index.js';
import { helpText, parseCommand, UsageError, type CommandSpec } from './cli-args.js';
import { outboundPlaces, roles } from './role-names.js';
import { readVersion } from './version.js';

// `svc db …`: work on the database file itself, with svc stopped (the admin commands talk to a
// running svc instead).

export const rebuildSpec: CommandSpec = {
  name: 'svc db rebuild',
  summary: `Rewrites the SQLite database with ${SQLITE_PAGE_BYTES / 1024} KiB pages, while svc is stopped; a file that has them is left alone.`,
  notes: 'A database made before svc used larger pages keeps its page size until rebuilt (docs/operations.md, Upgrades). '
    + 'It needs about the file\'s size free beside it; the original stays whole until the checked copy replaces it.',
};

/** `svc db rebuild`; exit 0 when the file has svc's page size at the end. */
export function runDb(readConfig: () => Config, args: string[], out: (line: string) => void): number {
  const [sub, ...rest] = args;
  if (sub === undefined) throw new UsageError('svc db: a subcommand is needed; one of rebuild (see svc db --help)');
  if (sub === '--help' || sub === '-h') {
    out(helpText(rebuildSpec).trimEnd());
    return 0;
  }
  if (sub !== 'rebuild') throw new UsageError(`svc db: unknown subcommand "${sub}"; one of rebuild (see svc db --help)`);
  if (parseCommand(rebuildSpec, rest).help) {
    out(helpText(rebuildSpec).trimEnd());
    return 0;
  }
  const config = readConfig();
  if (config.database_url) {
    out('svc db rebuild: the database is PostgreSQL (database_url): nothing to rebuild');
    return 0;
  }
  return rebuild(config, out);
}

function rebuild(config: Config, out: (line: string) => void): number {
  const path = join(config.data_dir, 'svc.sqlite');
  const lock = lockEveryRole(config);
  if (typeof lock === 'string') {
    out(`svc db rebuild: ${lock}`);
    return 1;
  }
  try {
    const report = rebuildSqliteFile(path, (from) => out(`svc db rebuild: rewriting ${path} (${from}-byte pages) …`));
    if (report.fromPageBytes === report.pageBytes) {
      out(`svc db rebuild: ${path} has ${report.pageBytes}-byte pages already: nothing to do`);
      return 0;
    }
    out(`svc db rebuild: ${path}: ${report.fromPageBytes} → ${report.pageBytes}-byte pages, ${mib(report.bytesBefore)} → ${mib(report.bytesAfter)} MiB, `
      + `${report.tables} tables and ${report.rows} rows checked, ${(report.ms / 1000).toFixed(1)} s`);
    return 0;
  } catch (err) {
    if (!(err instanceof RebuildRefusedError)) throw err;
    out(`svc db rebuild: ${err.message}`);
    return 1;
  } finally {
    lock.release();
  }
}

/** Every lock a svc process could hold on the folder, so none starts on it meanwhile; a message when one runs. */
function lockEveryRole(config: Config): { release(): void } | string {
  const names = [
    ...roles.filter((role) => role !== 'outbound'),
    ...regionNames.flatMap((region) => outboundPlaces(region, config.outbound_processes)),
    'redis',
  ];
  try {
    return lockDataFolder(config.data_dir, names, { roles: ['db rebuild'], regions: [], version: readVersion() });
  } catch (err) {
    if (!(err instanceof FolderInUseError)) throw err;
    const { holder } = err;
    return `svc pid ${holder.pid} (roles ${holder.roles.join(', ')}, since ${holder.started_at}) runs on ${err.dataDir}: stop every svc unit first`;
  }
}

const mib = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);
