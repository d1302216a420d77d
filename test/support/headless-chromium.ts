import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, as `.ci/run` installs it. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Starts the real headless Chromium, isolated from the network beyond what the pages ask:
 * no background services, no component updates, no sync. Fails (never skips) without it.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: apt-get install chromium (bash .ci/run does)`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
