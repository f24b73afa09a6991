// How long each function of a TypeScript file is, read as text: a line that opens a function (a
// `function`, a method, an arrow function assigned to a name) and the lines to the brace that closes
// it, strings, template literals and comments passed over. It is a house rule's check, not a parser:
// composition functions stay short (docs/layout.md), and test/node/source-layout.test.ts holds the
// files that compose the relay and the agent to it.

export interface FunctionLength {
  /** 1-based line the function opens on. */
  line: number;
  name: string;
  /** Lines from the opening line to the closing brace, both counted. */
  lines: number;
}

const OPENS = [
  /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)/,
  /^\s*(?:export\s+)?(?:const|let)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:<[^>]*>)?\([^)]*\)?.*=>\s*\{\s*$/,
  /^\s*(?:(?:public|private|protected|static|override|readonly|async|get|set)\s+)*(constructor|[\w$#]+)\s*(?:<[^>]*>)?\(.*\)\s*(?::\s*[^{;]+)?\{\s*$/,
];
const CONTROL = new Set(["if", "for", "while", "switch", "catch", "with", "return", "function"]);

/** The name of the function a line opens, or null. */
function opens(line: string): string | null {
  for (const pattern of OPENS) {
    const name = pattern.exec(line)?.[1];
    if (name && !CONTROL.has(name)) return name;
  }
  return null;
}

/** Each line's braces that count (none inside strings, template text or comments), in order. */
function bracesByLine(source: string): string[] {
  const out: string[] = [""];
  // Code and template text nest (`${…}` inside a template, a template inside that code): each code
  // level counts its own open braces, so the `}` that ends a `${…}` goes back to the template's text.
  const levels: { template: boolean; open: number }[] = [{ template: false, open: 0 }];
  const push = (brace: string) => (out[out.length - 1] += brace);
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    const level = levels[levels.length - 1]!;
    if (ch === "\n") out.push("");
    if (level.template) {
      if (ch === "\\") i++;
      else if (ch === "`") levels.pop();
      else if (ch === "$" && source[i + 1] === "{") {
        levels.push({ template: false, open: 0 });
        i++;
      }
    } else if (ch === "/" && source[i + 1] === "/") {
      while (i + 1 < source.length && source[i + 1] !== "\n") i++;
    } else if (ch === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 1;
      for (let j = i; j < stop; j++) if (source[j] === "\n") out.push("");
      i = stop;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== ch && source[j] !== "\n") j += source[j] === "\\" ? 2 : 1;
      // An unclosed quote ends at the line's end, which is still counted as one.
      i = source[j] === "\n" ? j - 1 : j;
    } else if (ch === "`") levels.push({ template: true, open: 0 });
    else if (ch === "{") {
      level.open++;
      push("{");
    } else if (ch === "}") {
      if (level.open === 0 && levels.length > 1) levels.pop();
      else {
        level.open--;
        push("}");
      }
    }
  }
  return out;
}

export function functionLengths(source: string): FunctionLength[] {
  const lines = source.split("\n");
  const braces = bracesByLine(source);
  const found: FunctionLength[] = [];
  for (let start = 0; start < lines.length; start++) {
    const name = opens(lines[start]!);
    if (!name) continue;
    let depth = 0;
    let opened = false;
    for (let end = start; end < lines.length; end++) {
      for (const brace of braces[end] ?? "") depth += brace === "{" ? 1 : -1;
      opened ||= depth > 0;
      if (opened && depth <= 0) {
        found.push({ line: start + 1, name, lines: end - start + 1 });
        break;
      }
    }
  }
  return found;
}
