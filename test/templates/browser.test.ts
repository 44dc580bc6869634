import t from 'tap';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { startTestAppliance } from '../helpers/appliance.js';
import { closeBrowser, launchBrowser } from '../helpers/browser.js';
import { call } from '../helpers/http.js';

// Two starters rendered by svc and drawn by a real browser (Debian's chromium): the page lays
// out at a real size, the key text is visible, and a screenshot is written under the test's own
// temporary folder (never committed).
const app = await startTestAppliance();
const browser = await launchBrowser();
t.teardown(async () => { await closeBrowser(browser); await app.stop(); });
const { token } = await app.newTeam('Browser');
const api = (method: string, path: string, body?: unknown) => call(app.baseUrl, method, path, { token, body });
const dir = t.testdir({});

for (const [starter, variables, visible] of [
  ['welcome', { first_name: 'Ann' }, ['Welcome aboard, Ann!', 'Get started', 'Acme Ltd']],
  ['newsletter', { headline: 'Spring news' }, ['Spring news', 'First story', 'Second story']],
] as const) {
  t.test(`the ${starter} starter draws in a browser`, async (t) => {
    const id = (await api('POST', '/templates', { name: starter, starter, brand_overrides: { company_name: 'Acme Ltd', accent_color: '#16a34a' } })).body.id;
    const preview = (await api('POST', `/templates/${id}/preview`, { variables })).body;
    const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
    // Offline: the page's remote images may not load, and nothing else may be fetched.
    await page.route('**/*', (route) => route.abort());
    await page.setContent(preview.html, { waitUntil: 'domcontentloaded' });
    for (const text of visible) t.ok(await page.getByText(text, { exact: true }).first().isVisible(), `"${text}" is visible`);
    const box = await page.locator('div[role="article"]').boundingBox();
    t.ok(box && box.width >= 500 && box.height >= 300, `the email lays out at a real size (${JSON.stringify(box)})`);
    const button = page.getByRole('link', { name: visible[1] });
    if (starter === 'welcome') {
      t.ok(await button.isVisible(), 'the button is visible');
      const colour = await button.evaluate((a) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(a).backgroundColor);
      t.equal(colour, 'rgb(22, 163, 74)', 'the button takes the brand\'s accent colour');
    }
    const file = join(dir, `${starter}.png`);
    await page.screenshot({ path: file, fullPage: true });
    t.ok(statSync(file).size > 10_000, `a non-trivial screenshot (${statSync(file).size} bytes)`);
    await page.close();
  });
}
