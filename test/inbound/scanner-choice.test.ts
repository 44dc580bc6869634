import t from 'tap';
import { chooseClamd } from '../../bin/scanner-choice.js';
import type { Logger } from '../../core/logger.js';
import { startTestClamd } from '../helpers/clamd.js';

// `scanner_clamd: auto` scans when clamd answers on its standard socket at start and says so; with
// none there it starts without scanning and says that, naming the setting. An explicit target is
// used as given (a clamd that is down is then the fail mode's to answer), and empty is off.
t.setTimeout(90_000);

function lines(): Logger & { seen: { level: string; obj: Record<string, unknown>; msg?: string }[] } {
  const seen: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => { seen.push({ level, obj: obj as Record<string, unknown>, msg }); };
  const logger = { seen, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), child: () => logger };
  return logger;
}

t.test('auto: a clamd answering on the standard socket is used', async (t) => {
  const clamd = await startTestClamd();
  t.teardown(() => clamd.stop());
  const log = lines();
  t.equal(await chooseClamd('auto', log, clamd.socket), clamd.socket);
  t.match(log.seen, [{ level: 'info', msg: 'virus scanning on: clamd answered on its standard socket', obj: { clamd: clamd.socket } }]);
});

t.test('auto: no clamd there, no scanning, and one warning naming the setting', async (t) => {
  const log = lines();
  t.equal(await chooseClamd('auto', log, '/nonexistent/clamd.ctl'), '');
  t.equal(log.seen.length, 1);
  t.match(log.seen[0], { level: 'warn', msg: /virus scanning off: .*scanner_clamd/ });
});

t.test('an explicit target is used as given; empty is off', async (t) => {
  const log = lines();
  t.equal(await chooseClamd('127.0.0.1:3310', log), '127.0.0.1:3310', 'not pinged: a clamd down at start is the fail mode\'s business');
  t.equal(await chooseClamd('', log), '');
  t.same(log.seen.map((l) => l.msg), ['virus scanning on: clamd as configured', 'virus scanning off: scanner_clamd is empty']);
});
