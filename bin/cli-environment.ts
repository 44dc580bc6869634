import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from '../config/load.js';

type Env = Record<string, string | undefined>;

/** The settings svc reads, and the files they came from besides the environment. */
export interface CliEnvironment {
  env: Env;
  /** Files read, in the order their settings apply (the environment applies last). */
  files: string[];
}

/** The tree svc runs from: dist/bin/ is two folders down (an installed tree or a checkout). */
export const programRoot = resolve(import.meta.dirname, '../..');

/**
 * Under systemd every role is handed its settings: the unit's Environment= lines, then the site
 * file (/etc/svc/svc.env), whose values win. An operator's shell has none of them, so `svc admin`
 * looked for ./data/admin.sock and `svc config print` showed the shell's settings. An installed
 * tree carries layout.env (scripts/install.sh writes it from the units): when the shell names
 * neither SVC_CONFIG nor SVC_DATA_DIR, svc reads the same settings in the same order, and the
 * shell's own SVC_ variables still win over both. A checkout has no layout.env: nothing changes.
 */
export function cliEnvironment(env: Env = process.env, root = programRoot): CliEnvironment {
  if (env.SVC_CONFIG !== undefined || env.SVC_DATA_DIR !== undefined) return { env, files: [] };
  const layoutFile = join(root, 'layout.env');
  const layout = readEnvFile(layoutFile);
  if (!layout) return { env, files: [] };
  const { ENVIRONMENT_FILE: siteFile, ...units } = layout;
  const site = siteFile ? readEnvFile(siteFile) : undefined;
  return {
    env: { ...units, ...site, ...env },
    files: [layoutFile, ...(site ? [siteFile!] : [])],
  };
}

/** KEY=value lines (the EnvironmentFile= format); undefined when the file does not exist. */
function readEnvFile(path: string): Record<string, string> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigError(path, `cannot read it (${code ?? String(err)}): run svc as root or as the user svc runs as, or give SVC_DATA_DIR or SVC_CONFIG yourself`);
  }
  return parseEnv(text) as Record<string, string>;
}
