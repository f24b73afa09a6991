// The project's own import graph: every relative import (type imports included, since a type import
// ties two files together for a reader as much as a value import does) between the source folders,
// and the circles in it. Used by test/node/source-layout.test.ts; `node scripts/import-graph.ts`
// prints the circles, one a line, and exits 1 when there is any.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const SOURCE_FOLDERS = ["worker", "local-agent", "protocol", "openclaw-plugin", "scripts", "bench"] as const;

// `from "./x.ts"`, `import "./x.ts"`, `import("./x.ts")`, `export … from "./x.ts"`, across line breaks.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;

export function sourceFiles(root: string, folders: readonly string[] = SOURCE_FOLDERS): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) found.push(relative(root, full));
    }
  };
  for (const folder of folders) walk(join(root, folder));
  return found.sort();
}

/** file → the project files it imports (paths relative to root). */
export function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    const targets = new Set<string>();
    for (const match of text.matchAll(SPECIFIER)) {
      const target = relative(root, resolve(root, dirname(file), match[1] ?? ""));
      if (known.has(target)) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Each strongly connected group of two or more files (or a file importing itself), sorted. */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    index.set(start, counter); low.set(start, counter); counter += 1;
    stack.push(start); onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.next < edges.length) {
        const to = edges[frame.next]!;
        frame.next += 1;
        if (!index.has(to)) {
          index.set(to, counter); low.set(to, counter); counter += 1;
          stack.push(to); onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== frame.node);
      if (group.length > 1 || (graph.get(frame.node) ?? []).includes(frame.node)) circles.push(group.sort());
    }
  }
  return circles.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const circles = importCircles(importGraph(root, sourceFiles(root)));
  for (const circle of circles) console.log(circle.join(" ↔ "));
  console.log(`${circles.length} import circle${circles.length === 1 ? "" : "s"}`);
  process.exitCode = circles.length === 0 ? 0 : 1;
}
