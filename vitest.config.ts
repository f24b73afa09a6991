import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Tools started here must not phone home: no wrangler telemetry, no Request.cf download.
process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/node/summary-reporter.ts"],
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            // Receipt keys are sealed in every relay test (secret-box.ts); the Node end-to-end runs
            // go without the secret, so both ways are exercised.
            miniflare: { bindings: { TEST_HUB_URL: inject("hubUrl"), RECEIPT_KEY_SECRET: "test-receipt-key-secret-0123456789" } },
          })),
        ],
        test: {
          name: "workerd",
          include: ["test/worker/**/*.test.ts", "test/protocol/**/*.test.ts"],
          globalSetup: ["test/support/node/hub-global-setup.ts"],
          // Not a speed check (benchmarks are): the directory's rebuild tests took 6 s on a loaded CI
          // machine and hit vitest's 5 s default.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          globalSetup: ["test/support/node/relay-bundle-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
