// Chinese and Japanese in the directory's search (worker/directory/tokenize.ts, card-units.ts): a word
// in a card's tags or examples is found from a query that contains it among other characters, from a
// one-character query, and from half-width katakana.
import { describe, expect, it } from "vitest";
import { SearchIndex } from "../../../worker/directory/search-index.ts";
import type { AgentCard } from "../../../worker/directory/card.ts";
import { agent, skill } from "../../support/workerd/directory-cards.ts";


const CARDS: AgentCard[] = [
  agent("hay-fever", "Allergy reports", [
    skill("pollen", "Pollen Count", "Daily pollen levels", ["pollen", "花粉"], ["今日の花粉は多いですか"]),
  ]),
  agent("job-coach", "Career help", [
    skill("cover-letter", "Cover Letters", "Write a cover letter", ["cover letter", "求职信"], ["帮我写一封求职信"]),
  ]),
  agent("cal-jp", "Japanese calendar", [
    skill("calendar", "Calendar", "Schedules", ["カレンダー", "予定"], ["時々確認する予定"]),
  ]),
  agent("pet-vet", "Pet health", [
    skill("cats", "Cat Health", "Symptoms of sick cats", ["猫", "cats"]),
  ]),
];

function index(): SearchIndex {
  const built = new SearchIndex();
  for (const card of CARDS) built.upsert(card);
  return built;
}

describe("CJK words in cards are found", () => {
  const search = index();
  it.each([
    ["花粉症がひどい", "hay-fever", "pollen", "a two-character tag inside a longer Japanese query"],
    ["请帮我修改求职信", "job-coach", "cover-letter", "a Chinese tag inside a longer query"],
    ["粉", "hay-fever", "pollen", "one character of a tag, alone"],
    ["猫", "pet-vet", "cats", "a one-character tag, alone"],
    ["信", "job-coach", "cover-letter", "one character of a Chinese word, alone"],
    ["ｶﾚﾝﾀﾞｰ", "cal-jp", "calendar", "half-width katakana folded to full-width"],
    ["時時", "cal-jp", "calendar", "the iteration mark spelled out: 時々 in the card"],
    ["時々", "cal-jp", "calendar", "and the same form in the query"],
  ])("%s → %s / %s (%s)", (query, name, skillId) => {
    const [top] = search.search(query, 3);
    expect(top?.card.name).toBe(name);
    expect(top?.best_skill_id).toBe(skillId);
  });

  it("a query's run of two characters does not match a card holding only one of them", () => {
    // 猫 is on the vet's card; 熊猫 (panda) is another word, and no card holds it.
    expect(search.find("熊猫", 3)).toEqual({ hits: [], total: 0 });
  });
});
