import t from 'tap';
import { issueToken, parseToken, secretMatches } from '../../core/api-keys/tokens.js';

// The secret last proven against a stored hash is remembered; nothing else may pass because of it.
t.test('a remembered secret still refuses every other secret', async (t) => {
  const issued = issueToken();
  const { secret } = parseToken(issued.token)!;
  const nearly = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
  t.equal(secretMatches(nearly, issued.hash), false, 'refused before the right one was seen');
  t.equal(secretMatches(secret, issued.hash), true, 'the right secret, proven by its hash');
  t.equal(secretMatches(secret, issued.hash), true, 'and again, from memory');
  t.equal(secretMatches(nearly, issued.hash), false, 'one character off, after the right one');
  t.equal(secretMatches(secret.slice(0, -1), issued.hash), false, 'a prefix');
  t.equal(secretMatches(secret + 'x', issued.hash), false, 'longer');
  t.equal(secretMatches('', issued.hash), false, 'empty');
});

t.test("a secret proven for one key does not open another key's hash", async (t) => {
  const a = issueToken();
  const b = issueToken();
  const secretA = parseToken(a.token)!.secret;
  t.equal(secretMatches(secretA, a.hash), true);
  t.equal(secretMatches(secretA, b.hash), false);
  t.equal(secretMatches(parseToken(b.token)!.secret, b.hash), true);
});
