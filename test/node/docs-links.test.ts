// The documentation holds together: every relative link in README.md and docs/*.md reaches a file that
// exists (and, with an #anchor into a Markdown file, one of its headings, by GitHub's slug rule); every
// source path a page names in backticks exists; and README.md stays a front page — at most 250 lines,
// its deploy section within the first 120.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const README_MAX_LINES = 250;
const DEPLOY_HEADING_MAX_LINE = 120;

const pages: string[] = [
  join(ROOT, "README.md"),
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join(ROOT, "docs", name)),
];

/** The text outside fenced code blocks, one entry per line (inside a fence: an empty string), so line numbers stay right. */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker[0] ?? null;
      else if (marker[0] === fence) fence = null;
      return "";
    }
    return fence === null ? line : "";
  });
}

/** GitHub's heading anchor: lower case, punctuation other than - and _ dropped, spaces to -; repeats get -1, -2 … */
function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

function headingSlugs(file: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(readFileSync(file, "utf8"))) {
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    // The heading's text as rendered: links keep their text, inline code its content.
    const text = (match[1] ?? "").replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = githubSlug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

interface Link {
  page: string;
  line: number;
  target: string;
}

/** Relative links `[text](target)` and images `![alt](target)` outside code; URLs with a scheme are left out. */
function relativeLinks(page: string): Link[] {
  const links: Link[] = [];
  proseLines(readFileSync(page, "utf8")).forEach((line, index) => {
    const prose = line.replace(/`[^`]*`/g, "");
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] ?? "";
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ page, line: index + 1, target });
    }
  });
  return links;
}

const where = (link: Link) => `${relative(ROOT, link.page)}:${link.line} → ${link.target}`;

describe("links in README.md and docs/", () => {
  const links = pages.flatMap(relativeLinks);

  it("finds the pages and their links", () => {
    expect(pages.length).toBeGreaterThan(2);
    expect(links.length).toBeGreaterThan(10);
  });

  it("every relative link points at a file or folder that exists", () => {
    const broken = links.filter((link) => {
      const path = link.target.split("#")[0] ?? "";
      return path !== "" && !existsSync(resolve(dirname(link.page), decodeURIComponent(path)));
    });
    expect(broken.map(where)).toEqual([]);
  });

  it("every #anchor into a Markdown file names one of its headings", () => {
    const slugsOf = new Map<string, Set<string>>();
    const broken = links.filter((link) => {
      const hash = link.target.indexOf("#");
      if (hash < 0) return false;
      const path = link.target.slice(0, hash);
      const file = path === "" ? link.page : resolve(dirname(link.page), decodeURIComponent(path));
      if (!file.endsWith(".md") || !existsSync(file)) return false;
      let slugs = slugsOf.get(file);
      if (!slugs) {
        slugs = headingSlugs(file);
        slugsOf.set(file, slugs);
      }
      return !slugs.has(decodeURIComponent(link.target.slice(hash + 1)));
    });
    expect(broken.map(where)).toEqual([]);
  });

  it("every source path named in backticks exists", () => {
    const folders = ["worker", "local-agent", "protocol", "openclaw-plugin", "scripts", "test", "bench", "examples", "docs"];
    const pathLike = new RegExp(`^(?:${folders.join("|")})/[A-Za-z0-9._/-]*\\.[a-z0-9]+$`);
    const missing: string[] = [];
    for (const page of pages) {
      proseLines(readFileSync(page, "utf8")).forEach((line, index) => {
        for (const match of line.matchAll(/`([^`\s]+)`/g)) {
          const path = match[1] ?? "";
          if (pathLike.test(path) && !existsSync(join(ROOT, path))) missing.push(`${relative(ROOT, page)}:${index + 1} → ${path}`);
        }
      });
    }
    expect(missing).toEqual([]);
  });
});

describe("README.md is a front page", () => {
  const lines = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\n$/, "").split("\n");

  it(`has at most ${README_MAX_LINES} lines`, () => {
    expect(lines.length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it(`reaches its deploy section within the first ${DEPLOY_HEADING_MAX_LINE} lines`, () => {
    const deployLine = lines.findIndex((line) => /^#{2,3}\s.*\bdeploy/i.test(line)) + 1;
    expect(deployLine).toBeGreaterThan(0);
    expect(deployLine).toBeLessThanOrEqual(DEPLOY_HEADING_MAX_LINE);
  });
});

describe("githubSlug", () => {
  it("follows GitHub's rule", () => {
    expect(githubSlug("Webhook sources: GitHub, Stripe, Slack, Standard Webhooks, token")).toBe("webhook-sources-github-stripe-slack-standard-webhooks-token");
    expect(githubSlug("`clawrelay hub register`, step by step")).toBe("clawrelay-hub-register-step-by-step");
    expect(githubSlug("The owner's queue API")).toBe("the-owners-queue-api");
    expect(githubSlug("Envelopes: the reference values")).toBe("envelopes-the-reference-values");
    expect(githubSlug("hooks.mappings and snake_case")).toBe("hooksmappings-and-snake_case");
  });
});
