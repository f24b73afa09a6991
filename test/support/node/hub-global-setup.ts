// vitest globalSetup: one stand-in hub for the workerd test project; its URL reaches the Worker tests
// as the TEST_HUB_URL binding (vitest.config.ts). It also holds what workerd prints of the relay's own
// resets until a test takes it (runtime-log.ts).
import type { TestProject } from "vitest/node";
import { holdRelayResets } from "./runtime-log.ts";
import { startStandinHub } from "./standin-hub.ts";

declare module "vitest" {
  interface ProvidedContext {
    hubUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runtimeLog = holdRelayResets();
  const hub = await startStandinHub(runtimeLog);
  project.provide("hubUrl", hub.url);
  return async () => {
    await hub.close();
    runtimeLog.restore();
  };
}
