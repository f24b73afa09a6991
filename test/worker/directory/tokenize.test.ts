// Search terms (worker/directory/tokenize.ts): normalisation, stopwords, the light stemmer, CJK bigrams.
import { describe, expect, it } from "vitest";
import { stem, tokenize } from "../../../worker/directory/tokenize.ts";

describe("tokenize", () => {
  it("lowercases, splits on anything but letters and numbers, and drops stopwords", () => {
    expect(tokenize("What's the Weather in PARIS, today?")).toEqual(["weather", "paris", "today"]);
    expect(tokenize("e-mail/SMS: 24x7")).toEqual(["e", "mail", "sms", "24x7"]);
    expect(tokenize("the of and to")).toEqual([]);
    expect(tokenize("")).toEqual([]);
    expect(tokenize("  --  ")).toEqual([]);
  });

  it("folds compatibility forms with NFKC before matching", () => {
    expect(tokenize("ＷＥＡＴＨＥＲ")).toEqual(["weather"]);
    expect(tokenize("ﬁle ①")).toEqual(["file", "1"]);
  });

  it("keeps repeats, since term frequency counts", () => {
    expect(tokenize("weather weather")).toEqual(["weather", "weather"]);
  });

  it.each([
    [["forecast", "forecasts", "forecasting", "forecasted"], "forecast"],
    [["translate", "translates", "translated", "translating", "translation", "translations", "translator"], "translat"],
    [["query", "queries"], "queri"],
    [["optimize", "optimizing", "optimization"], "optimiz"],
    [["notify", "notified", "notification"], "notifi"],
    [["plan", "plans", "planning", "planned"], "plan"],
    [["image", "images", "imaging"], "imag"],
    [["book", "books", "booked", "booking"], "book"],
    [["box", "boxes"], "box"],
    [["search", "searches", "searched", "searching"], "search"],
    [["class", "classes"], "class"],
  ])("stems %j to one key %s", (words, key) => {
    for (const word of words) expect(stem(word)).toBe(key);
  });

  it("leaves short words, -ss/-us/-is endings and short stems alone", () => {
    for (const word of ["bus", "gas", "sql", "class", "status", "analysis", "string", "thing", "during", "code", "speed"]) {
      expect(stem(word)).toBe(word);
    }
    expect(stem("display")).toBe("display");
  });

  it("keeps Cyrillic, Arabic and Devanagari words whole, marks included", () => {
    expect(tokenize("Прогноз погоды")).toEqual(["прогноз", "погоды"]);
    expect(tokenize("ترجمة النصوص")).toEqual(["ترجمة", "النصوص"]);
    expect(tokenize("मौसम पूर्वानुमान")).toEqual(["मौसम", "पूर्वानुमान"]);
  });

  it("drops the accents of Latin words, so a query typed without them meets a card written with them", () => {
    expect(tokenize("Información del café")).toEqual(["informacion", "del", "cafe"]);
    expect(tokenize("informacion del cafe")).toEqual(tokenize("Información del café"));
    expect(tokenize("Türkei Straße Łódź Ærø")).toEqual(["turkei", "strass", "lodz", "aero"]);
    // Folded before stemming, so an accented plural stems like its plain spelling.
    expect(tokenize("résumés")).toEqual(tokenize("resumes"));
  });

  it("turns CJK runs into overlapping bigrams, so a short query meets a long word", () => {
    expect(tokenize("天气预报")).toEqual(["天气", "气预", "预报"]);
    expect(tokenize("天气")).toEqual(["天气"]);
    expect(tokenize("天")).toEqual(["天"]);
    expect(tokenize("日本語翻訳")).toEqual(["日本", "本語", "語翻", "翻訳"]);
    expect(tokenize("한국어 번역")).toEqual(["한국", "국어", "번역"]);
  });

  it("keeps the Katakana long-vowel mark inside its run", () => {
    expect(tokenize("カレンダー")).toEqual(["カレ", "レン", "ンダ", "ダー"]);
  });

  it("folds half-width katakana (voiced marks composed) and spells out the iteration mark 々", () => {
    expect(tokenize("ｶﾚﾝﾀﾞｰ")).toEqual(tokenize("カレンダー"));
    expect(tokenize("時々")).toEqual(["時時"]);
    expect(tokenize("人々の声")).toEqual(["人人", "人の", "の声"]);
  });

  it("adds each character of a CJK run for card text only, so one-character queries find it", () => {
    expect(tokenize("天气预报", { characters: true })).toEqual(["天气", "气预", "预报", "天", "气", "预", "报"]);
    expect(tokenize("天", { characters: true })).toEqual(["天"]);
    expect(tokenize("weather 天气", { characters: true })).toEqual(["weather", "天气", "天", "气"]);
  });

  it("splits mixed Latin and CJK at the script boundary", () => {
    expect(tokenize("GPT4翻译器")).toEqual(["gpt4", "翻译", "译器"]);
    expect(tokenize("天气API")).toEqual(["天气", "api"]);
  });

  it("treats full-width CJK punctuation as a separator", () => {
    expect(tokenize("天气。翻译！")).toEqual(["天气", "翻译"]);
  });
});
