import type { Db } from '../sql/db.js';

// Facts about this installation written once by a migration (e.g. when return-path tags began).

/** The value of a fact, or undefined when no migration wrote it. */
export async function applianceFact(db: Db, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('appliance_facts').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}
