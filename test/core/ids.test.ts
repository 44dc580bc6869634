import t from 'tap';
import { newId } from '../../core/ids.js';

// Ids are UUIDv7, unique and strictly increasing in the order they are made (lists and cursors
// rely on it), also many within one millisecond.
t.test('100,000 ids: valid v7, unique, strictly increasing', async (t) => {
  const ids = Array.from({ length: 100_000 }, () => newId());
  const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  t.equal(ids.filter((id) => !v7.test(id)).length, 0, 'version 7, RFC 9562 variant');
  t.equal(new Set(ids).size, ids.length, 'no id twice');
  let ordered = true;
  for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) ordered = false;
  t.ok(ordered, 'each id sorts after the one before');
  const stamp = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
  t.ok(Math.abs(stamp(ids.at(-1)!) - Date.now()) < 5000, 'the time part is now');
});

t.test('the random part differs between ids (not a reused buffer)', async (t) => {
  const tails = new Set(Array.from({ length: 1000 }, () => newId().slice(-12)));
  t.equal(tails.size, 1000);
});
