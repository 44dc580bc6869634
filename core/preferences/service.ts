import type { SecretBox } from '../../storage/files/index.js';
import { broadcastsRepo, contactsRepo, type ContactRow } from '../../storage/repos/index.js';
import { inWriteTransaction, type Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { watchSegmentEntry } from '../segments/index.js';
import { applyTopicChoices, setOwnSubscription, type ConsentContext, type ConsentHasher, type TopicChoiceInput } from '../contacts/index.js';
import type { Logger } from '../logger.js';
import { ownChoice, preferencePage, visibleTopics, type PreferencePage } from './page.js';
import { contactLinkTokens } from './tokens.js';

// A contact's unsubscribe and preference links (spec Broadcasts: UNSUBSCRIBE_URL, PREFERENCES_URL
// and the List-Unsubscribe headers) and what their pages do. The token is the capability: every
// answer for a token that is not genuine, names no contact of its team, or was made for another
// address is the same `undefined` (the public route's 404). Writes go through core/contacts, so
// each change has its consent record and each topic choice its svc:topic.* platform event; no
// contact.* webhook is written (spec Events). A broadcast's links name the broadcast: an unsubscribe
// through them — one-click, the unsubscribe page, "unsubscribe from everything", or opting out of
// the broadcast's topic on the preference page — marks that broadcast's recipient row, in the
// change's transaction, for GET /broadcasts/{id}/recipients?type=unsubscribed.

export interface PreferencesDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  secretBox: SecretBox;
  /** The consent trail's address hash (consentHasher(secretBox.derive('consent v1'))). */
  hash: ConsentHasher;
  /** scheme://host[:port] of every link (core/link-base.ts); throws a 503 when none can be known. */
  linkBase: () => string;
}

/** What one recipient's message carries: the two merge variables and the RFC 2369 / RFC 8058 headers. */
export interface RecipientLinks {
  unsubscribeUrl: string;
  preferencesUrl: string;
  headers: { 'List-Unsubscribe': string; 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}

/** Who made a change through a page: the request's address and user agent, for the consent record. */
export interface PageRequest {
  ip: string | null;
  userAgent: string | null;
}

/** A POST of the preference page's topic form: the topics it showed and the ones left checked. */
export interface TopicForm {
  shown: readonly string[];
  checked: readonly string[];
}

export const unsubscribePath = (token: string) => `/unsubscribe/${token}`;
export const preferencesPath = (token: string) => `/preferences/${token}`;

export function preferencesService(deps: PreferencesDeps) {
  const tokens = contactLinkTokens(deps.secretBox);
  const selfDeps = { clock: deps.clock, hash: deps.hash };
  const log = deps.logger.child({ area: 'preferences' });

  /** The contact a token names, read with `db` (inside a transaction for a write), and the broadcast it came in. */
  async function contactOf(db: Db, token: string): Promise<{ contact: ContactRow; broadcastId?: string } | undefined> {
    const claim = tokens.open(token);
    if (!claim) return undefined;
    const contact = await contactsRepo(db).byId(claim.teamId, claim.contactId);
    if (!contact || !claim.tagMatches(contact.email_key)) return undefined;
    return { contact, ...(claim.broadcastId ? { broadcastId: claim.broadcastId } : {}) };
  }

  type Change = (trx: Db, contact: ContactRow, broadcastId: string | undefined) => Promise<number>;

  /** Runs a change for the token's contact in one transaction, then reads the page it leads to. */
  async function change(token: string, action: string, fn: Change): Promise<PreferencePage | undefined> {
    const done = await inWriteTransaction(deps.db, async (trx) => {
      const named = await contactOf(trx, token);
      if (!named) return undefined;
      const { contact } = named;
      // A changed choice or resubscribe can bring the contact into a segment (svc:segment.entered).
      const watch = await watchSegmentEntry(trx, contact.team_id, { id: contact.id });
      const changed = await fn(trx, contact, named.broadcastId);
      await watch.settle(contact.id, deps.clock.now());
      return { contact, changed };
    });
    if (!done) return undefined;
    log.info({ teamId: done.contact.team_id, contactId: done.contact.id, action, changed: done.changed }, 'contact changed its preferences');
    const contact = await contactsRepo(deps.db).byId(done.contact.team_id, done.contact.id);
    return contact ? preferencePage(deps.db, contact) : undefined;
  }

  type Source = ConsentContext['source'];
  const context = (source: Source, request: PageRequest): ConsentContext => ({ source, ip: request.ip, userAgent: request.userAgent });
  const setStatus = (token: string, status: 'subscribed' | 'unsubscribed', source: Source, request: PageRequest) =>
    change(token, `${source}:${status}`, async (trx, contact, broadcastId) => {
      const changed = await setOwnSubscription(trx, selfDeps, contact, status, context(source, request));
      if (changed && status === 'unsubscribed' && broadcastId) await markUnsubscribed(trx, contact, broadcastId);
      return Number(changed);
    });
  const markUnsubscribed = (trx: Db, contact: ContactRow, broadcastId: string, topicIds?: string[]) =>
    broadcastsRepo(trx).markUnsubscribed(contact.team_id, broadcastId, contact.id, deps.clock.now().toISOString(), topicIds);

  return {
    /** Broadcasts call this per recipient. Throws the link base's 503 when links cannot be made. */
    linksFor(contact: Pick<ContactRow, 'id' | 'team_id' | 'email_key'>, broadcastId?: string): RecipientLinks {
      const base = deps.linkBase();
      const token = tokens.mint(contact.team_id, contact.id, contact.email_key, broadcastId);
      const unsubscribeUrl = base + unsubscribePath(token);
      return {
        unsubscribeUrl,
        preferencesUrl: base + preferencesPath(token),
        // No mailto: svc's inbound listener does not act on unsubscribe mail, and a mailto nobody
        // reads is worse than none. RFC 8058 asks for one https URI, which this is whenever
        // public_base_url is https (the production set-up); receivers offer one-click only then.
        headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      };
    },

    /** The page of a token's contact (GET of either link). */
    async page(token: string): Promise<PreferencePage | undefined> {
      const named = await contactOf(deps.db, token);
      return named ? preferencePage(deps.db, named.contact) : undefined;
    },

    /** The one-click unsubscribe (RFC 8058 POST, or the unsubscribe page's button). */
    oneClickUnsubscribe: (token: string, request: PageRequest) => setStatus(token, 'unsubscribed', 'one_click', request),
    /** "Unsubscribe from everything" on the preference page. */
    unsubscribeAll: (token: string, request: PageRequest) => setStatus(token, 'unsubscribed', 'preference_page', request),
    /** Resubscribing on the preference page: consent given again, recorded like any other. */
    resubscribe: (token: string, request: PageRequest) => setStatus(token, 'subscribed', 'preference_page', request),

    /**
     * The topic form: each topic the form showed and the page still shows is opted in when
     * checked and out when not; a choice is written only where it differs from the contact's own
     * standing, so saving an unchanged form writes nothing. Ids the page does not show are ignored.
     */
    saveTopics(token: string, form: TopicForm, request: PageRequest): Promise<PreferencePage | undefined> {
      return change(token, 'topics', async (trx, contact, broadcastId) => {
        const shown = new Set(form.shown);
        const checked = new Set(form.checked);
        const choices: TopicChoiceInput[] = [];
        for (const topic of await visibleTopics(trx, contact)) {
          if (!shown.has(topic.id)) continue;
          const wanted = checked.has(topic.id) ? 'opt_in' : 'opt_out';
          if (wanted !== ownChoice(topic)) choices.push({ id: topic.id, subscription: wanted });
        }
        const applied = await applyTopicChoices(trx, contact, choices, context('preference_page', request), deps.hash, deps.clock.now());
        const optedOut = choices.filter((c) => c.subscription === 'opt_out').map((c) => c.id);
        if (applied && broadcastId && optedOut.length) await markUnsubscribed(trx, contact, broadcastId, optedOut);
        return applied;
      });
    },
  };
}

export type PreferencesService = ReturnType<typeof preferencesService>;
