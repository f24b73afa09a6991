// The Directory alarm's embedding work: a batch of pending cards in one call; when that call fails, its
// cards one by one, each failure followed by a probe of the model with a short text. A card that fails
// while the probe answers is refused for its own content: it is *set aside* with the model's reason (found
// by its words only, holding up no one). A failing probe is an outage: nothing is set aside, the cards stay
// pending and the alarm waits 60 s, doubling to an hour, until a call works. Set-aside cards are tried
// again once a day (EMBED_RETRY.setAsideMs), when republished with changes, or under another model.
// Imported by card-embeddings.ts; covered by test/worker/directory/hybrid-failures.test.ts.
import type { AgentCard } from "../card.ts";
import { EMBED_BATCH, takeBatch, vectorsByCard } from "./embed-queue.ts";
import { EMBED_RETRY, PROBE_TEXT, embedWithin, outageDelayMs } from "./embed-calls.ts";
import { EmbedFailureLog, messageOf } from "./embed-failure-log.ts";
import { cardTexts } from "./semantic-index.ts";
import type { EmbeddingSource } from "./semantic-index.ts";
import { quantise } from "./vector-codec.ts";
import type { CardVectors } from "./vector-codec.ts";
import type { VectorStore } from "./vector-store.ts";

/** What the alarm's work needs of the semantic half it runs for. */
export interface EmbedAlarmHost {
  readonly store: VectorStore;
  readonly log: EmbedFailureLog;
  /** The source, while it is still the one the run started with. */
  current(): EmbeddingSource | null;
  /** Keeps `card`'s vectors made by `source`, unless the source changed or the card was republished meanwhile. */
  keep(source: EmbeddingSource, card: AgentCard, vectors: CardVectors): void;
  deadlineMs(): number;
}

export type AlarmOutcome = "done" | "more" | "failed";

export class EmbedAlarm {
  /** Failed runs in a row (an outage): the next pause grows with it; a working call resets it. */
  private outages = 0;
  /** Until then the alarm does not try pending cards (set by an outage; 0 when none). */
  private retryAt = 0;

  private readonly host: EmbedAlarmHost;

  constructor(host: EmbedAlarmHost) {
    this.host = host;
  }

  reset(): void {
    this.outages = 0;
    this.retryAt = 0;
  }

  /** When the alarm should next run: now (or after the outage pause) for pending cards, else when the oldest set-aside card is due; null: never. */
  nextAt(now: number): number | null {
    const { pending } = this.host.store.counts;
    // An outage's pause holds for the set-aside cards too: a search must not bring the alarm forward.
    if (pending > 0) return Math.max(now, this.retryAt);
    const oldestAt = this.host.store.oldestSetAsideAt();
    return oldestAt === null ? null : Math.max(now, this.retryAt, oldestAt + EMBED_RETRY.setAsideMs);
  }

  /** One run: a batch of pending cards, or else the set-aside cards due again. */
  async run(source: EmbeddingSource, maxCards: number = EMBED_BATCH.cards): Promise<AlarmOutcome> {
    const { store } = this.host;
    const batch = takeBatch(store.pending(maxCards), maxCards);
    let outcome: AlarmOutcome;
    if (batch.cards.length > 0) {
      try {
        const answer = await embedWithin(source.embed, batch.texts, this.host.deadlineMs());
        if (answer.length !== batch.texts.length) throw new Error(`embedding model ${source.model} answered ${answer.length} vectors for ${batch.texts.length} texts`);
        for (const { card, vectors } of vectorsByCard(batch, answer)) this.host.keep(source, card, quantise(vectors));
        outcome = "more";
      } catch (err) {
        // One card may spoil the batch: each is tried alone, so only a card the model refuses stays behind.
        outcome = await this.alone(source, batch.cards.slice(0, EMBED_RETRY.alonePerRun), err);
      }
    } else {
      const due = store.setAsideDue(Date.now() - EMBED_RETRY.setAsideMs, EMBED_RETRY.alonePerRun);
      if (due.length === 0) return "done";
      outcome = await this.alone(source, due, null);
    }
    // The counts follow every write; a recount after each run also mends any drift (~ms at 100,000 cards).
    store.recount();
    if (outcome === "failed") return outcome;
    this.reset();
    this.host.log.succeeded("alarm");
    const now = Date.now();
    const next = this.nextAt(now);
    return next !== null && next <= now ? "more" : "done";
  }

  /** The alarm's pause before the next try after an outage (60 s doubling to an hour). */
  get retryDelayMs(): number {
    return outageDelayMs(Math.max(1, this.outages));
  }

  /**
   * Tries `cards` one by one. A card that fails is set aside only if a probe right after it answers (the
   * model works, this card does not); a failing probe is an outage and ends the run with every card
   * untouched. "failed" on an outage, "more" otherwise.
   */
  private async alone(source: EmbeddingSource, cards: AgentCard[], batchError: unknown): Promise<AlarmOutcome> {
    const { store, log } = this.host;
    for (const card of cards) {
      if (this.host.current() !== source) return "more";
      try {
        const vectors = await embedWithin(source.embed, cardTexts(card), this.host.deadlineMs());
        if (vectors.length !== cardTexts(card).length) throw new Error(`embedding model ${source.model} answered ${vectors.length} vectors for ${cardTexts(card).length} texts`);
        this.host.keep(source, card, quantise(vectors));
        continue;
      } catch (err) {
        const probe = await this.modelAnswers(source);
        if (probe !== true) return this.outage(source, batchError ?? err, probe, cards.length);
        if (this.host.current() === source && store.stillStored(card)) {
          store.setAside(card.name, messageOf(err), Date.now());
          log.failed("alarm", source.model, `${card.name} is set aside, found by its words only, and tried again in a day or when republished with changes`, err);
        }
      }
    }
    return "more";
  }

  /** true when the model embeds PROBE_TEXT now; else its error. */
  private async modelAnswers(source: EmbeddingSource): Promise<true | unknown> {
    try {
      const [vector] = await embedWithin(source.embed, [PROBE_TEXT], this.host.deadlineMs());
      return vector ? true : new Error(`embedding model ${source.model} answered no vector for the probe`);
    } catch (err) {
      return err;
    }
  }

  private outage(source: EmbeddingSource, err: unknown, probeError: unknown, cards: number): AlarmOutcome {
    this.outages++;
    this.retryAt = Date.now() + this.retryDelayMs;
    this.host.log.failed("alarm", source.model, `an outage, the probe failed too (${messageOf(probeError)}); ${cards} pending cards kept and tried again in ${this.retryDelayMs / 1000} s`, err);
    return "failed";
  }
}
