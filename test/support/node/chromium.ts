// Headless Chromium for the browser tests (Debian's `chromium`, driven by playwright-core): found at
// $CHROMIUM_PATH or the usual paths, launched once per test file. Where none is installed the tests are
// skipped, saying so — unless CLAWRELAY_REQUIRE_BROWSER=1 (.ci/run sets it), which makes that an error.
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

export const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p): p is string => !!p && existsSync(p));

/** Launches Chromium before the file's tests and closes it after; `label` names the file in the skip notice. */
export function useChromium(label: string): () => Browser {
  if (!CHROMIUM && process.env.CLAWRELAY_REQUIRE_BROWSER === "1") throw new Error("CLAWRELAY_REQUIRE_BROWSER=1 but no Chromium found: apt-get install chromium, or set CHROMIUM_PATH");
  if (!CHROMIUM) process.stderr.write(`\n[${label}] SKIPPED: no Chromium found (set CHROMIUM_PATH, or apt-get install chromium)\n`);
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (CHROMIUM) browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => browser!;
}
