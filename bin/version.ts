import { readFileSync } from 'node:fs';

/** svc's version, from the package.json beside the build. */
export function readVersion(): string {
  for (const rel of ['../../package.json', '../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next layout (compiled under dist/ or run from source)
    }
  }
  return '0.0.0';
}
