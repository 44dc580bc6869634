import { readFileSync } from 'node:fs';
import t from 'tap';
import { schema, envName } from '../config/schema.js';

// Tests run from dist/test; the docs live at the repository root.
const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

t.test('docs/configuration.md lists every config key with its environment name', async (t) => {
  const page = read('docs/configuration.md');
  for (const key of Object.keys(schema)) {
    t.match(page, `\`${key}\` (\`${envName(key)}\`)`, `${key} is documented`);
  }
});

t.test('README names the two commands and .ci/run calls the test one', async (t) => {
  const readme = read('README.md');
  t.match(readme, /make run/);
  t.match(readme, /make test/);
  t.match(read('.ci/run'), /^make test$/m);
});
