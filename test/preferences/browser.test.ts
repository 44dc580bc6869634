import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { startTestAppliance } from '../helpers/appliance.js';
import { consentRecords } from '../helpers/audience.js';
import { closeBrowser, launchBrowser } from '../helpers/browser.js';
import { call } from '../helpers/http.js';
import { audienceFixture, linksOf } from '../helpers/preferences.js';

// The preference page in a real browser (Debian's chromium), with JavaScript on and off: the
// topics are there as labelled checkboxes, a change is saved and confirmed, unsubscribing from
// everything and resubscribing work, the one-click page's button unsubscribes, and the consent
// trail in the database records each with the browser's address and user agent. The page has no
// script, so both runs must behave the same; the CSP must not block the page's own style.
const browser: Browser = await launchBrowser();
t.teardown(() => closeBrowser(browser));
const app = await startTestAppliance();
t.teardown(() => app.stop());

const STEP_MS = 30_000;
const box = (page: Page, name: string) => page.getByRole('checkbox', { name, exact: true });

for (const javaScriptEnabled of [true, false]) {
  t.test(`the preference page with JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, async (t) => {
    const f = await audienceFixture(app, `Browser ${javaScriptEnabled ? 'js' : 'nojs'}`);
    const links = linksOf(app, f.teamId, f.contactId, f.email);
    const context = await browser.newContext({ javaScriptEnabled });
    t.teardown(() => context.close());
    context.setDefaultTimeout(STEP_MS);
    context.setDefaultNavigationTimeout(STEP_MS);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    const userAgent = await page.evaluate(() => navigator.userAgent).catch(() => undefined);

    const opened = await page.goto(links.preferencesUrl);
    t.equal(opened?.status(), 200);
    t.equal(await page.locator('html').getAttribute('lang'), 'en');
    t.equal(await page.title(), 'Email preferences — Acme News');
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Email preferences');
    t.equal(await page.getByRole('group', { name: 'Topics' }).count(), 1, 'topics in a fieldset with its legend');
    t.same(await Promise.all(['News', 'Offers', 'Insiders', 'Club'].map((name) => box(page, name).isChecked())), [true, false, true, true]);
    t.equal(await box(page, 'Secret').count(), 0, 'a private topic the contact is not in is not shown');
    t.match(await page.getByRole('contentinfo').textContent(), /1 Main St.*10115 Berlin.*Germany/s, 'the postal address');

    await box(page, 'News').uncheck();
    await box(page, 'Offers').check();
    await page.getByRole('button', { name: 'Save preferences' }).click();
    t.equal(await page.getByRole('status').textContent(), 'Your preferences are saved.');
    t.same(await Promise.all(['News', 'Offers', 'Insiders', 'Club'].map((name) => box(page, name).isChecked())), [false, true, true, true], 'the page again, as saved');
    const topics = (await call(app.baseUrl, 'GET', `/contacts/${f.contactId}/topics`, { token: f.token })).body.data as { id: string; subscription: string }[];
    t.same(Object.fromEntries(topics.map((x) => [x.id, x.subscription]))[f.topics.news], 'opt_out');
    t.same(Object.fromEntries(topics.map((x) => [x.id, x.subscription]))[f.topics.offers], 'opt_in');

    await page.getByRole('button', { name: 'Unsubscribe from everything' }).click();
    t.equal(await page.getByRole('status').textContent(), 'You are unsubscribed from everything.');
    t.same(await Promise.all(['News', 'Offers'].map((name) => box(page, name).isDisabled())), [true, true], 'topics cannot be changed while unsubscribed');
    t.same(await Promise.all(['News', 'Offers', 'Insiders', 'Club'].map((name) => box(page, name).isChecked())), [false, false, false, false], 'a global unsubscribe wins');
    t.equal((await call(app.baseUrl, 'GET', `/contacts/${f.contactId}`, { token: f.token })).body.unsubscribed, true);

    await page.getByRole('button', { name: 'Resubscribe' }).click();
    t.match(await page.getByRole('status').textContent(), /subscribed again/);
    t.same(await Promise.all(['News', 'Offers'].map((name) => box(page, name).isChecked())), [false, true], 'the own choices are back');

    await page.goto(links.unsubscribeUrl);
    t.equal((await call(app.baseUrl, 'GET', `/contacts/${f.contactId}`, { token: f.token })).body.unsubscribed, false, 'opening the unsubscribe link changes nothing');
    await page.getByRole('button', { name: 'Unsubscribe', exact: true }).click();
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Unsubscribed');
    t.equal((await call(app.baseUrl, 'GET', `/contacts/${f.contactId}`, { token: f.token })).body.unsubscribed, true);
    await page.getByRole('link', { name: /Manage your preferences/ }).click();
    t.equal(await page.getByRole('button', { name: 'Resubscribe' }).count(), 1, 'the relative link leads to the preference page');

    const trail = (await consentRecords(app, f.teamId)).filter((r) => r.contact_id === f.contactId && r.source !== 'api');
    t.same(trail.map((r) => [r.kind, r.kind === 'topic' ? r.topic_id : null, r.value, r.source]), [
      ['topic', f.topics.news, 'opt_out', 'preference_page'],
      ['topic', f.topics.offers, 'opt_in', 'preference_page'],
      ['subscription', null, 'unsubscribed', 'preference_page'],
      ['subscription', null, 'subscribed', 'preference_page'],
      ['subscription', null, 'unsubscribed', 'one_click'],
    ], 'every change in the consent trail, in order');
    for (const r of trail) {
      t.match(r.ip, /127\.0\.0\.1$/, 'the browser\'s address');
      t.match(r.user_agent, /Chrome\//, 'the browser\'s user agent');
    }
    if (userAgent !== undefined) t.equal(trail[0]!.user_agent, userAgent);
    t.same(problems, [], 'no console errors: the CSP blocked nothing the page needs');
  });
}

t.test('the page\'s own style applies under its CSP', async (t) => {
  const f = await audienceFixture(app, 'Styled');
  await call(app.baseUrl, 'PATCH', '/team', { token: f.token, body: { brand_kit: {
    logo_url: null, primary_color: '#aa3300', accent_color: null, font: 'georgia', button_style: null, company_name: null, address: null, footer_text: null,
  } } });
  const context = await browser.newContext();
  t.teardown(() => context.close());
  context.setDefaultTimeout(STEP_MS);
  const page = await context.newPage();
  await page.goto(linksOf(app, f.teamId, f.contactId, f.email).preferencesUrl);
  // Runs in the page: the browser's own getComputedStyle (svc's types carry no DOM).
  const computed = (el: unknown) => {
    const style = (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string; fontFamily: string } }).getComputedStyle(el);
    return { backgroundColor: style.backgroundColor, fontFamily: style.fontFamily };
  };
  t.equal((await page.getByRole('button', { name: 'Save preferences' }).evaluate(computed)).backgroundColor, 'rgb(170, 51, 0)', 'the brand kit\'s primary colour');
  t.match((await page.locator('body').evaluate(computed)).fontFamily, /Georgia/);
});
