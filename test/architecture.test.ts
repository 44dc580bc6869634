import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { checkImports, formatViolation, importsOf, roomOf, sourceFiles } from './helpers/imports.js';

// The project's own sources (this file runs from dist/test/).
const root = resolve(import.meta.dirname, '../..');

t.test('the sources follow the dependency rules of ARCHITECTURE.md', async (t) => {
  const files = sourceFiles(root);
  t.ok(files.length >= 30, `the checker reads the sources (${files.length} files)`);
  for (const room of ['config/', 'storage/', 'core/', 'api/', 'jobs/', 'bin/']) {
    t.ok(files.some((f) => f.startsWith(join(root, room))), `files of ${room} are read`);
  }
  t.ok(files.every((f) => !f.includes(`${join(root, 'test')}/`) && !f.includes('/dist/')), 'tests and build output are not checked');
  const crossRoom = files.flatMap((f) => importsOf(f, readFileSync(f, 'utf8')).filter((r) => r.specifier.startsWith('../')));
  t.ok(crossRoom.length >= 20, `imports between folders are read (${crossRoom.length})`);
  const violations = checkImports(root);
  t.same(violations.map(formatViolation), [], 'no import breaks a rule');
});

t.test('importsOf finds every kind of module reference', async (t) => {
  const text = [
    "import a from './a.js';",
    "import type { B } from './b.js';",
    "import { type C } from './c.js';",
    "import { type D, e } from './d.js';",
    "export { f } from './f.js';",
    "export type { G } from './g.js';",
    "export * from './h.js';",
    "import './side-effect.js';",
    "const m = await import('./dynamic.js');",
    "type T = import('./type-import.js').T;",
    "import x = require('./required.js');",
    "// import fake from './in-a-comment.js';",
    "const s = \"import nope from './in-a-string.js'\";",
  ].join('\n');
  const refs = importsOf('x.ts', text);
  t.same(refs.map((r) => [r.specifier, r.typeOnly]), [
    ['./a.js', false], ['./b.js', true], ['./c.js', true], ['./d.js', false], ['./f.js', false], ['./g.js', true],
    ['./h.js', false], ['./side-effect.js', false], ['./dynamic.js', false], ['./type-import.js', true], ['./required.js', false],
  ]);
  t.same(refs.map((r) => r.line), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
});

t.test('roomOf: the top folder, or the MTA part', async (t) => {
  t.equal(roomOf('core/emails/send.ts'), 'core');
  t.equal(roomOf('mta/inbound/rcpt.ts'), 'mta/inbound');
  t.equal(roomOf('mta/submission/auth.ts'), 'mta/submission');
  t.equal(roomOf('mta/index.ts'), 'mta');
  t.equal(roomOf('bin/svc.ts'), 'bin');
  t.equal(roomOf('top.ts'), '');
});

t.test('the checker catches forbidden imports in a tree built to break the rules', async (t) => {
  const tree = mkdtempSync(join(tmpdir(), 'svc-arch-'));
  t.teardown(() => rmSync(tree, { recursive: true, force: true }));
  const files: Record<string, string> = {
    // allowed
    'config/schema.ts': "import { readFileSync } from 'node:fs';\nexport const x = 1;",
    'storage/sql/db.ts': "import { Kysely } from 'kysely';\nimport Sqlite from 'better-sqlite3';\nimport type { Config } from '../config/schema.js';",
    'core/ok.ts': "import type { Db } from '../storage/sql/index.js';\nimport { x } from '../config/schema.js';\nimport { y } from './sibling.js';\nimport { v7 } from 'uuid';",
    'api/app.ts': "import express from 'express';\nimport { Route } from '@tsoa/runtime';\nimport { ok } from '../core/ok.js';",
    'mta/inbound/data.ts': "import { SMTPServer } from 'smtp-server';\nimport { parseDsn } from '../bounces/dsn.js';\nimport { ok } from '../../core/ok.js';",
    'jobs/prune.ts': "import { ok } from '../core/ok.js';\nimport { db } from '../storage/sql/index.js';",
    'jobs/peek.ts': "import { spool } from '../storage/files/spool.js';",
    'bin/svc.ts': "import { app } from '../api/app.js';\nimport { data } from '../mta/inbound/data.js';\nimport { prune } from '../jobs/prune.js';",
    // forbidden
    'core/x.ts': "import { y } from '../api/y.js';",
    'storage/z.ts': "import express from 'express';",
    'config/load.ts': "import type { Db } from '../storage/sql/index.js';",
    'dns/resolve.ts': "export { ok } from '../core/ok.js';",
    'core/sql.ts': "import type { Kysely } from 'kysely';",
    'core/lazy.ts': "const jobs = await import('../jobs/prune.js');",
    'api/send.ts': "import { data } from '../mta/inbound/data.js';",
    'jobs/cli.ts': "import { main } from '../bin/svc.js';",
    'mta/outbound/deliver.ts': "import { app } from '../../api/app.js';\nimport Database from 'better-sqlite3/lib/database.js';",
    'scanner/clamd.ts': "import { Router } from 'express';\nimport { z } from '../test/helper.js';",
    'core/mail.ts': "import { SMTPServer } from 'smtp-server';",
    'core/port.ts': "import type { Sender } from '../net/sender.js';",
    'core/emails/index.ts': "export * from './delivery.js';",
    'core/emails/delivery.ts': "import { ok } from '../ok.js';\nimport { view } from '../receiving/index.js';",
    'core/receiving/index.ts': "export * from './feedback.js';",
    'core/receiving/feedback.ts': "import { recorder } from '../emails/index.js';\nimport { record } from '../emails/delivery.js';",
    'core/shiny/new.ts': "import { ok } from '../ok.js';",
    'mta/inbound/rcpt.ts': "import { rules } from '../bounces/rules.js';\nimport { queue } from '../outbound/queue.js';",
    'mta/submission/auth.ts': "import { rules } from '../bounces/rules.js';\nimport { tls } from '../inbound/tls.js';\nimport { ok } from '../../core/ok.js';",
    'core/fetches.ts': "import { webhookSender } from '../net/sender.js';",
    'api/http.ts': "import { request } from 'undici';",
    'net/sender.ts': "import { request } from 'undici';\nimport type { DnsResolver } from '../dns/resolver.js';\nimport { ok } from '../core/ok.js';",
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
  const found = checkImports(tree).map((v) => `${v.file} -> ${v.target}`).sort();
  t.same(found, [
    'api/http.ts -> undici',
    'api/send.ts -> mta/inbound',
    'config/load.ts -> storage',
    'core/emails/delivery.ts -> core/receiving/index.js',
    'core/fetches.ts -> net',
    'core/lazy.ts -> jobs',
    'core/mail.ts -> smtp-server',
    'core/receiving/feedback.ts -> core/emails/delivery.js',
    'core/shiny/new.ts -> core/ok.js',
    'core/sql.ts -> kysely',
    'core/x.ts -> api',
    'dns/resolve.ts -> core',
    'jobs/cli.ts -> bin',
    'jobs/peek.ts -> storage/files/spool.js',
    'mta/inbound/rcpt.ts -> mta/outbound',
    'mta/outbound/deliver.ts -> api',
    'mta/outbound/deliver.ts -> better-sqlite3',
    'mta/submission/auth.ts -> mta/inbound',
    'net/sender.ts -> core',
    'scanner/clamd.ts -> express',
    'scanner/clamd.ts -> test',
    'storage/z.ts -> express',
  ], 'exactly the forbidden imports are reported');
  const core = checkImports(tree).find((v) => v.file === 'core/x.ts');
  t.match(core, { room: 'core', specifier: '../api/y.js', line: 1, reason: /core may not import api/ });
  const storage = checkImports(tree).find((v) => v.file === 'storage/z.ts');
  t.match(storage, { room: 'storage', specifier: 'express', reason: /express may be imported only in api/ });
 const later = checkImports(tree).find((v) => v.file === 'core/emails/delivery.ts');
  t.match(later, { reason: /core\/emails may not import a later tier's area, core\/receiving/ });
  t.match(checkImports(tree).find((v) => v.file === 'core/receiving/feedback.ts'), { reason: /only through its index\.ts/ });
  t.match(checkImports(tree).find((v) => v.file === 'core/shiny/new.ts'), { reason: /core area 'shiny' has no tier/ });
  t.match(formatViolation(core!), /^core\/x\.ts:1 imports '\.\.\/api\/y\.js': core may not import api$/);
});

t.test('every runtime dependency in package.json is imported by the sources', async (t) => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  // The generated routes are sources too (tsoa writes them at build time, importing @tsoa/runtime).
  const files = [...sourceFiles(root), join(root, 'api/generated/routes.ts')];
  const imported = new Set(files.flatMap((f) => importsOf(f, readFileSync(f, 'utf8')).map((r) => r.specifier)
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:'))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!))));
  // Loaded by a name the compiler does not follow (its browser types would leak into the build);
  // each such file must still name the package.
  const loadedByName: Record<string, string> = { jsdom: 'core/team/svg.ts' };
  for (const [name, file] of Object.entries(loadedByName)) {
    t.match(readFileSync(join(root, file), 'utf8'), `'${name}'`, `${file} loads ${name} by name`);
    imported.add(name);
  }
  const names = Object.keys(pkg.dependencies);
  t.ok(names.length >= 10, `package.json lists the dependencies (${names.length})`);
  t.same(names.filter((name) => !imported.has(name)), [], 'no dependency that nothing imports (each is installed on every production box)');
});
