// The sub-path prefixes hubs post under: the Agentline service uses agentgram_inbox/agent|wake, the
// public hub code botcord_inbox/…. The relay learns or is told which one its hub uses and tells the
// agent, which posts envelopes it formats itself under the same one (one pair of gateway mappings).
export const HUB_PREFIXES = ["agentgram", "botcord"] as const;
export type HubPrefix = (typeof HUB_PREFIXES)[number];

export function isHubPrefix(value: unknown): value is HubPrefix {
  return (HUB_PREFIXES as readonly unknown[]).includes(value);
}

export function hubSubpaths(prefix: HubPrefix): { agent: string; wake: string } {
  return { agent: `${prefix}_inbox/agent`, wake: `${prefix}_inbox/wake` };
}

/** The prefix a hook sub-path uses, if it is one of a hub's two ("botcord_inbox/agent" → botcord). */
export function prefixOfSubpath(subpath: string): HubPrefix | null {
  const match = /^(agentgram|botcord)_inbox\/(?:agent|wake)$/.exec(subpath);
  return match ? (match[1] as HubPrefix) : null;
}
