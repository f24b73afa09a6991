// An agent card as published to the directory: A2A's skill shape plus the agent's ag_ id.
// Pure validation; every refusal names the field to fix.
import { RelayError, isAgentId } from "../../protocol/index.ts";

export interface SkillCard { id: string; name: string; description: string; tags: string[]; examples: string[] }
export interface AgentCard { name: string; agent_id: string; description: string; skills: SkillCard[] }

export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{1,62}$/;
const SKILL_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_SKILLS = 32;

const bad = (message: string) => new RelayError(400, "invalid_card", message);

function text(value: unknown, field: string, max: number, required = true): string {
  if (value === undefined && !required) return "";
  if (typeof value !== "string" || value.length > max || (required && value.trim() === "")) {
    throw bad(`${field} must be a ${required ? "non-empty " : ""}string of at most ${max} characters`);
  }
  return value;
}

function list(value: unknown, field: string, maxItems: number, maxLength: number): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > maxItems) throw bad(`${field} must be an array of at most ${maxItems} strings`);
  return value.map((item, i) => text(item, `${field}[${i}]`, maxLength));
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad(`${field} must be an object`);
  return value as Record<string, unknown>;
}

export function parseCard(value: unknown, name: string): AgentCard {
  const body = record(value, "the card");
  if (!NAME_PATTERN.test(name)) throw bad("the name must be 2–63 characters of a-z, 0-9, - and _, starting with a letter or digit");
  if (body.name !== undefined && body.name !== name) throw bad(`the card's name "${String(body.name)}" differs from the URL's "${name}"`);
  if (!isAgentId(body.agent_id)) throw bad("agent_id must be the publishing agent's ag_ id");
  const skillsIn = body.skills === undefined ? [] : body.skills;
  if (!Array.isArray(skillsIn) || skillsIn.length > MAX_SKILLS) throw bad(`skills must be an array of at most ${MAX_SKILLS} skills`);
  const skills = skillsIn.map((raw, i): SkillCard => {
    const skill = record(raw, `skills[${i}]`);
    if (typeof skill.id !== "string" || !SKILL_ID_PATTERN.test(skill.id)) throw bad(`skills[${i}].id must be 1–64 characters of A-Z, a-z, 0-9, _ . -`);
    return {
      id: skill.id,
      name: text(skill.name, `skills[${i}].name`, 200),
      description: text(skill.description, `skills[${i}].description`, 2000, false),
      tags: list(skill.tags, `skills[${i}].tags`, 20, 50),
      examples: list(skill.examples, `skills[${i}].examples`, 10, 500),
    };
  });
  if (new Set(skills.map((s) => s.id)).size !== skills.length) throw bad("skill ids must be unique within a card");
  return { name, agent_id: body.agent_id, description: text(body.description, "description", 2000, false), skills };
}
