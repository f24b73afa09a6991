// The persisted units a TermIndex starts from (term-index.ts loadBase, index-store.ts load), and the
// check that they hold together. Platform-free; covered by test/worker/directory/persisted-index.test.ts.

/** Persisted index data that does not hold together: the caller rebuilds from the cards. */
export class IndexFormatError extends Error {}

/** Unit arrays by id (agent -1: a dead unit) and agent names by ordinal. */
export interface BaseUnits { count: number; agent: Int32Array; skill: Int16Array; length: Float64Array; names: string[] }

/**
 * Per agent, its first live unit and how many it has (0: none). Throws IndexFormatError unless the units
 * hold together: agents in range, lengths sane, each agent's units consecutive with skill positions 0, 1,
 * … (or one unit of skill -1, a skill-less card). (TermIndex.loadBase checks the names are unique.)
 */
export function agentRanges(units: BaseUnits): { first: Int32Array; count: Int32Array } {
  const first = new Int32Array(units.names.length);
  const count = new Int32Array(units.names.length);
  for (let id = 0; id < units.count; id++) {
    const agent = units.agent[id]!;
    if (agent === -1) continue;
    const length = units.length[id]!;
    if (agent < 0 || agent >= units.names.length || !(length >= 0 && length < 2 ** 40)) throw new IndexFormatError(`unit ${id} is malformed`);
    const position = count[agent]!;
    const skill = units.skill[id]!;
    if (position === 0) first[agent] = id;
    else if (first[agent]! + position !== id || units.skill[id - 1]! < 0) throw new IndexFormatError(`units of agent ${agent} are not consecutive`);
    if (skill !== position && !(skill === -1 && position === 0)) throw new IndexFormatError(`unit ${id} has skill ${skill} at position ${position}`);
    count[agent] = position + 1;
  }
  return { first, count };
}
