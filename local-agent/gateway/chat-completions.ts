// Runs a delegated task on this agent's own gateway through /v1/chat/completions (docs/openclaw-setup.md,
// "Chat completions for delegated tasks").
// A stable `user` per delegated conversation makes the gateway keep its history.

export interface ChatTarget {
  port: number;
  authToken: string | null;
  /** "openclaw" (default agent) or "openclaw/<agentId>". */
  model: string;
}

/** What the gateway said, from its JSON error shapes or its text: kept so a failure can be acted on. */
export function gatewayErrorText(body: string): string {
  let said: unknown = body;
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    const error = parsed.error;
    said = typeof error === "string" ? error : typeof (error as { message?: unknown })?.message === "string" ? (error as { message: string }).message : parsed.message ?? body;
  } catch {
    // Plain text ("Unauthorized", "Not Found").
  }
  return String(said).replace(/\s+/g, " ").trim().slice(0, 300);
}

export type ChatOutcome = { ok: true; text: string } | { ok: false; reason: string };

export const CHAT_COMPLETIONS_HINT =
  "chat completions are disabled on this agent's gateway: set gateway.http.endpoints.chatCompletions.enabled to true in openclaw.json";

export async function runChat(target: ChatTarget, user: string, message: string, timeoutMs: number): Promise<ChatOutcome> {
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${target.port}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(target.authToken ? { authorization: `Bearer ${target.authToken}` } : {}) },
      body: JSON.stringify({ model: target.model, user, messages: [{ role: "user", content: message }] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    return { ok: false, reason: `the agent's gateway did not answer: ${(err as Error).message}` };
  }
  const raw = await res.text().catch(() => "");
  const said = gatewayErrorText(raw);
  const quoted = said ? `: ${said}` : "";
  if (res.status === 404) return { ok: false, reason: `${CHAT_COMPLETIONS_HINT} (the gateway answered 404${quoted})` };
  if (res.status === 401 || res.status === 403) {
    return { ok: false, reason: `the agent's gateway refused its gateway token (${res.status}${quoted}); its owner should run clawrelay doctor` };
  }
  if (!res.ok) return { ok: false, reason: `the agent's gateway answered ${res.status}${quoted}` };
  let content: unknown;
  try {
    content = (JSON.parse(raw) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    content = undefined;
  }
  if (typeof content !== "string") return { ok: false, reason: `the agent's gateway answered ${res.status} without a reply${quoted ? ` (${said})` : ""}` };
  return { ok: true, text: content };
}

/** Convention: a reply whose first line starts with "INPUT_REQUIRED:" asks the requester for more. */
export function taskStatusOf(reply: string): { status: "completed" | "input-required"; text: string } {
  const match = /^\s*INPUT_REQUIRED:\s*/i.exec(reply);
  return match ? { status: "input-required", text: reply.slice(match[0].length) } : { status: "completed", text: reply };
}
