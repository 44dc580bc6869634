import type { Db } from '../../storage/sql/index.js';
import { teamsRepo, type ContactRow, type SubscriptionStatus } from '../../storage/repos/index.js';
import { brandKitView, type BrandKit, type PostalAddress } from '../team/index.js';
import { effectiveSubscription, topicsRepo, type TopicWithChoice } from '../topics/index.js';

// What a contact's preference page shows (spec Topic, Team): the sender identity, and every live
// public topic plus the private ones the contact is already opted into (its own choice, else the
// topic's default), each checked when its effective subscription is opt_in — which a global
// unsubscribe (or never having subscribed) makes opt_out for every topic.

export interface PreferenceTopic {
  id: string;
  name: string;
  description: string | null;
  subscribed: boolean;
}

export interface SenderIdentity {
  /** sender_name, else the brand kit's company name, else the team's name. */
  name: string;
  /** The postal address as lines (sender identity, else the brand kit's one-line address); empty when none. */
  address: string[];
  primaryColor: string;
  font: BrandKit['font'];
}

export interface PreferencePage {
  sender: SenderIdentity;
  email: string;
  status: SubscriptionStatus;
  topics: PreferenceTopic[];
}

/** Topics shown at most: a bound on one page's size, far above any real team's list. */
const TOPICS_SHOWN_MAX = 1000;
const TOPIC_PAGE = 100;

export async function preferencePage(db: Db, contact: ContactRow): Promise<PreferencePage> {
  const [sender, topics] = await Promise.all([senderIdentity(db, contact.team_id), visibleTopics(db, contact)]);
  const unsubscribed = contact.subscription_status !== 'subscribed';
  return {
    sender,
    email: contact.email,
    status: contact.subscription_status,
    topics: topics.map((t) => ({
      id: t.id, name: t.name, description: t.description, subscribed: effectiveSubscription({ unsubscribed }, t, t.choice) === 'opt_in',
    })),
  };
}

/** The contact's own standing with a topic, whatever its global status: its choice, else the default. */
export const ownChoice = (topic: TopicWithChoice) => topic.choice ?? topic.default_subscription;

/** Public topics, and private ones the contact is opted into; oldest first. */
export async function visibleTopics(db: Db, contact: ContactRow): Promise<TopicWithChoice[]> {
  const repo = topicsRepo(db);
  const all: TopicWithChoice[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await repo.listForContact(contact.team_id, contact.id, { limit: TOPIC_PAGE, after });
    all.push(...page.data);
    if (!page.has_more || all.length >= TOPICS_SHOWN_MAX) break;
    after = page.data.at(-1)!.id;
  }
  return all.filter((t) => t.visibility === 'public' || ownChoice(t) === 'opt_in').reverse();
}

async function senderIdentity(db: Db, teamId: string): Promise<SenderIdentity> {
  const team = await teamsRepo(db).byId(teamId);
  const kit = brandKitView(team?.brand_kit ?? null);
  const postal = team?.postal_address ? (JSON.parse(team.postal_address) as PostalAddress) : null;
  return {
    name: team?.sender_name || kit.company_name || team?.name || '',
    address: postal ? addressLines(postal) : kit.address ? [kit.address] : [],
    primaryColor: kit.primary_color,
    font: kit.font,
  };
}

function addressLines(a: PostalAddress): string[] {
  const region = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' }).of(a.country) ?? a.country;
  const place = [a.postal_code, a.city, a.state].filter(Boolean).join(' ');
  return [a.line1, a.line2, place, region].filter((line): line is string => Boolean(line));
}
