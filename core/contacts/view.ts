import type { Db } from '../../storage/sql/index.js';
import { contactsRepo, type ContactRow, type SubscriptionStatus } from '../../storage/repos/index.js';
import { propertiesOf, type TypedValue } from './properties.js';

// Declared as an interface and its extension (not Omit<…>) so the OpenAPI document tsoa writes
// keeps every field's nullability; the controllers name these types directly.

/** A contact in a list: no properties. */
export interface ContactListItem {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  created_at: string;
  /** A global opt-out: subscription_status is `unsubscribed`. */
  unsubscribed: boolean;
  subscription_status: SubscriptionStatus;
}

/** A contact as GET /contacts/{contact} shows it, and as contact.* events carry it: with its properties, each value with its type. */
export interface ContactView extends ContactListItem {
  object: 'contact';
  properties: { [key: string]: TypedValue };
}

export const contactListItem = (row: ContactRow): ContactListItem => ({
  id: row.id, email: row.email, first_name: row.first_name, last_name: row.last_name, created_at: row.created_at,
  unsubscribed: row.subscription_status === 'unsubscribed', subscription_status: row.subscription_status,
});

/** The whole contact, its properties read with `db` (a transaction's, for events). */
export async function contactView(db: Db, row: ContactRow): Promise<ContactView> {
  return { object: 'contact', ...contactListItem(row), properties: propertiesOf(await contactsRepo(db).values(row.team_id, row.id)) };
}
