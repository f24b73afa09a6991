// The real gateway (2026.9.6) does not replace a plugin while an agent run uses it: a config change
// saved then is logged as refused ("still has active retained work") and never retried, and
// `openclaw plugins reload` answers the same until the run ends. These helpers let an interop test
// see a refusal and do what doctor advises: reload once the run is over.
import type { CliResult, RealGateway } from "./real-gateway.ts";

export const REFUSED = "still has active retained work";

/** How many refusals the gateway's log holds so far: compare before and after a change. */
export function refusalsLogged(gateway: RealGateway): number {
  return gateway.logTail(2_000).split(REFUSED).length - 1;
}

/**
 * `openclaw plugins reload <id>`, again every 2 s while the gateway answers that a run holds the
 * plugin; `refused` counts those answers. Rejects on any other failure or after `timeoutMs`.
 */
export async function reloadWhenFree(gateway: RealGateway, id: string, timeoutMs = 120_000): Promise<{ refused: number; result: CliResult }> {
  const deadline = Date.now() + timeoutMs;
  for (let refused = 0; ; refused++) {
    const result = await gateway.cli(["plugins", "reload", id], 120_000);
    if (result.code === 0) return { refused, result };
    const said = `${result.stdout}\n${result.stderr}`;
    if (!said.includes(REFUSED) || Date.now() > deadline) throw new Error(`openclaw plugins reload ${id} failed (exit ${result.code}):\n${said}`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}
