// `npm run test:openclaw`: the interop run against the real OpenClaw gateway (test/openclaw/), kept
// out of `npm test` because it downloads ~770 MB once (Node 24 and openclaw, cached outside the
// checkout) and runs a 1 GB gateway. .ci/run calls it after `npm test`.
import { defineConfig } from "vitest/config";

process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

export default defineConfig({
  test: {
    name: "openclaw",
    environment: "node",
    include: ["test/openclaw/**/*.interop.test.ts"],
    globalSetup: ["test/support/node/relay-bundle-setup.ts"],
    reporters: ["default", "./test/support/node/summary-reporter.ts"],
    // One gateway, steps in order: a file's tests share it and run one after another.
    fileParallelism: false,
    testTimeout: 120_000,
    // The first run installs Node 24 and openclaw (~1 min on a warm registry, longer on a cold one).
    hookTimeout: 900_000,
  },
});
