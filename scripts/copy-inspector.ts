// After `tsc -p tsconfig.build.json`: the inspector page's files (plain HTML, CSS and JavaScript, served as
// they are by local-agent/inspector/inspector-routes.ts) copied beside the compiled agent, dist/local-agent/inspector/.
// The folder's TypeScript (its routes and figures) is tsc's to compile, not to copy.
import { cpSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
cpSync(join(root, "local-agent/inspector"), join(root, "dist/local-agent/inspector"), { recursive: true, filter: (source) => !source.endsWith(".ts") });
