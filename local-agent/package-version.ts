// The installed clawrelay's version: the nearest package.json named "clawrelay" above this file, so it
// is found from the source (local-agent/) and from the built CLI (dist/local-agent/) alike.
// Used by cli.ts (--version) and society-api.ts (/api/status).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "clawrelay" && typeof pkg.version === "string") return pkg.version;
    }
    dir = dirname(dir);
  }
  return "unknown";
}

export const CLAWRELAY_VERSION = findVersion();
