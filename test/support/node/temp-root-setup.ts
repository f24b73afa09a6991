// vitest globalSetup, first in both projects (vitest.config.ts): one temp root for the whole run. TMPDIR
// points into it, so every temp folder a test, a CLI child, wrangler or workerd makes (agent homes with
// private keys among them) lives under it, and it is removed when the run ends — a run leaves nothing
// new in the machine's temp dir. Both projects' setups run in the one vitest process: the first makes
// the root (process.env is how they share it), the same one removes it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT_VAR = "CLAWRELAY_TEST_TMP_ROOT";

export default function setup(): (() => void) | undefined {
  if (process.env[ROOT_VAR]) return undefined;
  const outside = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), "clawrelay-test-run-"));
  process.env[ROOT_VAR] = root;
  // os.tmpdir() reads TMPDIR on every call, and child processes inherit it.
  process.env.TMPDIR = root;
  return () => {
    if (outside === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outside;
    delete process.env[ROOT_VAR];
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
