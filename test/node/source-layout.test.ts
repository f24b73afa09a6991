// The house's layout rules, held by a test so a change that breaks one says so: no import circles
// (type imports count), a local-agent/ root of at most a dozen files, no source file past 300 lines,
// no function past 60 lines in the files that compose the agent and the inbox (agent.ts, inbox.ts, the
// intake steps), file headers that name only tests that exist, and bench/ at most 12 % of the source.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { functionLengths } from "../../scripts/function-lengths.ts";
import { SOURCE_FOLDERS, importCircles, importGraph, sourceFiles } from "../../scripts/import-graph.ts";

const ROOT = join(import.meta.dirname, "../..");

function allFiles(folder: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|js|css|html|toml)$/.test(name)) found.push(relative(ROOT, full));
    }
  };
  walk(join(ROOT, folder));
  return found;
}

const lines = (file: string): number => readFileSync(join(ROOT, file), "utf8").split("\n").length - 1;

describe("source layout", () => {
  it("has no import circle among the sources", () => {
    const files = sourceFiles(ROOT);
    expect(files.length).toBeGreaterThan(100);
    expect(importCircles(importGraph(ROOT, files))).toEqual([]);
  });

  it("finds a circle when there is one (the check itself)", () => {
    const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts"]], ["d.ts", ["a.ts"]], ["e.ts", ["e.ts"]]]);
    expect(importCircles(graph)).toEqual([["a.ts", "b.ts", "c.ts"], ["e.ts"]]);
  });

  it("keeps at most 12 files at the root of local-agent/, the rest in feature folders", () => {
    const root = readdirSync(join(ROOT, "local-agent")).filter((name) => statSync(join(ROOT, "local-agent", name)).isFile());
    expect(root.length).toBeLessThanOrEqual(12);
  });

  it("has no source file past 300 lines", () => {
    const long = ["worker", "local-agent", "protocol", "openclaw-plugin", "scripts"]
      .flatMap(allFiles)
      .filter((file) => file.endsWith(".ts") && lines(file) > 300);
    expect(long).toEqual([]);
  });

  it("has no function past 60 lines where the agent and the inbox are composed (startAgent was 197, acceptEnvelope 108)", () => {
    const composing = ["local-agent/agent.ts", "worker/inbox.ts", ...allFiles("worker/intake")];
    const long = composing.flatMap((file) =>
      functionLengths(readFileSync(join(ROOT, file), "utf8"))
        .filter((f) => f.lines > 60)
        .map((f) => `${file}:${f.line} ${f.name} (${f.lines} lines)`),
    );
    expect(composing.length).toBeGreaterThan(5);
    expect(long).toEqual([]);
  });

  it("measures a function from its opening line to its closing brace, past braces in strings, templates and comments (the check itself)", () => {
    const source = [
      "export async function long(a: number): Promise<void> {",
      '  const s = "}}}";',
      "  const t = `${a ? `}${'{'}` : \"}\"}`; // }",
      "  /* { */",
      "  if (a) {",
      "    return;",
      "  }",
      "}",
      "const arrow = (x: number) => {",
      "  return { x };",
      "};",
      "class C {",
      "  private method(y: string): string {",
      "    return y;",
      "  }",
      "}",
    ].join("\n");
    expect(functionLengths(source)).toEqual([
      { line: 1, name: "long", lines: 8 },
      { line: 9, name: "arrow", lines: 3 },
      { line: 13, name: "method", lines: 3 },
    ]);
  });

  it("names in each source file's header only tests that exist (a bare name: in the folder of the path before it, else anywhere)", () => {
    const tests = ["test"].flatMap(allFiles).filter((file) => file.endsWith(".test.ts"));
    const exists = (named: string) => {
      const glob = named.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*");
      const pattern = new RegExp(named.startsWith("test/") ? `^${glob}$` : `/${glob}$`);
      return tests.some((file) => pattern.test(file));
    };
    const missing: string[] = [];
    for (const file of ["worker", "local-agent", "protocol", "openclaw-plugin", "scripts", "bench", "test/support"].flatMap(allFiles).filter((f) => f.endsWith(".ts"))) {
      const header = /^(?:\/\/.*\n)+/.exec(readFileSync(join(ROOT, file), "utf8"))?.[0] ?? "";
      let folder = "";
      for (const [name] of header.replace(/\n\/\/\s*/g, " ").matchAll(/(?:test\/)?[\w.*/-]+\.test\.ts/g)) {
        const path = name.startsWith("test/") ? name : `${folder}${name}`;
        folder = path.slice(0, path.lastIndexOf("/") + 1);
        if (!exists(path)) missing.push(`${file}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("keeps bench/ at most 12 % of the source lines", () => {
    const count = (folder: string) => allFiles(folder).reduce((sum, file) => sum + lines(file), 0);
    const total = SOURCE_FOLDERS.reduce((sum, folder) => sum + count(folder), 0);
    expect(count("bench") / total).toBeLessThanOrEqual(0.12);
  });
});
