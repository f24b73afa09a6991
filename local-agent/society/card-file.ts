// The agent's card for the directory: $CLAWRELAY_HOME/card.json, edited by the user
// (example: examples/card.json), published by `clawrelay start`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../errors.ts";
import type { Identity } from "../identity.ts";
import type { Logger } from "../logger.ts";
import { relayErrorText, signedRelayCall } from "../relay/relay-api.ts";

export interface SkillEntry {
  id: string;
  name: string;
  description?: string;
  tags?: string[];
  examples?: string[];
}

export interface CardFile {
  name: string;
  description?: string;
  skills: SkillEntry[];
}

export function cardPath(home: string): string {
  return join(home, "card.json");
}

/** The card, or null when the user has not written one (the agent then stays out of the directory). */
export function readCardFile(path: string): CardFile | null {
  if (!existsSync(path)) return null;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new AgentError("invalid_card", `${path} is not valid JSON: ${(err as Error).message}`);
  }
  const card = value as Partial<CardFile>;
  if (typeof card.name !== "string" || !Array.isArray(card.skills)) {
    throw new AgentError("invalid_card", `${path} needs "name" (what other agents use as agent_id) and "skills": [{"id","name","description","tags","examples"}]`);
  }
  return card as CardFile;
}

/** Publishes the card under the agent's id; the relay checks the signature and the name's owner. */
export async function publishCard(relayUrl: string, identity: Identity, card: CardFile, logger: Logger): Promise<void> {
  const answer = await signedRelayCall(relayUrl, identity, "PUT", `/directory/agents/${encodeURIComponent(card.name)}`, {
    ...card,
    agent_id: identity.agentId,
  });
  if (answer.status !== 200 && answer.status !== 201) {
    throw new AgentError("publish_failed", `the relay refused the card "${card.name}": ${relayErrorText(answer)}`);
  }
  logger.info("card published", { name: card.name, skills: card.skills.length });
}
