// Card builders for the directory's ranking tests (test/worker/directory/ranking*.test.ts): a skill and an
// agent in one line each, the agent id made from the name so every card has its own.
import type { AgentCard, SkillCard } from "../../../worker/directory/card.ts";

export const skill = (id: string, name: string, description: string, tags: string[] = [], examples: string[] = []): SkillCard =>
  ({ id, name, description, tags, examples });

export const agent = (name: string, description: string, skills: SkillCard[]): AgentCard =>
  ({ name, agent_id: `ag_${name.replaceAll("-", "_")}`, description, skills });
