import type { Db } from '../../storage/sql/index.js';
import { contactsRepo, type ContactRow } from '../../storage/repos/index.js';
import { watchSegmentEntry } from '../segments/index.js';
import { applyTopicChoices } from './choices.js';
import type { ConsentContext } from './consent.js';
import type { ContactInput, TopicChoiceInput } from './input.js';
import { contactView, type ContactView } from './view.js';
import { updateContact, type WriteDeps } from './write.js';

// Contact writes inside another area's transaction (an automation step commits them with the
// run's cursor): the same rules, consent records, events and svc:segment.entered as the API's.

export interface ContactWritesIn {
  /** A contact of the team with its properties, read in `db`. */
  read(db: Db, teamId: string, contactId: string): Promise<ContactView | undefined>;
  row(db: Db, teamId: string, contactId: string): Promise<ContactRow | undefined>;
  /** A PATCH of checked fields: answers false when the contact is gone. */
  update(trx: Db, teamId: string, contactId: string, input: ContactInput, context: ConsentContext): Promise<boolean>;
  /** Sets topic choices: answers false when the contact is gone. */
  setTopics(trx: Db, teamId: string, contactId: string, choices: TopicChoiceInput[], context: ConsentContext): Promise<boolean>;
}

export function contactWritesIn(deps: WriteDeps): ContactWritesIn {
  return {
    async read(db, teamId, contactId) {
      const row = await contactsRepo(db).byId(teamId, contactId);
      return row ? contactView(db, row) : undefined;
    },
    row: (db, teamId, contactId) => contactsRepo(db).byId(teamId, contactId),
    async update(trx, teamId, contactId, input, context) {
      const contact = await contactsRepo(trx).byId(teamId, contactId);
      if (!contact) return false;
      const watch = await watchSegmentEntry(trx, teamId, { id: contact.id });
      await updateContact(trx, deps, contact, input, context, 'patch');
      await watch.settle(contact.id, deps.clock.now());
      return true;
    },
    async setTopics(trx, teamId, contactId, choices, context) {
      const contact = await contactsRepo(trx).byId(teamId, contactId);
      if (!contact) return false;
      const watch = await watchSegmentEntry(trx, teamId, { id: contact.id });
      await applyTopicChoices(trx, contact, choices, context, deps.hash, deps.clock.now());
      await watch.settle(contact.id, deps.clock.now());
      return true;
    },
  };
}
