// vitest globalSetup: one stand-in hub for the workerd test project; its URL reaches the Worker tests
// as the TEST_HUB_URL binding (vitest.config.ts).
import type { TestProject } from "vitest/node";
import { startStandinHub } from "./standin-hub.ts";

declare module "vitest" {
  interface ProvidedContext {
    hubUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const hub = await startStandinHub();
  project.provide("hubUrl", hub.url);
  return () => hub.close();
}
