import { loadConfig, describeConfig, ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { regionNames } from '../config/regions.js';
import { adminSocketPath } from '../config/paths.js';
import { cliEnvironment } from './cli-environment.js';
import { groupHelp, helpText, parseCommand, UsageError, type CommandSpec } from './cli-args.js';

// The roles and their libraries load only for `svc start`: admin and config commands stay quick.
import { roles, type Role } from './role-names.js';
import { readVersion } from './version.js';
import { systemdNotifier } from './systemd-notify.js';

const listProblem = (value: string, known: readonly string[], what: string) => {
  const unknown = value.split(',').map((v) => v.trim()).find((v) => !known.includes(v));
  return unknown === undefined ? undefined : `unknown ${what} "${unknown}"; one of all, ${known.join(', ')}`;
};

/** The configuration, from the installed layout's files too when svc runs by hand (bin/cli-environment.ts). */
const readConfig = (): Config => loadConfig(cliEnvironment().env);

const startSpec: CommandSpec = {
  name: 'svc start', summary: 'Runs the appliance: every role in this one process unless --role says otherwise.',
  options: {
    role: {
      type: 'string', arg: 'all|ROLE[,ROLE…]', doc: `the roles to run (${roles.join(', ')}; default all): one systemd unit runs each`,
      check: (v) => (v === 'all' ? undefined : listProblem(v, roles, 'role')),
    },
    regions: {
      type: 'string', arg: 'all|REGION[,REGION…]', doc: 'the sending regions this process serves (outbound role; default outbound_regions)',
      check: (v) => (v === 'all' ? undefined : listProblem(v, regionNames, 'region')),
    },
  },
  notes: 'One process per role and data folder: a second one is refused (the data folder is locked).',
};
const configPrintSpec: CommandSpec = { name: 'svc config print', summary: 'Prints the effective configuration, with each key\'s doc.' };
const versionSpec: CommandSpec = { name: 'svc version', summary: 'Prints svc\'s version.' };
const adminSpec: CommandSpec = { name: 'svc admin', args: 'COMMAND …', summary: 'Operator commands over the admin socket (svc admin --help lists them).' };
const dbSpec: CommandSpec = { name: 'svc db rebuild', summary: 'Rewrites the SQLite database with svc\'s current page size, while svc is stopped.' };
const commands = ['start', 'config', 'admin', 'db', 'version'];

const topHelp = () => groupHelp('usage: svc COMMAND … (each command takes --help)', [startSpec, configPrintSpec, adminSpec, dbSpec, versionSpec],
  'Settings: SVC_CONFIG (a JSON file) and SVC_<KEY> variables; the SVC_ prefix is svc\'s own (docs/configuration.md).');

/** The one executable: reads its command line and config, then starts roles or talks to a running svc. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const out = (text: string) => process.stdout.write(text);
  if (command === undefined) throw new UsageError(`svc: a command is needed; one of ${commands.join(', ')} (see svc --help)`);
  if (command === 'help' || command === '--help' || command === '-h') return print(topHelp());
  switch (command) {
    case 'start': {
      const parsed = parseCommand(startSpec, rest);
      if (parsed.help) return print(helpText(startSpec));
      const config = withRegions(readConfig(), parsed.values.regions as string | undefined);
      return start(config, parseRoles(parsed.values.role as string | undefined));
    }
    case 'config':
      return configCommand(rest, out);
    case 'admin': {
      // Loaded here: the admin commands' modules are not needed to print a version or the config.
      const { runAdmin } = await import('./admin-commands.js');
      return runAdmin(() => adminSocketPath(readConfig()), rest, (line) => console.log(line));
    }
    case 'db': {
      // Loaded here, as the admin commands are: only this command opens the file itself.
      const { runDb } = await import('./db-commands.js');
      return runDb(readConfig, rest, (line) => console.log(line));
    }
    case 'version':
      if (parseCommand(versionSpec, rest).help) return print(helpText(versionSpec));
      console.log(readVersion());
      return 0;
  }
  throw new UsageError(command.startsWith('-')
    ? `svc: unknown option ${command} (see svc --help)`
    : `svc: unknown command "${command}"; one of ${commands.join(', ')} (see svc --help)`);
}

function print(text: string): number {
  process.stdout.write(text);
  return 0;
}

function configCommand(args: string[], out: (text: string) => void): number {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    if (sub === undefined) throw new UsageError('svc config: a subcommand is needed; one of print (see svc config --help)');
    return print(groupHelp('usage: svc config print', [configPrintSpec]));
  }
  if (sub !== 'print') throw new UsageError(`svc config: unknown subcommand "${sub}"; one of print (see svc config --help)`);
  if (parseCommand(configPrintSpec, rest).help) return print(helpText(configPrintSpec));
  const { env, files } = cliEnvironment();
  const config = loadConfig(env);
  if (files.length > 0) out(`# read from ${files.join(', then ')}, then the environment (as the systemd units give them)\n`);
  out(describeConfig(config));
  return 0;
}

/**
 * `--regions` (what svc-outbound@<region>.service passes as its instance) wins over the
 * `outbound_regions` key; `all` is every region.
 */
function withRegions(config: Config, value: string | undefined): Config {
  if (value === undefined) return config;
  return Object.freeze({ ...config, outbound_regions: value === 'all' ? [] : value.split(',').map((r) => r.trim()) });
}

function parseRoles(value: string | undefined): Role[] {
  if (value === undefined || value === 'all') return [...roles];
  return [...new Set(value.split(',').map((r) => r.trim()))] as Role[];
}

async function start(config: Config, asked: Role[]): Promise<number> {
  const { pino } = await import('pino');
  const logger = pino({ level: config.log_level, base: { pid: process.pid } });
  // Listened for before anything starts: a stop asked for while the roles start (the API may
  // already answer) is carried out as soon as they have, never the default kill.
  const stopAsked = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  const { startAppliance } = await import('./appliance.js');
  const appliance = await startAppliance({ config, roles: asked, logger, version: readVersion() });
  // Under systemd (Type=notify): ready only now that every role listens; then the watchdog pings.
  const notifier = systemdNotifier({ env: process.env, pid: process.pid, logger });
  await notifier.ready(`serving ${asked.join(', ')}`);
  notifier.startWatchdog();
  // systemctl reload: a renewed TLS certificate is taken without dropping a session.
  process.on('SIGHUP', () => { appliance.reload().catch((err: Error) => logger.error({ err: err.message }, 'reload failed')); });
  await stopAsked;
  logger.info({}, 'stopping');
  notifier.close();
  await notifier.stopping();
  // systemd allows 30 s; leave some of it as a margin.
  const forced = setTimeout(() => { logger.error({}, 'stop took too long, exiting'); process.exit(1); }, 25_000);
  await appliance.stop();
  clearTimeout(forced);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    console.error(err instanceof ConfigError || err instanceof UsageError ? err.message : `svc: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
