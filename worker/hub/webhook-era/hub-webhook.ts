// Webhook era: a POST to /inbox/{id}/hooks/{sub-path}, once its token, sub-path and size passed
// (inbox-routes.ts), is one of what hubs that push have sent — the registration probe (answered, never
// stored; its prefix learned), a 1.x body carrying a signed envelope (verified like a posted one), a
// 2.x flat body (stored and bridged: hub-bridge.ts) — or any other webhook body, stored as it came.
// Today's hub pushes nothing (pull mode: ../hub-pull.ts). Covered by test/worker/hooks.test.ts and
// test/worker/hub-bridge.test.ts.
import { parseEnvelope } from "../../../protocol/index.ts";
import type { Answer, IntakeContext } from "../../intake/intake-context.ts";
import { acceptHookEnvelope, acceptOpaqueHook } from "../../intake/intake.ts";
import type { HookArrival } from "../../intake/intake.ts";
import type { HubLink } from "../hub-link.ts";
import { classifyHookBody } from "./hook-body.ts";

export type HookAnswer = { status: 200; body: { ok: true; probe: true } } | { status: 202; body: Answer };

export async function acceptHookBody(hook: HookArrival, intake: () => IntakeContext, hub: HubLink): Promise<HookAnswer> {
  const shape = classifyHookBody(hook.body);
  // The hub probes both sub-paths with {"probe": true} at registration; a probe is never stored.
  if (shape.kind === "probe") {
    hub.learnPrefix(hook.subpath);
    return { status: 200, body: { ok: true, probe: true } };
  }
  const ctx = intake();
  if (shape.kind === "envelope") return { status: 202, body: await acceptHookEnvelope(ctx, parseEnvelope(shape.envelope), hook) };
  const flat = await hub.acceptFlatBody(hook, ctx.nowMs);
  return { status: 202, body: flat ?? (await acceptOpaqueHook(ctx, hook)) };
}
