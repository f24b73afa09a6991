import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { localAiForVitest } from "./scripts/local-ai/local-ai.ts";

// Tools started here must not phone home: no wrangler telemetry, no Request.cf download.
process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

// Every temp folder of the run lives under one root that the run removes (temp-root-setup.ts): it comes
// first in both projects' globalSetup.
const TEMP_ROOT_SETUP = "test/support/node/temp-root-setup.ts";

// Files run side by side (docs/testing.md, "Where the time goes"): most node end-to-end files wait on
// sockets and child processes, not on the CPU, so more files than cores run at once. Both projects run
// in one group, so they have the same number. Workers are reused across files (isolate: false): a new
// workerd per workerd file cost ~1.5 s of CPU each, a new fork per node file ~0.25 s; every file makes
// its own inboxes, homes and servers, so nothing a file leaves is seen by the next.
const MAX_WORKERS = 4;

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/node/summary-reporter.ts"],
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => {
            // wrangler.toml binds Workers AI, which needs an account and the network: the tests run
            // without either, on the local model in this process (scripts/local-ai/) behind the same
            // env.AI.run, with EMBEDDING_MODEL set to it.
            const localAi = localAiForVitest();
            return {
              wrangler: { configPath: "./wrangler.toml" },
              remoteBindings: false,
              miniflare: {
                ...localAi,
                // Receipt keys are sealed in every relay test (secret-box.ts); the Node end-to-end runs
                // go without the secret, so both ways are exercised.
                bindings: { ...localAi.bindings, TEST_HUB_URL: inject("hubUrl"), RECEIPT_KEY_SECRET: "test-receipt-key-secret-0123456789" },
              },
            };
          }),
        ],
        test: {
          name: "workerd",
          include: ["test/worker/**/*.test.ts", "test/protocol/**/*.test.ts"],
          globalSetup: [TEMP_ROOT_SETUP, "test/support/node/hub-global-setup.ts"],
          maxWorkers: MAX_WORKERS,
          isolate: false,
          // Not a speed check (benchmarks are): a test's time limit only ends one that would never end, and
          // a machine loaded by a second run beside this one takes many times the usual time.
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          globalSetup: [TEMP_ROOT_SETUP, "test/support/node/relay-bundle-setup.ts"],
          maxWorkers: MAX_WORKERS,
          isolate: false,
          // As above: the CLI tests run dozens of node processes one after another, 1 s each or more when
          // both cores are busy with something else.
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
