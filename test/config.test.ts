import t, { type Test } from 'tap';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, describeConfig, loadConfig } from '../config/load.js';
import { envName, schema, type KeySpec } from '../config/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
/** Writes a config file and returns its path. */
function configFile(content: unknown): string {
  const path = join(dir, `config-${++fileCount}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** The ConfigError loadConfig throws for this env (fails the test if none is thrown). */
function configError(t: Test, env: Record<string, string>): ConfigError | undefined {
  try {
    loadConfig(env);
  } catch (err) {
    t.type(err, ConfigError, 'throws a ConfigError');
    return err as ConfigError;
  }
  t.fail(`no ConfigError for ${JSON.stringify(env)}`);
  return undefined;
}

const keys = Object.keys(schema) as (keyof typeof schema)[];

t.test('an empty environment gives every default, frozen', async (t) => {
  const config = loadConfig({});
  for (const key of keys) {
    if (key === 'data_dir') continue;
    t.same(config[key], schema[key].default, key);
  }
  t.equal(config.data_dir, resolve('./data'), 'data_dir is made absolute');
  t.equal(config.http_port, 3000);
  t.equal(config.redis_url, '');
  t.same(config.dns_servers, []);
  t.ok(Object.isFrozen(config));
  t.throws(() => { (config as { http_port: number }).http_port = 1; }, TypeError);
  t.same(Object.keys(config).sort(), [...keys].sort(), 'exactly the schema keys');
});

t.test('every schema key has a one-line doc, a default of its type, and valid bounds', async (t) => {
  t.ok(keys.length >= 10);
  for (const key of keys) {
    const spec = schema[key] as KeySpec;
    t.match(key, /^[a-z][a-z0-9_]*$/, `${key} is snake case`);
    t.type(spec.doc, 'string', `${key} has a doc`);
    t.ok(spec.doc.trim().length > 5, `${key} doc is not empty`);
    t.notMatch(spec.doc, /\n/, `${key} doc is one line`);
    t.ok('default' in spec, `${key} has a default`);
    switch (spec.type) {
      case 'string': t.type(spec.default, 'string', key); break;
      case 'int':
        t.ok(Number.isSafeInteger(spec.default), key);
        if (spec.min !== undefined) t.ok(spec.default >= spec.min, `${key} default >= min`);
        if (spec.max !== undefined) t.ok(spec.default <= spec.max, `${key} default <= max`);
        break;
      case 'bool': t.type(spec.default, 'boolean', key); break;
      case 'enum': t.ok(spec.values.includes(spec.default), `${key} default is one of its values`); break;
      case 'list': t.ok(Array.isArray(spec.default), key); break;
    }
  }
});

t.test('environment overrides: int, bool, list, enum, string', async (t) => {
  const config = loadConfig({
    SVC_HTTP_PORT: '8025',
    SVC_HTTP_TRUST_PROXY: 'true',
    SVC_DNS_SERVERS: '127.0.0.1:5353,::1',
    SVC_LOG_LEVEL: 'warn',
    SVC_SQLITE_SYNCHRONOUS: 'NORMAL',
    SVC_ENV: 'staging',
    SVC_DATA_DIR: dir,
  });
  t.equal(config.http_port, 8025);
  t.equal(config.http_trust_proxy, true);
  t.same(config.dns_servers, ['127.0.0.1:5353', '::1']);
  t.ok(Object.isFrozen(config.dns_servers), 'the list is frozen too');
  t.equal(config.log_level, 'warn');
  t.equal(config.sqlite_synchronous, 'NORMAL');
  t.equal(config.env, 'staging');
  t.equal(config.data_dir, dir);
  for (const [raw, want] of [['1', true], ['yes', true], ['off', false], ['FALSE', false], ['0', false]] as const) {
    t.equal(loadConfig({ SVC_HTTP_TRUST_PROXY: raw }).http_trust_proxy, want, `bool "${raw}"`);
  }
  t.same(loadConfig({ SVC_DNS_SERVERS: ' 10.0.0.1 , ,10.0.0.2 ' }).dns_servers, ['10.0.0.1', '10.0.0.2'], 'list items are trimmed, empties dropped');
  t.same(loadConfig({ SVC_DNS_SERVERS: '' }).dns_servers, []);
  t.equal(loadConfig({ SVC_HTTP_PORT: '0' }).http_port, 0, 'the minimum is allowed');
  t.equal(loadConfig({ SVC_HTTP_PORT: '65535' }).http_port, 65535, 'the maximum is allowed');
  t.equal(envName('http_port'), 'SVC_HTTP_PORT');
});

t.test('keys from the file named by SVC_CONFIG', async (t) => {
  const path = configFile({ http_port: 4000, http_trust_proxy: true, dns_servers: ['9.9.9.9'], log_level: 'error', env: 'file-env', data_dir: dir });
  const config = loadConfig({ SVC_CONFIG: path });
  t.equal(config.http_port, 4000);
  t.equal(config.http_trust_proxy, true);
  t.same(config.dns_servers, ['9.9.9.9']);
  t.equal(config.log_level, 'error');
  t.equal(config.env, 'file-env');
  t.equal(config.data_dir, dir);
  t.equal(config.smtp_port, 25, 'keys the file leaves out keep their default');
  const strings = loadConfig({ SVC_CONFIG: configFile({ http_port: '4001', http_trust_proxy: 'on', dns_servers: 'a,b' }) });
  t.equal(strings.http_port, 4001, 'a numeric string works in the file too');
  t.equal(strings.http_trust_proxy, true);
  t.same(strings.dns_servers, ['a', 'b']);
});

t.test('the environment beats the file', async (t) => {
  const path = configFile({ http_port: 4000, log_level: 'error', dns_servers: ['9.9.9.9'], env: 'from-file' });
  const config = loadConfig({ SVC_CONFIG: path, SVC_HTTP_PORT: '5000', SVC_LOG_LEVEL: 'debug', SVC_DNS_SERVERS: '1.1.1.1' });
  t.equal(config.http_port, 5000);
  t.equal(config.log_level, 'debug');
  t.same(config.dns_servers, ['1.1.1.1']);
  t.equal(config.env, 'from-file', 'a key only the file sets keeps the file value');
});

t.test('an unknown key in the file is a ConfigError naming it', async (t) => {
  const path = configFile({ http_port: 4000, htpt_port: 4001 });
  const err = configError(t, { SVC_CONFIG: path });
  t.equal(err?.key, 'htpt_port');
  t.match(err?.message, /htpt_port/);
  t.match(err?.message, /unknown/);
  // Names every object has (toString, constructor, __proto__) are not settings either.
  for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const proto = configError(t, { SVC_CONFIG: configFile(`{"${key}": 1}`) });
    t.equal(proto?.key, key, `${key} is an unknown key`);
  }
});

t.test('an unknown SVC_ variable is a ConfigError naming it; other variables are ignored', async (t) => {
  const err = configError(t, { SVC_HTTP_PROT: '80' });
  t.equal(err?.key, 'SVC_HTTP_PROT');
  t.match(err?.message, /SVC_HTTP_PROT/);
  t.match(err?.message, /unknown/);
  t.doesNotThrow(() => loadConfig({ PATH: '/bin', HOME: '/root', NODE_ENV: 'test', SVCX: '1' }));
});

t.test('bad values are a ConfigError naming the key and the problem', async (t) => {
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ SVC_HTTP_PORT: 'abc' }, 'SVC_HTTP_PORT', /whole number.*abc/],
    [{ SVC_HTTP_PORT: '80.5' }, 'SVC_HTTP_PORT', /whole number/],
    [{ SVC_HTTP_PORT: '' }, 'SVC_HTTP_PORT', /whole number/],
    [{ SVC_HTTP_PORT: '65536' }, 'SVC_HTTP_PORT', /at most 65535/],
    [{ SVC_HTTP_PORT: '-1' }, 'SVC_HTTP_PORT', /at least 0/],
    [{ SVC_LOGS_RETENTION_DAYS: '0' }, 'SVC_LOGS_RETENTION_DAYS', /at least 1/],
    [{ SVC_LOG_LEVEL: 'loud' }, 'SVC_LOG_LEVEL', /one of .*info.*loud/],
    [{ SVC_SQLITE_SYNCHRONOUS: 'full' }, 'SVC_SQLITE_SYNCHRONOUS', /one of FULL, NORMAL/],
    [{ SVC_HTTP_TRUST_PROXY: 'maybe' }, 'SVC_HTTP_TRUST_PROXY', /true or false.*maybe/],
  ];
  for (const [env, key, problem] of cases) {
    const err = configError(t, env);
    t.equal(err?.key, key, JSON.stringify(env));
    t.match(err?.message, key, `message names ${key}`);
    t.match(err?.message, problem, `message says the problem for ${JSON.stringify(env)}`);
    t.notMatch(err?.message, /\n/, 'one line');
  }
  const fileCases: [unknown, string, RegExp][] = [
    [{ http_port: 'abc' }, 'http_port', /whole number/],
    [{ http_port: 1.5 }, 'http_port', /whole number/],
    [{ http_port: 70000 }, 'http_port', /at most 65535/],
    [{ http_trust_proxy: 'sometimes' }, 'http_trust_proxy', /true or false/],
    [{ log_level: 'loud' }, 'log_level', /one of/],
    [{ log_level: ['warn'] }, 'log_level', /one of/],
    [{ sqlite_synchronous: 1 }, 'sqlite_synchronous', /one of/],
    [{ env: 42 }, 'env', /must be a string/],
    [{ dns_servers: [1, 2] }, 'dns_servers', /list of strings/],
  ];
  for (const [content, key, problem] of fileCases) {
    const err = configError(t, { SVC_CONFIG: configFile(content) });
    t.equal(err?.key, key, JSON.stringify(content));
    t.match(err?.message, problem, JSON.stringify(content));
  }
});

t.test('an unreadable or malformed file is a ConfigError', async (t) => {
  const missing = configError(t, { SVC_CONFIG: join(dir, 'no-such-file.json') });
  t.equal(missing?.key, 'SVC_CONFIG');
  t.match(missing?.message, /cannot read .*no-such-file\.json.*ENOENT/);

  if (process.getuid?.() !== 0) {
    const locked = configFile({ http_port: 1 });
    chmodSync(locked, 0o000);
    const err = configError(t, { SVC_CONFIG: locked });
    t.match(err?.message, /cannot read .*EACCES/);
  }
  const isDir = configError(t, { SVC_CONFIG: dir });
  t.match(isDir?.message, /cannot read/);

  const invalid = configError(t, { SVC_CONFIG: configFile('{"http_port": ') });
  t.equal(invalid?.key, 'SVC_CONFIG');
  t.match(invalid?.message, /not valid JSON/);

  for (const notObject of ['[1,2]', '42', 'null', '"text"']) {
    const err = configError(t, { SVC_CONFIG: configFile(notObject) });
    t.match(err?.message, /one JSON object/, notObject);
  }
});

t.test('describeConfig lists every key with its doc, env name and value; secrets are masked', async (t) => {
  const secret = 'redis://:hunter2-password@10.0.0.5:6379/0';
  const text = describeConfig(loadConfig({ SVC_REDIS_URL: secret, SVC_HTTP_PORT: '8080' }));
  const lines = text.trimEnd().split('\n');
  t.equal(lines.length, keys.length * 2, 'a doc line and a value line per key');
  for (const key of keys) {
    const at = lines.findIndex((line) => line.startsWith(`${key} = `));
    t.ok(at > 0, `${key} is listed`);
    t.match(lines[at - 1], schema[key].doc, `${key} doc precedes it`);
    t.match(lines[at - 1], envName(key), `${key} env name shown`);
  }
  t.ok(lines.includes('http_port = 8080'), 'the effective value is shown');
  t.ok(lines.includes('redis_url = <set>'), 'the secret is masked');
  t.notMatch(text, /hunter2/, 'the secret never appears');
  t.notMatch(text, /10\.0\.0\.5/);
  const unset = describeConfig(loadConfig({}));
  t.ok(unset.split('\n').includes('redis_url = ""'), 'an empty secret shows as empty');
});
