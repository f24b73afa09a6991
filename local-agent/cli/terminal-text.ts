// Text a sender chose (a lane's session key or source name, an app's error answer), made safe to print
// on a terminal: control characters (C0, DEL, C1: ESC starts the sequences that move the cursor, recolour
// or retitle the window, or hide what follows) and the bidirectional overrides (which reorder what a
// person reads) are shown as visible escapes instead of acting; and a cut to a width in code points, so a
// long name cannot push a line off the screen. A body keeps its line breaks and tabs (terminalBlock), and
// whatever the CLI writes passes terminalOutput last, which also keeps JSON valid (it escapes as \uNNNN).
// Pure; used by the CLI's status, messages and sources text, cli.ts (every line it writes) and logger.ts;
// covered by test/node/lanes-display.test.ts and terminal-output.test.ts.

/** C0 controls, DEL, C1 controls, and the bidi embeddings, overrides and isolates (U+202A–E, U+2066–9). */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control character as \xNN (or \uNNNN): it reads as written and does nothing. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** UNSAFE but line feed and tab: what a multi-line text may not hold. */
const UNSAFE_IN_BLOCK = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** A multi-line text (a message's body) made safe: every control character but LF and TAB as \xNN (or \uNNNN). */
export function terminalBlock(text: string): string {
  return text.replace(UNSAFE_IN_BLOCK, (c) => terminalSafe(c));
}

/**
 * What the CLI writes, made safe as a whole (defence in depth behind terminalSafe and terminalBlock): every
 * control character but LF and TAB as \uNNNN. JSON stays valid and means the same (JSON.stringify leaves
 * DEL, the C1 controls and the bidi marks raw, and a terminal acts on some of them); text already escaped
 * is left as it is.
 */
export function terminalOutput(text: string): string {
  return text.replace(UNSAFE_IN_BLOCK, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `text` made safe, then cut to `max` code points with "…" as the last when longer; an escape is never cut in two. */
export function terminalCut(text: string, max: number): string {
  const safe = terminalSafe(text);
  if (Array.from(safe).length <= max) return safe;
  let kept = "";
  let width = 0;
  for (const point of text) {
    const shown = terminalSafe(point);
    const shownWidth = Array.from(shown).length;
    if (width + shownWidth > max - 1) break;
    kept += shown;
    width += shownWidth;
  }
  return `${kept}…`;
}
