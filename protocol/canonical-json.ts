// Is a span of JSON text already its own JCS (RFC 8785) form? Then sha256 of its bytes is payload_hash,
// and the relay needs neither JSON.parse nor canonicalize for it (posted-payload.ts). The check is the
// whole grammar, not a hint: a span it passes is well-formed JSON with no whitespace outside strings,
// keys strictly increasing by UTF-16 code units in every object (so no duplicate), strings escaped
// exactly as JCS escapes them (\" \\ \b \f \n \r \t, \u00xx in lowercase for the other controls,
// nothing else: no \/, no escaped surrogate), numbers spelled as ECMAScript's Number::toString spells
// them (RFC 8785 3.2.2.3: no 1.0, 1E3, -0 or leading zeros) and nesting within a depth; the text is
// decoded from UTF-8, so it has no lone surrogate. Whatever fails any of these goes the slow way (strict-json.ts, then canonicalize), which
// gives today's answer. A loop over the text (never recursive). Covered by test/protocol/canonical-json.test.ts
// (against canonicalize on generated values, canonical and not).

/** The characters JCS writes as two-character escapes, by the letter after the backslash. */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);
/** The controls JCS writes as \b \t \n \f \r, never as \u00xx. */
const SHORT_ESCAPED_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);
const [VALUE, KEY, AFTER] = [0, 1, 2];
const CONTROL = /[\u0000-\u001f]/g;
/** Characters of a string read one by one before indexOf takes over. */
const SHORT_STRING = 48;
const indexOrEnd = (text: string, index: number) => (index < 0 ? text.length : index);

const LOWER_HEX = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isNumberChar = (c: number) => isDigit(c) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;

/** The span's own code units compared in place (no slices): negative, zero or positive as a < b, a = b, a > b. */
function compareSpans(text: string, aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  const length = Math.min(aEnd - aStart, bEnd - bStart);
  for (let k = 0; k < length; k++) {
    const d = text.charCodeAt(aStart + k) - text.charCodeAt(bStart + k);
    if (d !== 0) return d;
  }
  return aEnd - aStart - (bEnd - bStart);
}

/** True when the escape whose backslash is at `b` is one JCS writes; its length is 2, or 6 for \u00xx. */
function isJcsEscape(text: string, b: number): boolean {
  const letter = text.charCodeAt(b + 1);
  if (letter !== 0x75) return SHORT_ESCAPES.has(letter);
  // \u00xx, lowercase, only for a control with no short escape.
  if (text.charCodeAt(b + 2) !== 0x30 || text.charCodeAt(b + 3) !== 0x30) return false;
  const [high, low] = [text.charCodeAt(b + 4), text.charCodeAt(b + 5)];
  if ((high !== 0x30 && high !== 0x31) || !LOWER_HEX(low)) return false;
  return !SHORT_ESCAPED_CONTROLS.has((high - 0x30) * 16 + (low <= 0x39 ? low - 0x30 : low - 0x57));
}

/**
 * Index just past a number written as Number::toString writes it, starting at `at`; -1 when it is not.
 * Plain spellings with at most 15 significant digits (DBL_DIG: each names its own double, so toString
 * gives the same digits back) are judged by their shape; anything else by String(Number(x)).
 */
function numberEnd(text: string, at: number): number {
  let end = text.charCodeAt(at) === 0x2d ? at + 1 : at;
  const intStart = end;
  while (isDigit(text.charCodeAt(end))) end++;
  const intDigits = end - intStart;
  const leadingZero = text.charCodeAt(intStart) === 0x30;
  let plain = intDigits > 0 && (!leadingZero || intDigits === 1);
  let significant = leadingZero ? 0 : intDigits;
  if (plain && text.charCodeAt(end) === 0x2e) {
    const fracStart = ++end;
    while (isDigit(text.charCodeAt(end))) end++;
    let zeros = 0;
    if (leadingZero) while (zeros < end - fracStart && text.charCodeAt(fracStart + zeros) === 0x30) zeros++;
    significant += end - fracStart - zeros;
    // toString writes no trailing zero, and below 1e-6 (six zeros after "0.") switches to 1e-7 and on.
    plain = end > fracStart && text.charCodeAt(end - 1) !== 0x30 && zeros <= 5;
  } else if (plain && leadingZero && at !== intStart) plain = false;
  if (plain && significant <= 15 && !isNumberChar(text.charCodeAt(end))) return end;
  while (isNumberChar(text.charCodeAt(end))) end++;
  const spelled = text.slice(at, end);
  // Every finite number's toString is a JSON number; "Infinity" and "NaN" have letters this never takes.
  return String(Number(spelled)) === spelled ? end : -1;
}

/**
 * Index just past the JSON value starting at `start` when that value is written exactly as JCS writes
 * it (and nested at most `maxDepth` containers deep); -1 when it is not, or is not JSON at all.
 * `text` must be decoded from UTF-8, so it holds no lone surrogate (JCS would write one escaped, and
 * this does not look for one: checking costs a scan of its own, and decoding has already ruled it out).
 */
export function canonicalJsonEnd(text: string, start: number, maxDepth: number): number {
  // Found lazily for long strings and kept while still ahead: each is searched for once over the text.
  let nextBackslash = -1;
  let nextControl = -1;
  // Per open container (index = depth - 1): object or array, and an object's last key (its span, and
  // whether it had an escape); keyStart is -1 before the first key.
  const isObject: boolean[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  const keyEscaped: boolean[] = [];
  let depth = 0;
  let i = start;
  // What comes next: a value, an object's key, or what follows a value (',' or a closing bracket).
  let expect = VALUE;
  for (;;) {
    const c = text.charCodeAt(i);
    if (expect === AFTER) {
      if (depth === 0) break;
      if (c === 0x2c) {
        i++;
        expect = isObject[depth - 1] ? KEY : VALUE;
      } else if (c === (isObject[depth - 1] ? 0x7d : 0x5d)) {
        i++;
        depth--;
      } else return -1;
    } else if (c === 0x22) {
      let escaped = false;
      let quote = -1;
      // A short string is read here, one character at a time (a call to indexOf costs more than that).
      let k = i + 1;
      for (const shortEnd = Math.min(text.length, k + SHORT_STRING); k < shortEnd; k++) {
        const d = text.charCodeAt(k);
        if (d === 0x22) {
          quote = k;
          break;
        }
        if (d === 0x5c) {
          if (!isJcsEscape(text, k)) return -1;
          escaped = true;
          k += text.charCodeAt(k + 1) === 0x75 ? 5 : 1;
        } else if (d < 0x20) return -1;
      }
      // A long one by indexOf; a raw control character anywhere in the rest of it is refused (JCS escapes them all).
      if (quote < 0) {
        const from = k;
        let end = -1;
        while (quote < 0) {
          if (nextBackslash < k) nextBackslash = indexOrEnd(text, text.indexOf("\\", k));
          if (end < k) end = indexOrEnd(text, text.indexOf('"', k));
          if (end === text.length) return -1;
          if (nextBackslash < end) {
            if (!isJcsEscape(text, nextBackslash)) return -1;
            escaped = true;
            k = nextBackslash + (text.charCodeAt(nextBackslash + 1) === 0x75 ? 6 : 2);
          } else quote = end;
        }
        if (nextControl < from) {
          CONTROL.lastIndex = from;
          nextControl = CONTROL.exec(text)?.index ?? text.length;
        }
        if (nextControl < quote) return -1;
      }
      if (expect === KEY) {
        if (text.charCodeAt(quote + 1) !== 0x3a) return -1;
        const top = depth - 1;
        const previous = keyStart[top]!;
        if (previous >= 0) {
          // Keys sort by their UTF-16 code units as decoded; only an escaped key needs decoding first.
          const order = escaped || keyEscaped[top]
            ? (JSON.parse(text.slice(i, quote + 1)) as string) > (JSON.parse(text.slice(previous - 1, keyEnd[top]! + 1)) as string) ? 1 : -1
            : compareSpans(text, i + 1, quote, previous, keyEnd[top]!);
          if (order <= 0) return -1;
        }
        keyStart[top] = i + 1;
        keyEnd[top] = quote;
        keyEscaped[top] = escaped;
        i = quote + 2;
        expect = VALUE;
      } else {
        i = quote + 1;
        expect = AFTER;
      }
    } else if (expect === KEY) {
      return -1;
    } else if (c === 0x7b || c === 0x5b) {
      if (depth >= maxDepth) return -1;
      const object = c === 0x7b;
      isObject[depth] = object;
      keyStart[depth] = -1;
      depth++;
      i++;
      if (text.charCodeAt(i) === (object ? 0x7d : 0x5d)) {
        i++;
        depth--;
        expect = AFTER;
      } else expect = object ? KEY : VALUE;
    } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      const word = c === 0x74 ? "true" : c === 0x66 ? "false" : "null";
      if (!text.startsWith(word, i)) return -1;
      i += word.length;
      expect = AFTER;
    } else if (c === 0x2d || isDigit(c)) {
      i = numberEnd(text, i);
      if (i < 0) return -1;
      expect = AFTER;
    } else return -1;
  }
  return i;
}
