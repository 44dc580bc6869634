import type { Db } from '../../storage/sql/index.js';
import { contactsRepo, type ContactRow, type ContactsRepo } from '../../storage/repos/index.js';
import { inWriteTransaction } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { invalidParameter, notFound, validationError } from '../errors.js';
import { looksLikeId } from '../ids.js';
import { parsePageQuery, type RawPageQuery } from '../pagination.js';
import { isBareAddress } from '../suppressions/index.js';
import { topicsRepo } from '../topics/index.js';
import { addExplicitMembers, checkSegmentsExist, segmentMembersPage, watchSegmentEntry } from '../segments/index.js';
import { applyTopicChoices } from './choices.js';
import type { ConsentContext, ConsentHasher } from './consent.js';
import {
  checkEmail, checkName, checkProperties, checkTopicChoices, emailKeyOf,
  type ContactInput, type CreateContactInput, type TopicChoiceInput,
} from './input.js';
import type { ContactLimitOf } from './limit.js';
import { contactListItem, contactView, type ContactListItem, type ContactView } from './view.js';
import { createContact, eraseContact, updateContact, type WriteDeps } from './write.js';

export interface ContactsDeps {
  db: Db;
  clock: Clock;
  /** HMAC of addresses for the consent trail (consentHasher(secretBox.derive('consent v1'))). */
  hash: ConsentHasher;
  contactLimit: ContactLimitOf;
}

export interface ListContactsQuery extends RawPageQuery {
  segment_id?: string;
}

/** The spec's contact list: no `has_more`; walk with `after` until a page comes back empty. */
export interface ContactList {
  object: 'list';
  data: ContactListItem[];
}

/** A contact's topic as GET /contacts/{contact}/topics shows it: its own choice, else the default. */
export interface ContactTopicItem {
  id: string;
  name: string;
  description: string | null;
  subscription: 'opt_in' | 'opt_out';
}

type Ref = { object: 'contact'; id: string };

export function contactsService(deps: ContactsDeps) {
  const repo = contactsRepo(deps.db);
  const writeDeps: WriteDeps = { clock: deps.clock, hash: deps.hash, contactLimit: deps.contactLimit };
  const write = <T>(fn: (trx: Db) => Promise<T>) => inWriteTransaction(deps.db, fn);
  return {
    /** 201 `{object, id}` whether the address was new or not (rule 1). */
    async create(teamId: string, input: CreateContactInput, context: ConsentContext): Promise<Ref> {
      const checked = { ...checkFields(input), email: checkEmail(input.email), topics: checkTopicChoices(input.topics) };
      const id = await write(async (trx) => {
        const segmentIds = await checkSegmentsExist(trx, teamId, (input.segments ?? []).map((s) => s.id));
        const watch = await watchSegmentEntry(trx, teamId, { emailKey: emailKeyOf(checked.email) });
        const contactId = await createContact(trx, writeDeps, teamId, checked, context);
        // Entries by filter first: an explicit addition then announces only a contact not in already.
        await watch.settle(contactId, deps.clock.now());
        for (const segmentId of segmentIds) await addExplicitMembers(trx, teamId, segmentId, [contactId], deps.clock.now());
        return contactId;
      });
      return { object: 'contact', id };
    },

    async list(teamId: string, query: ListContactsQuery): Promise<ContactList> {
      const page = parsePageQuery(query);
      if (query.segment_id !== undefined) {
        if (!looksLikeId(query.segment_id)) throw invalidParameter('segment_id', 'The `segment_id` parameter must be a segment id.');
        const members = await segmentMembersPage(deps.db, teamId, query.segment_id, page);
        return { object: 'list', data: members.data.map(contactListItem) };
      }
      const result = await repo.list(teamId, page);
      return { object: 'list', data: result.data.map(contactListItem) };
    },

    async get(teamId: string, ref: string): Promise<ContactView> {
      return contactView(deps.db, await find(repo, teamId, ref));
    },

    async update(teamId: string, ref: string, input: ContactInput, context: ConsentContext): Promise<Ref> {
      const checked = checkFields(input);
      if (input.email !== undefined) checked.email = checkEmail(input.email);
      const id = await write(async (trx) => {
        const contact = await find(contactsRepo(trx), teamId, ref);
        const watch = await watchSegmentEntry(trx, teamId, { id: contact.id });
        await updateContact(trx, writeDeps, contact, checked, context, 'patch');
        await watch.settle(contact.id, deps.clock.now());
        return contact.id;
      });
      return { object: 'contact', id };
    },

    /** Erasure (rule 3). */
    async remove(teamId: string, ref: string, context: ConsentContext): Promise<Ref & { contact: string; deleted: true }> {
      const id = await write(async (trx) => {
        const contact = await find(contactsRepo(trx), teamId, ref);
        await eraseContact(trx, writeDeps, contact, context);
        return contact.id;
      });
      return { object: 'contact', id, contact: id, deleted: true };
    },

    /** Every live topic of the team with the contact's own choice, else the topic's default. */
    async listTopics(teamId: string, ref: string, query: RawPageQuery): Promise<{ object: 'list'; has_more: boolean; data: ContactTopicItem[] }> {
      const page = parsePageQuery(query);
      const contact = await find(repo, teamId, ref);
      const result = await topicsRepo(deps.db).listForContact(teamId, contact.id, page);
      const data = result.data.map((t) => ({ id: t.id, name: t.name, description: t.description, subscription: t.choice ?? t.default_subscription }));
      return { object: 'list', has_more: result.has_more, data };
    },

    /** Sets choices (the SDK sends a bare array). No contact.* webhook: a topic change is not one. */
    async updateTopics(teamId: string, ref: string, choices: TopicChoiceInput[], context: ConsentContext): Promise<{ id: string }> {
      const checked = checkTopicChoices(choices);
      const id = await write(async (trx) => {
        const contact = await find(contactsRepo(trx), teamId, ref);
        const watch = await watchSegmentEntry(trx, teamId, { id: contact.id });
        await applyTopicChoices(trx, contact, checked, context, deps.hash, deps.clock.now());
        await watch.settle(contact.id, deps.clock.now());
        return contact.id;
      });
      return { id };
    },
  };
}

export type ContactsService = ReturnType<typeof contactsService>;

function checkFields(input: ContactInput): ContactInput {
  return {
    first_name: checkName(input.first_name, 'first_name'),
    last_name: checkName(input.last_name, 'last_name'),
    unsubscribed: input.unsubscribed,
    subscription_status: input.subscription_status,
    properties: checkProperties(input.properties),
  };
}

/** Every `{contact}` path parameter: the contact id or its address (case-insensitive). */
async function find(repo: ContactsRepo, teamId: string, ref: string): Promise<ContactRow> {
  let row: ContactRow | undefined;
  if (looksLikeId(ref)) row = await repo.byId(teamId, ref.toLowerCase());
  else if (isBareAddress(ref.trim())) row = await repo.byEmailKey(teamId, emailKeyOf(ref));
  else throw invalidParameter('contact', 'The path must name a contact id or an email address.');
  if (!row) throw notFound('Contact');
  return row;
}
