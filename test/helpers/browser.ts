import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { withDeadline } from './deadline.js';

// A real browser for the pages people open (the preference page): Debian's chromium, driven
// headless through playwright-core (which brings no browser of its own). Each launch gets a fresh
// temporary profile: Playwright makes one per launch (and removes it on close), and refuses a
// --user-data-dir argument. A missing chromium fails the test with what to install — never a skip.

export const CHROMIUM_PATH = '/usr/bin/chromium';

const args = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const LAUNCH_MS = 60_000;
const CLOSE_MS = 30_000;

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no chromium at ${CHROMIUM_PATH}: the browser tests drive Debian's chromium (apt-get install chromium; \`make test\` installs it)`);
  }
  return withDeadline('chromium to start', chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args, timeout: LAUNCH_MS }), LAUNCH_MS + 5_000);
}

export async function closeBrowser(browser: Browser): Promise<void> {
  await withDeadline('chromium to close', browser.close(), CLOSE_MS);
}
