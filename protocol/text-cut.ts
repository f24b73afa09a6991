// Cutting text shown to a person to a length without splitting a surrogate pair. Used by frames.ts (a
// reject's reason) and live.ts (a failure's message); covered by test/protocol/frames.test.ts.

/** At most `max` UTF-16 units, never ending in half a surrogate pair (which would store as U+FFFD). */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}
