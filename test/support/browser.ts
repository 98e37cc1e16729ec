import { type Browser, chromium } from 'playwright-core';
import { useSuiteResource } from './app.js';

/** Debian's Chromium, headless, with the flags this machine's closed network needs. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** One browser for a suite, launched in beforeAll and closed in afterAll. */
export function useBrowser(): Browser {
  return useSuiteResource(launchBrowser, (browser) => browser.close());
}
