// The headless browser the ui's tests and benchmark drive: Debian's `chromium`, installed by
// hack/chromium/install.sh (the test scripts call it), launched by playwright-core (no browser download).

import { accessSync, constants } from 'node:fs';

import { chromium, type Browser, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium executable: $FLOTILLA_CHROMIUM, else the first of the system's. Throws, saying how to get one. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.FLOTILLA_CHROMIUM;
  for (const p of given ? [given] : CANDIDATES) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // try the next
    }
  }
  throw new Error(
    given
      ? `FLOTILLA_CHROMIUM=${given} is not an executable`
      : `no Chromium at ${CANDIDATES.join(', ')}: run 'bash hack/chromium/install.sh' (Debian: apt-get install chromium), or set FLOTILLA_CHROMIUM`,
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // A container's /dev/shm is often 64 MiB; Chromium then crashes on large pages.
    args: ['--disable-dev-shm-usage', '--no-first-run', '--disable-gpu'],
  });
}

/**
 * Waits until `expression` (page-side JavaScript, as text: the tests have Node's types, not the DOM's) is
 * truthy in the page. Evaluated through the DevTools protocol, not by the page's own eval, which the
 * ui's Content-Security-Policy forbids (playwright's waitForFunction with a string uses it).
 */
export async function waitInPage(page: Page, expression: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await page.evaluate(expression)) return;
    if (Date.now() > deadline) throw new Error(`not true in the page within ${timeoutMs} ms: ${expression}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
