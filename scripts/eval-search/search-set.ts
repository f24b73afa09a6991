// A search set (the shape `npm run eval:search -- FILE` reads): `agents` as directory cards, `queries`
// of `{q, agent, skill}` naming the agent (and its skill) that should come first, and `negatives` that no
// agent serves, which should come back empty. Pure parsing: every refusal names the field to fix. Used by
// scripts/eval-search.ts; covered by test/node/eval-search-metrics.test.ts.
import { readFile } from "node:fs/promises";
import { parseCard } from "../../worker/directory/card.ts";
import type { AgentCard } from "../../worker/directory/card.ts";

/** The relay refuses longer queries (worker/directory/routes.ts MAX_QUERY_LENGTH). */
export const MAX_QUERY_CHARS = 500;

export interface SearchQuery {
  q: string;
  agent: string;
  /** The skill that should be `best_skill_id`; null for an agent published without skills. */
  skill: string | null;
}

export interface SearchSet {
  /** Parsed as the relay parses a publish, each with a synthetic ag_ id (no agent behind it). */
  cards: AgentCard[];
  queries: SearchQuery[];
  negatives: string[];
}

/** A synthetic agent id for a set's card, published without an agent behind it (ag_ and 12 hex digits, as agentIdFor makes). */
export const setAgentId = (i: number) => `ag_e${i.toString(16).padStart(11, "0")}`;

/** A set that cannot be used as it is; the message names the field. */
export class SearchSetError extends Error {}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function queryText(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim() === "" || value.length > MAX_QUERY_CHARS) {
    throw new SearchSetError(`${field} must be a non-empty string of at most ${MAX_QUERY_CHARS} characters`);
  }
  return value;
}

function parseCards(value: unknown): AgentCard[] {
  if (!Array.isArray(value) || value.length === 0) throw new SearchSetError(`"agents" must be a non-empty array of agent cards`);
  const seen = new Set<string>();
  return value.map((raw, i) => {
    const name = isRecord(raw) ? raw.name : undefined;
    if (typeof name !== "string") throw new SearchSetError(`agents[${i}].name must be the agent's directory name (a string)`);
    if (seen.has(name)) throw new SearchSetError(`agents[${i}].name "${name}" appears twice; each agent needs its own name`);
    seen.add(name);
    try {
      return parseCard({ ...raw, agent_id: setAgentId(i) }, name);
    } catch (error) {
      // parseCard's refusals are RelayErrors naming the field within the card ("skills[0].id must be …").
      throw new SearchSetError(`agents[${i}] ("${name}"): ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

function parseQuery(raw: unknown, i: number, cards: ReadonlyMap<string, AgentCard>): SearchQuery {
  if (!isRecord(raw)) throw new SearchSetError(`queries[${i}] must be an object {q, agent, skill}`);
  const q = queryText(raw.q, `queries[${i}].q`);
  const card = typeof raw.agent === "string" ? cards.get(raw.agent) : undefined;
  if (!card) throw new SearchSetError(`queries[${i}].agent must name one of the set's agents, not ${JSON.stringify(raw.agent ?? null)}`);
  const ids = card.skills.map((skill) => skill.id);
  if (ids.length === 0) {
    if (raw.skill !== undefined && raw.skill !== null) throw new SearchSetError(`queries[${i}].skill must be null: "${card.name}" has no skills`);
    return { q, agent: card.name, skill: null };
  }
  if (typeof raw.skill !== "string" || !ids.includes(raw.skill)) {
    throw new SearchSetError(`queries[${i}].skill must be one of "${card.name}"'s skill ids (${ids.join(", ")}), not ${JSON.stringify(raw.skill ?? null)}`);
  }
  return { q, agent: card.name, skill: raw.skill };
}

/** The set in `value` (a parsed JSON document), or a SearchSetError naming what to fix. */
export function parseSearchSet(value: unknown): SearchSet {
  if (!isRecord(value)) throw new SearchSetError(`the set must be a JSON object {"agents": [...], "queries": [...], "negatives": [...]}`);
  const cards = parseCards(value.agents);
  const byName = new Map(cards.map((card) => [card.name, card]));
  if (!Array.isArray(value.queries) || value.queries.length === 0) throw new SearchSetError(`"queries" must be a non-empty array of {q, agent, skill}`);
  const queries = value.queries.map((raw, i) => parseQuery(raw, i, byName));
  const negativesIn = value.negatives ?? [];
  if (!Array.isArray(negativesIn)) throw new SearchSetError(`"negatives" must be an array of queries no agent serves`);
  const negatives = negativesIn.map((raw, i) => queryText(raw, `negatives[${i}]`));
  return { cards, queries, negatives };
}

/** Reads and parses the set at `file`; a missing file or broken JSON is a SearchSetError too. */
export async function readSearchSet(file: string): Promise<SearchSet> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new SearchSetError(`cannot read the set ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SearchSetError(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return parseSearchSet(value);
  } catch (error) {
    if (error instanceof SearchSetError) throw new SearchSetError(`${file}: ${error.message}`);
    throw error;
  }
}
