import { pino } from 'pino';
import { loadConfig, describeConfig, ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { runAdmin } from './admin-commands.js';
import { adminSocketPath } from '../config/paths.js';

// The roles and their libraries load only for `svc start`: admin and config commands stay quick.
import { roles, type Role } from './role-names.js';
import { readVersion } from './version.js';

const usage = `usage:
  svc start [--role all|api|inbound|outbound|jobs] [--regions all|REGION[,REGION…]]
                                                       run the appliance (every role by default);
                                                       --regions: the sending regions this process serves
  svc config print                                     the effective configuration, with each key's doc
  svc admin …                                          operator commands over the admin socket (svc admin help)
  svc version`;

/** The one executable: reads config, then starts roles or talks to a running svc. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(withRegions(loadConfig(), rest), parseRoles(rest));
    case 'config':
      if (rest[0] !== 'print') break;
      process.stdout.write(describeConfig(loadConfig()));
      return 0;
    case 'admin':
      return runAdmin(adminSocketPath(loadConfig()), rest, (line) => console.log(line));
    case 'version':
      console.log(readVersion());
      return 0;
  }
  console.error(usage);
  return 2;
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  const inline = args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  return inline ?? (at >= 0 ? args[at + 1] : undefined);
}

/**
 * `--regions` (what svc-outbound@<region>.service passes as its instance) wins over the
 * `outbound_regions` key; `all` is every region. Names are checked when the outbound role starts.
 */
function withRegions(config: Config, args: string[]): Config {
  const value = option(args, '--regions');
  if (value === undefined) return config;
  if (value === '') throw new ConfigError('--regions', 'needs a value: all, or region names separated by commas');
  return Object.freeze({ ...config, outbound_regions: value === 'all' ? [] : value.split(',').map((r) => r.trim()) });
}

function parseRoles(args: string[]): Role[] {
  const value = option(args, '--role') ?? 'all';
  if (value === 'all') return [...roles];
  const asked = value.split(',');
  for (const role of asked) {
    if (!(roles as readonly string[]).includes(role)) throw new ConfigError('--role', `unknown role "${role}"; one of all, ${roles.join(', ')}`);
  }
  return asked as Role[];
}

async function start(config: Config, asked: Role[]): Promise<number> {
  const logger = pino({ level: config.log_level, base: { pid: process.pid } });
  // Listened for before anything starts: a stop asked for while the roles start (the API may
  // already answer) is carried out as soon as they have, never the default kill.
  const stopAsked = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  const { startAppliance } = await import('./appliance.js');
  const appliance = await startAppliance({ config, roles: asked, logger, version: readVersion() });
  await stopAsked;
  logger.info({}, 'stopping');
  // systemd allows 30 s; leave some of it as a margin.
  const forced = setTimeout(() => { logger.error({}, 'stop took too long, exiting'); process.exit(1); }, 25_000);
  await appliance.stop();
  clearTimeout(forced);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : `svc: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
