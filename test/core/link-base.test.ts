import t, { type Test } from 'tap';
import { ConfigError } from '../../config/load.js';
import { ServiceError } from '../../core/errors.js';
import { linkBase } from '../../core/link-base.js';

// Where share and download links point: public_base_url, else a loopback listener's own address,
// else a 503 naming public_base_url. Never anything a request says.
const refused = (t: Test, fn: () => unknown, why: RegExp, label: string) => {
  try {
    fn();
    t.fail(`${label}: no refusal`);
  } catch (err) {
    t.ok(err instanceof ServiceError, `${label}: a ServiceError`);
    t.match(err, { statusCode: 503, errorName: 'service_unavailable', message: /public_base_url/ }, label);
    t.match((err as Error).message, why, label);
  }
};

t.test('public_base_url wins, without its trailing slash, path kept', async (t) => {
  t.equal(linkBase({ publicBaseUrl: 'https://mail.example.com/', httpHost: '0.0.0.0', httpPort: 3000 }).url(), 'https://mail.example.com');
  t.equal(linkBase({ publicBaseUrl: 'https://Mail.Example.com/svc//', httpHost: '127.0.0.1', httpPort: 3000 }).url(), 'https://mail.example.com/svc');
  t.equal(linkBase({ publicBaseUrl: 'http://10.0.0.5:8080', httpHost: '10.0.0.5', httpPort: 8080 }).url(), 'http://10.0.0.5:8080');
});

t.test('a public_base_url that is not a plain http(s) address stops start-up', async (t) => {
  for (const bad of ['mail.example.com', 'ftp://mail.example.com', 'https://u:p@mail.example.com', 'https://mail.example.com/?a=1', 'https://mail.example.com/#x', 'javascript:alert(1)']) {
    let thrown: unknown;
    try {
      linkBase({ publicBaseUrl: bad, httpHost: '127.0.0.1', httpPort: 3000 });
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof ConfigError, `${bad}: a ConfigError, which names the key in start-up's one line`);
    t.match(thrown, { key: 'public_base_url' }, bad);
  }
});

t.test('no public_base_url: the loopback listener, port as bound', async (t) => {
  t.equal(linkBase({ publicBaseUrl: '', httpHost: '127.0.0.1', httpPort: 3000 }).url(), 'http://127.0.0.1:3000');
  t.equal(linkBase({ publicBaseUrl: '', httpHost: '127.0.0.2', httpPort: 3000 }).url(), 'http://127.0.0.2:3000');
  t.equal(linkBase({ publicBaseUrl: '', httpHost: '::1', httpPort: 3000 }).url(), 'http://[::1]:3000');
  t.equal(linkBase({ publicBaseUrl: '', httpHost: 'localhost', httpPort: 3000 }).url(), 'http://localhost:3000');
  const picked = linkBase({ publicBaseUrl: '', httpHost: '127.0.0.1', httpPort: 0 });
  refused(t, () => picked.url(), /not bound yet/, 'port 0 before listening');
  picked.listening(41234);
  t.equal(picked.url(), 'http://127.0.0.1:41234');
});

t.test('no public_base_url and a listener outside loopback: links are refused', async (t) => {
  for (const host of ['0.0.0.0', '::', '10.0.0.5', '203.0.113.9', '2001:db8::1', 'mail.example.com']) {
    const base = linkBase({ publicBaseUrl: '', httpHost: host, httpPort: 3000 });
    base.listening(3000);
    refused(t, () => base.url(), new RegExp(`listens on ${host.replace(/\./g, '\\.')}`), host);
  }
});
