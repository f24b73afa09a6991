// The semantic half's failure log: the last embeddings failure for indexStats, and a console line once per
// place and kind of failure until that place works again (an outage logs once, not per search or alarm).
// Imported by card-embeddings.ts and embed-alarm.ts; covered by test/worker/directory/hybrid.test.ts.

export type FailurePlace = "publish" | "search" | "alarm";

export class EmbedFailureLog {
  /** Failure kinds logged since the last success of their kind. */
  private readonly logged = new Set<string>();
  /** The last failure since the object started or the model changed ("where: message"). */
  lastError: string | null = null;

  reset(): void {
    this.logged.clear();
    this.lastError = null;
  }

  failed(where: FailurePlace, model: string | null, consequence: string, err: unknown): void {
    const name = err instanceof Error ? err.name : typeof err;
    this.lastError = `${where}: ${messageOf(err)}`;
    const kind = `${where}/${name}`;
    if (this.logged.has(kind)) return;
    this.logged.add(kind);
    console.error(`Directory ${where}: embeddings model ${model ?? "(none)"} failed (${consequence}); further ${name}s here are not logged until it works again:`, err);
  }

  succeeded(where: FailurePlace): void {
    for (const kind of this.logged) if (kind.startsWith(`${where}/`)) this.logged.delete(kind);
  }
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
