import t from 'tap';
import addressparser from 'nodemailer/lib/addressparser';
import { parseMailboxes } from '../../core/emails/addresses.js';

// parseMailboxes reads a bare address of letters, digits and `._+-` without addressparser (a
// campaign's `to` is a contact's stored address). That is only right while addressparser reads
// such a string as itself with no name, and the mailbox is the one the named form gives.

// The fast path's pattern, as core/emails/addresses.ts has it.
const FAST_PATH = /^[A-Za-z0-9._+-]+@[A-Za-z0-9.-]+$/;
const LOCAL = 'abcXYZ019._+-';
const DOMAIN = 'abcxyzXYZ019.-';

/** A string of the fast path's characters: a local part, `@`, a domain, valid or not. */
function randomBare(seed: number): string {
  let x = (seed * 2654435761) >>> 0;
  const pick = (chars: string) => chars[(x = (x * 1103515245 + 12345) >>> 0) % chars.length]!;
  const run = (chars: string, length: number) => Array.from({ length }, () => pick(chars)).join('');
  return `${run(LOCAL, 1 + (seed % 9))}@${run(DOMAIN, 1 + (seed % 13))}`;
}

const outcome = (field: string, value: string) => {
  try {
    const [m] = parseMailboxes(field, value);
    return { address: m!.address, domain: m!.domain, name: m!.name };
  } catch (err) {
    return { error: (err as Error).message.replace(/\(got .*\)/, '') };
  }
};

t.test('addressparser reads a bare address of the fast path as itself, with no name', async (t) => {
  const bare = ['a.b+c@ex.com', 'A@B.COM', 'a..b@c.com', '.a@b.com', 'a@b', 'a@b.com.', 'a@-b.com'];
  for (let i = 0; i < 5000; i++) bare.push(randomBare(i));
  t.same(bare.filter((s) => !FAST_PATH.test(s)), [], 'every sample is of the fast path');
  const differ = bare.filter((s) => JSON.stringify(addressparser(s, { flatten: true })) !== JSON.stringify([{ address: s, name: '' }]));
  t.same(differ, [], 'each is one entry: the string itself, no name');
});

t.test('a bare address gives the mailbox (or the refusal) its named form gives', async (t) => {
  const samples = ['ann@example.com', 'Ann.Lee+news@Example.COM', 'a..b@c.com', 'a@b', 'a@b.com.', 'a@-b.com', 'x@xn--bcher-kva.example'];
  for (let i = 0; i < 2000; i++) samples.push(randomBare(i));
  t.same(samples.filter((s) => !FAST_PATH.test(s)), [], 'every sample is of the fast path');
  for (const s of samples) {
    const bare = outcome('to', s);
    const named = outcome('to', `Ann <${s}>`);
    if ('error' in named) t.same(bare, named, `${s}: refused alike`);
    else t.same(bare, { ...named, name: '' }, `${s}: same mailbox`);
  }
  t.same(parseMailboxes('to', 'Ann.Lee+news@Example.COM')[0], {
    header: 'Ann.Lee+news@example.com', name: '', address: 'Ann.Lee+news@example.com', domain: 'example.com',
  });
});
