// Text → index terms for the directory's search (worker/directory/search-index.ts); platform-free so
// the directory bench can run it in Node. Covered by test/worker/directory/tokenize.test.ts.
//
// Cards and queries go through the same function, so any choice here only has to be consistent:
// NFKC folds full-width and compatibility forms (ＡＢＣ, ﬁ, ①) before lowercasing; words are runs of
// letters and numbers; CJK runs, written without spaces, become overlapping character bigrams.
//
// Latin folding: accents are dropped from all-Latin words (café → cafe, Türkei → turkei, ß → ss).
//
// CJK folding: NFKC already turns half-width katakana into full-width (ｶﾚﾝﾀﾞｰ → カレンダー, the voiced
// mark composed) and full-width Latin into ASCII; the iteration mark 々 is spelled out (時々 → 時時),
// as both forms are written. Card text (cardUnits) also indexes each CJK character alone, so a
// one-character query (症, 猫) finds a card whose words contain it; a query's runs of two or more stay
// bigrams only, which keeps 天气 from matching every card with 天. Not folded: hiragana against katakana
// and simplified against traditional Han (no standard one-to-one mapping without a dictionary).

// Marks (\p{M}) stay inside words: after NFKC most Latin accents are precomposed, but the vowel signs
// of Devanagari, Thai or Arabic are combining marks, and splitting on them would shred those words.
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
// Script_Extensions, not Script: the long-vowel mark ー and the iteration mark 々 are "Common" by
// Script but belong to Katakana/Han runs by extension; splitting on them would break カレンダー.
const CJK_RUN = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;

// Function words that would otherwise match every card. Kept short on purpose: "help", "get" and
// "make" carry intent in agent queries. "s" and "t" are what apostrophes leave behind (agent's, don't).
const STOPWORDS = new Set([
  "a", "about", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
  "how", "i", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "s",
  "so", "some", "t", "that", "the", "their", "them", "these", "this", "those", "to", "us", "was", "we",
  "were", "what", "which", "who", "will", "with", "would", "you", "your",
]);

// Words shorter than 4 letters are never stemmed ("bus", "gas"); 4-letter words only lose a plural -s
// ("bots" → "bot"); the other steps need 5 letters.
const MIN_PLURAL_WORD = 4;
const MIN_STEM_WORD = 5;
// A suffix is only removed when at least this much of the word remains ("string" keeps its "ing").
const MIN_STEM = 4;

/**
 * A deliberately small English stemmer (a few of Porter's steps, none of its measure rules). It need
 * not produce real words, only map inflections onto one key:
 *   forecast, forecasts, forecasting, forecasted       → forecast
 *   translate, translates, translated, translating,
 *   translation, translations, translator               → translat
 *   query, queries → queri;  planning → plan;  images, imaging → imag
 * Only plain a–z words are stemmed; accented Latin and other scripts stay whole. Misses that would
 * need exception lists are accepted: coding ≠ code (the stem "cod" is too short), quizzes ≠ quiz.
 */
export function stem(word: string): string {
  if (word.length < MIN_PLURAL_WORD || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  // 1. Plurals and third-person -s: queries → queri, classes → class, boxes → box (searches → searche
  //    → search via step 3); keep -ss, -us, -is (status, analysis).
  if (w.endsWith("ies") && w.length >= MIN_STEM_WORD) w = w.slice(0, -3) + "i";
  else if (w.endsWith("sses") || w.endsWith("xes")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length < MIN_STEM_WORD) return w;
  // 2. One derivational/inflectional suffix, longest first; -ization before -ation.
  for (const [suffix, replacement] of SUFFIXES) {
    if (w.endsWith(suffix) && w.length - suffix.length >= MIN_STEM) {
      return undouble(w.slice(0, -suffix.length)) + replacement;
    }
  }
  // 3. Bare forms meet their suffixed ones: translate → translat, query → queri (consonant + y only,
  //    so "display" keeps its y).
  if (w.endsWith("e")) return w.slice(0, -1);
  if (/[^aeiou]y$/.test(w)) return w.slice(0, -1) + "i";
  return w;
}

const SUFFIXES: readonly (readonly [string, string])[] = [
  ["fication", "fi"], // notification → notifi, as notify → notifi
  ["ization", "iz"], // optimization → optimiz, as optimize → optimiz
  ["isation", "is"], // summarisation → summaris (British spelling)
  ["ation", "at"], // translation → translat
  ["ator", "at"], // translator → translat (not -or in general: "color", "error", "vendor")
  ["ing", ""],
  ["ed", ""],
];

// planning → plann → plan, embedded → embedd → embed; l, s and z double in base forms (spell, pass, buzz).
function undouble(w: string): string {
  const last = w.at(-1);
  return last !== undefined && last === w.at(-2) && !"aeioulsz".includes(last) && w.length > MIN_STEM ? w.slice(0, -1) : w;
}

// A Han character followed by the iteration mark: the mark repeats it.
const ITERATION = /(\p{sc=Han})々/gu;

/**
 * Index terms of `text`, in order, with repeats (term frequency matters to the ranking). `characters`
 * (card text only): each character of a CJK run of two or more is a term as well as its bigrams.
 */
export function tokenize(text: string, options: { characters?: boolean } = {}): string[] {
  const terms: string[] = [];
  for (const [word] of text.normalize("NFKC").toLowerCase().matchAll(WORD)) {
    // Most words are ASCII and need no CJK split; skipping it nearly halves the time to tokenise.
    if (ASCII.test(word)) {
      addWord(terms, word);
      continue;
    }
    let last = 0;
    for (const run of word.matchAll(CJK_RUN)) {
      addWord(terms, word.slice(last, run.index));
      addBigrams(terms, run[0].replace(ITERATION, "$1$1"), options.characters === true);
      last = run.index + run[0].length;
    }
    addWord(terms, word.slice(last));
  }
  return terms;
}

function addWord(terms: string[], word: string): void {
  const folded = foldLatin(word);
  if (folded !== "" && !STOPWORDS.has(folded)) terms.push(stem(folded));
}

// Latin letters lose their accents, as search engines' ASCII folding does: a query typed without them
// (cafe, musica, Turkei) finds a card written with them and the reverse, and a cognate in another
// language (música, chocolat) is then an English word or one typo away from it. Only all-Latin words:
// the marks of other scripts are letters' parts (see WORD).
const LATIN_WORD = /^[\p{scx=Latin}\p{M}\p{N}]+$/u;
const COMBINING = /\p{M}/gu;
const LIGATURES: Readonly<Record<string, string>> = { ß: "ss", æ: "ae", œ: "oe", ø: "o", đ: "d", ł: "l", ı: "i" };

function foldLatin(word: string): string {
  if (ASCII.test(word) || !LATIN_WORD.test(word)) return word;
  return word.normalize("NFD").replace(COMBINING, "").replace(/[ßæœøđłı]/g, (letter) => LIGATURES[letter]!).normalize("NFC");
}

// 天气预报 → 天气 气预 预报, so a query 天气 (itself the one bigram 天气) finds it without a dictionary.
// Spread into code points first: rare Han characters lie outside the BMP.
function addBigrams(terms: string[], run: string, characters: boolean): void {
  const chars = [...run];
  if (chars.length === 1) terms.push(run);
  for (let i = 0; i + 1 < chars.length; i++) terms.push(chars[i]! + chars[i + 1]!);
  if (characters && chars.length > 1) terms.push(...chars);
}
