// The units and agents a TermIndex holds (term-index.ts): per unit id its agent, skill and length, per
// agent ordinal its name and its run of unit ids, and how ids are handed out. Platform-free; covered by
// test/worker/directory/ranking.test.ts and persisted-index.test.ts.
//
// Flat typed arrays, so the scoring loop (search-scratch.ts) reads flat memory and an index of 100,000
// cards needs no object per card. An agent's live units have consecutive ids; ids are never reused (a
// replaced card's units die and the new ones are appended), so postings persisted before a change stay
// valid and only need their dead entries skipped.
import { IndexFormatError, agentRanges } from "./base-units.ts";
import type { BaseUnits } from "./base-units.ts";
import type { Unit } from "./card-units.ts";

/** Read by TermIndex and SearchScratch; changed only by its own methods (arrays are replaced as they grow). */
export class UnitTable {
  // Per unit id. agent -1: a dead unit (its card replaced or removed).
  unitAgent: Int32Array = new Int32Array(1024);
  /** Position in card.skills (ties between an agent's skills go to the first), -1 for a skill-less agent. */
  unitSkill: Int16Array = new Int16Array(1024);
  /** Field-weighted token count: BM25's document length. */
  unitLength: Float64Array = new Float64Array(1024);
  /** Ids handed out, dead ones included: the id space the arrays span. */
  nextUnit = 0;
  liveUnits = 0;
  totalLength = 0;

  // Per agent ordinal; a removed agent keeps its ordinal with no units (a re-publish takes it again).
  names: string[] = [];
  private readonly ordinals = new Map<string, number>();
  agentFirst: Int32Array = new Int32Array(256);
  agentUnits: Int32Array = new Int32Array(256);
  liveAgents = 0;

  /**
   * Takes the persisted units' arrays over (an empty table only). Throws IndexFormatError when they do
   * not hold together (base-units.ts agentRanges, or a name stored twice).
   */
  load(units: BaseUnits): void {
    if (this.nextUnit !== 0 || this.names.length !== 0) throw new Error("TermIndex.loadBase: the index is not empty");
    const { first, count } = agentRanges(units);
    units.names.forEach((name, agent) => this.ordinals.set(name, agent));
    if (this.ordinals.size !== units.names.length) throw new IndexFormatError("an agent name is stored twice");
    this.names = units.names;
    [this.agentFirst, this.agentUnits] = [first, count];
    this.growAgents(Math.max(256, first.length));
    for (const n of count) if (n > 0) this.liveAgents++;
    const { agent, skill, length } = units;
    if (agent.length !== units.count || skill.length !== units.count || length.length !== units.count) throw new Error("TermIndex.loadBase: arrays of another length");
    [this.unitAgent, this.unitSkill, this.unitLength] = [agent, skill, length];
    this.growUnits(Math.max(1024, units.count));
    for (let id = 0; id < units.count; id++) {
      if (agent[id]! < 0) continue;
      this.liveUnits++;
      this.totalLength += length[id]!;
    }
    this.nextUnit = units.count;
  }

  ordinalOf(name: string): number | undefined {
    return this.ordinals.get(name);
  }

  /** A new ordinal for `name`, with no units yet. */
  addAgent(name: string): number {
    const agent = this.names.length;
    this.growAgents(agent + 1);
    this.names.push(name);
    this.ordinals.set(name, agent);
    return agent;
  }

  /** Gives agent `agent` (without live units) `units` under new ids; returns the first. */
  append(agent: number, units: readonly Unit[]): number {
    this.growUnits(this.nextUnit + units.length);
    const first = this.nextUnit;
    this.agentFirst[agent] = first;
    this.agentUnits[agent] = units.length;
    this.liveAgents++;
    for (const { skill, length } of units) {
      const id = this.nextUnit++;
      this.unitAgent[id] = agent;
      this.unitSkill[id] = skill;
      this.unitLength[id] = length;
      this.liveUnits++;
      this.totalLength += length;
    }
    return first;
  }

  /** Kills the live units of `agent`, and returns their ids (`count` 0: it had none). */
  kill(agent: number): { first: number; count: number } {
    const first = this.agentFirst[agent]!;
    const count = this.agentUnits[agent]!;
    if (count === 0) return { first, count };
    for (let id = first; id < first + count; id++) {
      this.unitAgent[id] = -1;
      this.liveUnits--;
      this.totalLength -= this.unitLength[id]!;
    }
    this.agentUnits[agent] = 0;
    this.liveAgents--;
    return { first, count };
  }

  /** Unit arrays (views, valid until the next change) and agent names by ordinal. */
  units(): BaseUnits {
    const count = this.nextUnit;
    return { count, agent: this.unitAgent.subarray(0, count), skill: this.unitSkill.subarray(0, count), length: this.unitLength.subarray(0, count), names: this.names };
  }

  /** Rough bytes held: the arrays and names (V8 overheads estimated). */
  memoryBytes(): number {
    let bytes = [this.unitAgent, this.unitSkill, this.unitLength, this.agentFirst, this.agentUnits].reduce((sum, array) => sum + array.byteLength, 0);
    for (const name of this.names) bytes += 2 * name.length + 64;
    return bytes;
  }

  /** Room for `needed` units. */
  private growUnits(needed: number): void {
    if (needed <= this.unitAgent.length) return;
    const size = capacity(this.unitAgent.length, needed);
    [this.unitAgent, this.unitSkill, this.unitLength] = [grown(this.unitAgent, size), grown(this.unitSkill, size), grown(this.unitLength, size)];
  }

  private growAgents(needed: number): void {
    if (needed <= this.agentFirst.length) return;
    const size = capacity(this.agentFirst.length, needed);
    [this.agentFirst, this.agentUnits] = [grown(this.agentFirst, size), grown(this.agentUnits, size)];
  }
}

const capacity = (size: number, needed: number): number => (size >= needed ? size : capacity(Math.max(1, 2 * size), needed));

function grown<T extends Int32Array | Int16Array | Float64Array>(old: T, size: number): T {
  const array = new (old.constructor as new (length: number) => T)(size);
  array.set(old);
  return array;
}
