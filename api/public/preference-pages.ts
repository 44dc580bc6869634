import type { PreferencePage, PreferenceTopic, SenderIdentity } from '../../core/preferences/index.js';
import { escapeHtml as e, type HtmlPage } from './html.js';

// The markup of the unsubscribe and preference pages: plain forms that work without JavaScript,
// every control labelled, groups in fieldsets with legends, status messages announced
// (role="status"). Every value that comes from a team or a contact is escaped here.
//
// Links between the two pages are relative (`../preferences/<token>`), so they work on both
// mounts of the public router (`/` and `/api/v1`) and never name a host.

const fonts: Record<SenderIdentity['font'], string> = {
  system: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif', helvetica: 'Helvetica, Arial, sans-serif',
  arial: 'Arial, Helvetica, sans-serif', verdana: 'Verdana, Geneva, sans-serif', georgia: 'Georgia, serif',
  times: '"Times New Roman", Times, serif', courier: '"Courier New", Courier, monospace',
};

function style(sender?: SenderIdentity): string {
  // The colour was checked when the team saved it; checked again so nothing else reaches the CSS.
  const colour = sender && /^#[0-9a-fA-F]{6}$/.test(sender.primaryColor) ? sender.primaryColor : '#111827';
  const font = sender ? fonts[sender.font] ?? fonts.system : fonts.system;
  return `body{font-family:${font};margin:0;padding:1rem;color:#111827;background:#f9fafb;line-height:1.5}`
    + 'main{max-width:36rem;margin:0 auto;background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:1.5rem}'
    + 'fieldset{border:1px solid #d1d5db;border-radius:6px;margin:1rem 0;padding:.75rem 1rem}legend{font-weight:600;padding:0 .25rem}'
    + '.topic{margin:.5rem 0}.topic p{margin:.1rem 0 0 1.75rem;color:#4b5563;font-size:.9rem}'
    + 'input[type=checkbox]{width:1.1rem;height:1.1rem;margin-right:.5rem;vertical-align:-.15rem}label{font-weight:500}'
    + `button{font:inherit;padding:.5rem 1rem;border-radius:6px;border:1px solid ${colour};background:${colour};color:#fff;cursor:pointer}`
    + 'button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid #2563eb;outline-offset:2px}'
    + '.notice{background:#ecfdf5;border:1px solid #10b981;border-radius:6px;padding:.5rem .75rem}'
    + 'fieldset:disabled{color:#6b7280}footer{max-width:36rem;margin:1rem auto 0}address{font-style:normal;color:#4b5563;font-size:.9rem}';
}

const who = (page: PreferencePage) => `<p>Email from <strong>${e(page.sender.name)}</strong> to <strong>${e(page.email)}</strong>.</p>`;
const notice = (message: string | undefined) => (message ? `<p class="notice" role="status">${e(message)}</p>` : '');
const footer = (sender: SenderIdentity) => (sender.address.length
  ? `<footer><address>${[sender.name, ...sender.address].map(e).join('<br>')}</address></footer>` : '');

function topicItem(topic: PreferenceTopic, index: number): string {
  const id = `topic-${index}`;
  const described = topic.description ? ` aria-describedby="${id}-description"` : '';
  return `<div class="topic"><input type="hidden" name="shown" value="${e(topic.id)}">`
    + `<input type="checkbox" id="${id}" name="topic" value="${e(topic.id)}"${topic.subscribed ? ' checked' : ''}${described}>`
    + `<label for="${id}">${e(topic.name)}</label>`
    + (topic.description ? `<p id="${id}-description">${e(topic.description)}</p>` : '') + '</div>';
}

function topicsFieldset(page: PreferencePage, disabled: boolean): string {
  const items = page.topics.length ? page.topics.map(topicItem).join('') : '<p>There are no topics to choose from.</p>';
  return `<fieldset${disabled ? ' disabled' : ''}><legend>Topics</legend>${items}</fieldset>`;
}

/** The preference page; `message` confirms what a POST just did. */
export function preferencesPage(page: PreferencePage, message?: string): HtmlPage {
  const subscribed = page.status === 'subscribed';
  const body = subscribed
    ? '<form method="post"><input type="hidden" name="action" value="save">'
      + `${topicsFieldset(page, false)}<button type="submit">Save preferences</button></form>`
      + '<form method="post"><input type="hidden" name="action" value="unsubscribe_all">'
      + '<fieldset><legend>Unsubscribe from everything</legend>'
      + `<p>Stop every email from ${e(page.sender.name)} that you subscribed to, whatever the topics say.</p>`
      + '<button type="submit">Unsubscribe from everything</button></fieldset></form>'
    : `<p>${page.status === 'unsubscribed' ? 'You are unsubscribed from all email' : 'You have not subscribed to email'}`
      + ` from ${e(page.sender.name)}.</p>`
      + '<form method="post"><input type="hidden" name="action" value="resubscribe">'
      + `<fieldset><legend>Subscribe again</legend><p>Receive email from ${e(page.sender.name)} again; you can then choose topics.</p>`
      + `<button type="submit">${page.status === 'unsubscribed' ? 'Resubscribe' : 'Subscribe'}</button></fieldset></form>`
      + topicsFieldset(page, true);
  return {
    title: `Email preferences — ${page.sender.name}`,
    body: `<h1>Email preferences</h1>${notice(message)}${who(page)}${body}`,
    footer: footer(page.sender),
    style: style(page.sender),
  };
}

/** GET of the unsubscribe link: a question and a button (a GET never unsubscribes: scanners fetch links). */
export function unsubscribeQuestion(page: PreferencePage, token: string): HtmlPage {
  const preferences = `<p><a href="../preferences/${e(token)}">Choose topics instead</a></p>`;
  const body = page.status === 'unsubscribed'
    ? `<p>You are already unsubscribed from all email from ${e(page.sender.name)} to <strong>${e(page.email)}</strong>.</p>`
      + `<p><a href="../preferences/${e(token)}">Manage your preferences or resubscribe</a></p>`
    : `${who(page)}<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">`
      + `<p>Unsubscribe from all email from ${e(page.sender.name)}?</p><button type="submit">Unsubscribe</button></form>${preferences}`;
  return { title: `Unsubscribe — ${page.sender.name}`, body: `<h1>Unsubscribe</h1>${body}`, footer: footer(page.sender), style: style(page.sender) };
}

/** The answer to the one-click POST. */
export function unsubscribedPage(page: PreferencePage, token: string): HtmlPage {
  return {
    title: `Unsubscribed — ${page.sender.name}`,
    body: '<h1>Unsubscribed</h1><p class="notice" role="status">'
      + `You will no longer receive email from ${e(page.sender.name)} at <strong>${e(page.email)}</strong>.</p>`
      + `<p>Changed your mind? <a href="../preferences/${e(token)}">Manage your preferences or resubscribe</a></p>`,
    footer: footer(page.sender),
    style: style(page.sender),
  };
}

/** Unknown, forged, altered, erased or re-addressed: one answer for all. */
export function linkNotFoundPage(): HtmlPage {
  return { title: 'Link not valid', body: '<h1>Link not valid</h1><p>This link is not valid, or no longer is.</p>', style: style() };
}

export function pageFailedPage(): HtmlPage {
  return { title: 'Something went wrong', body: '<h1>Something went wrong</h1><p>The page could not be shown. Please try again later.</p>', style: style() };
}

export function formRefusedPage(): HtmlPage {
  return { title: 'Form not accepted', body: '<h1>Form not accepted</h1><p>The form could not be read.</p>', style: style() };
}
