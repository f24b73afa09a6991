// What a card contributes to the directory's search: its units (one per skill, or the card whole for a
// skill-less one), each a weighted bag of terms. Imported by term-index.ts; platform-free. Covered by
// test/worker/directory/ranking.test.ts.
import { tokenize } from "./tokenize.ts";
import type { AgentCard } from "./card.ts";

// A card's text also indexes CJK characters one by one, so one-character queries find them (tokenize.ts).
const cardTerms = (text: string) => tokenize(text, { characters: true });

const WEIGHT = { skillName: 3, tags: 2, skillDescription: 1, examples: 1, agentDescription: 0.5, agentName: 1 };

/**
 * The unit of ranking is a skill, because a search answers "which agent, and which of its skills". Its
 * text is its own fields plus its agent's name and description, weighted so the skill's name and tags
 * count most. `skill` is the position in card.skills, -1 for a skill-less card (one unit, the card).
 */
export interface Unit { skill: number; length: number; tfs: Map<string, number> }

type Field = [terms: string[], weight: number];

/** A card's units: its skills in order, or one unit for a skill-less card. */
export function cardUnits(card: AgentCard): Unit[] {
  // The agent's name and description are in every one of its units: tokenised once per card.
  const name = cardTerms(card.name);
  const description = cardTerms(card.description);
  // A skill-less agent's description is all it offers; weighting it as a skill's keeps it findable.
  if (card.skills.length === 0) return [unit(-1, [[name, WEIGHT.agentName], [description, WEIGHT.skillDescription]])];
  return card.skills.map((skill, i) =>
    unit(i, [
      [name, WEIGHT.agentName],
      [description, WEIGHT.agentDescription],
      [cardTerms(skill.name), WEIGHT.skillName],
      [cardTerms(skill.description), WEIGHT.skillDescription],
      // Cards come through parseCard, but stored JSON from older versions may lack the optional lists.
      ...(skill.tags ?? []).map((tag): Field => [cardTerms(tag), WEIGHT.tags]),
      ...(skill.examples ?? []).map((example): Field => [cardTerms(example), WEIGHT.examples]),
    ]),
  );
}

function unit(skill: number, fields: readonly Field[]): Unit {
  const tfs = new Map<string, number>();
  let length = 0;
  for (const [terms, weight] of fields) {
    for (const term of terms) {
      tfs.set(term, (tfs.get(term) ?? 0) + weight);
      length += weight;
    }
  }
  return { skill, length, tfs };
}
