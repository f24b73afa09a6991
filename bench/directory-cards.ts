// Synthetic but realistic agent cards and search queries for bench/directory-bench.ts, from a fixed
// seed: the same directory and queries on every run. Unlike bench/search-bench.ts's pseudo-words,
// cards use real English topic words, so common words ("data", "report", "api") match thousands of
// skills, as they would in a real directory, and descriptions carry stopwords the tokeniser drops.
import type { CardFile, SkillEntry } from "../local-agent/society/card-file.ts";
import { rng } from "./seeded-random.ts";

/** A topic: the words its skills are named, described and tagged with. 40 topics, ~12 words each. */
const TOPICS: readonly (readonly string[])[] = [
  ["weather", "forecast", "temperature", "rain", "storm", "wind", "humidity", "climate", "snow", "alerts", "radar", "sunrise"],
  ["translate", "translation", "language", "spanish", "french", "german", "japanese", "chinese", "localization", "subtitles", "dictionary", "grammar"],
  ["code", "review", "refactor", "python", "typescript", "rust", "bug", "tests", "lint", "repository", "pull", "commit"],
  ["calendar", "meeting", "schedule", "reminder", "appointment", "availability", "timezone", "invite", "agenda", "booking", "event", "deadline"],
  ["email", "inbox", "reply", "draft", "newsletter", "spam", "thread", "attachment", "followup", "mailing", "outreach", "signature"],
  ["invoice", "accounting", "tax", "expense", "receipt", "payroll", "ledger", "budget", "bookkeeping", "vat", "reconciliation", "billing"],
  ["stock", "market", "trading", "portfolio", "crypto", "bitcoin", "dividend", "earnings", "price", "exchange", "investment", "options"],
  ["travel", "flight", "hotel", "itinerary", "visa", "airport", "train", "booking", "luggage", "destination", "trip", "rental"],
  ["recipe", "cooking", "meal", "nutrition", "ingredients", "diet", "vegan", "calories", "grocery", "baking", "kitchen", "menu"],
  ["fitness", "workout", "running", "training", "exercise", "yoga", "strength", "cardio", "steps", "sleep", "heart", "coach"],
  ["legal", "contract", "clause", "compliance", "gdpr", "privacy", "policy", "lawyer", "agreement", "terms", "license", "regulation"],
  ["image", "photo", "resize", "edit", "background", "generation", "illustration", "logo", "thumbnail", "filter", "upscale", "crop"],
  ["video", "editing", "transcription", "youtube", "clip", "caption", "streaming", "render", "animation", "podcast", "audio", "music"],
  ["research", "paper", "citation", "arxiv", "literature", "survey", "abstract", "journal", "academic", "review", "bibliography", "science"],
  ["summary", "summarize", "notes", "document", "pdf", "extract", "highlights", "digest", "article", "report", "outline", "tldr"],
  ["database", "sql", "query", "postgres", "schema", "migration", "index", "table", "backup", "replication", "mysql", "sqlite"],
  ["server", "deploy", "kubernetes", "docker", "monitoring", "logs", "uptime", "incident", "cloud", "infrastructure", "terraform", "scaling"],
  ["security", "vulnerability", "scan", "password", "encryption", "audit", "phishing", "firewall", "threat", "malware", "pentest", "secrets"],
  ["customer", "support", "ticket", "helpdesk", "chat", "faq", "refund", "complaint", "feedback", "satisfaction", "escalation", "sla"],
  ["sales", "lead", "crm", "pipeline", "prospect", "deal", "quote", "proposal", "demo", "churn", "revenue", "forecast"],
  ["marketing", "seo", "campaign", "social", "twitter", "instagram", "content", "ads", "analytics", "brand", "copywriting", "audience"],
  ["recruiting", "resume", "interview", "candidate", "job", "hiring", "onboarding", "salary", "linkedin", "screening", "offer", "talent"],
  ["education", "tutor", "math", "homework", "quiz", "lesson", "exam", "student", "course", "flashcards", "physics", "chemistry"],
  ["health", "symptom", "medication", "doctor", "appointment", "medical", "pharmacy", "diagnosis", "wellness", "mental", "therapy", "clinic"],
  ["real", "estate", "property", "rent", "mortgage", "apartment", "listing", "landlord", "tenant", "valuation", "house", "lease"],
  ["shopping", "product", "price", "deal", "coupon", "comparison", "order", "delivery", "tracking", "amazon", "checkout", "wishlist"],
  ["news", "headlines", "politics", "briefing", "daily", "rss", "breaking", "topic", "sources", "factcheck", "opinion", "local"],
  ["spreadsheet", "excel", "csv", "chart", "pivot", "formula", "dashboard", "visualization", "data", "cleaning", "statistics", "plot"],
  ["writing", "blog", "essay", "story", "poem", "editor", "proofread", "tone", "rewrite", "style", "novel", "fiction"],
  ["home", "automation", "lights", "thermostat", "smart", "sensor", "camera", "alarm", "energy", "solar", "appliance", "garden"],
  ["gaming", "game", "strategy", "guide", "chess", "puzzle", "tournament", "stats", "build", "minecraft", "multiplayer", "walkthrough"],
  ["sports", "football", "soccer", "basketball", "score", "league", "match", "player", "odds", "fixtures", "tennis", "results"],
  ["map", "location", "directions", "route", "traffic", "geocode", "address", "navigation", "distance", "places", "transit", "parking"],
  ["shipping", "logistics", "warehouse", "inventory", "supply", "freight", "parcel", "customs", "fleet", "carrier", "stock", "procurement"],
  ["api", "integration", "webhook", "oauth", "endpoint", "rest", "graphql", "sdk", "json", "schema", "token", "rate"],
  ["search", "web", "crawl", "scrape", "browse", "links", "sitemap", "archive", "monitor", "changes", "pages", "keywords"],
  ["voice", "speech", "dictation", "tts", "accent", "pronunciation", "call", "phone", "voicemail", "assistant", "transcribe", "recording"],
  ["design", "ui", "ux", "figma", "wireframe", "prototype", "color", "font", "accessibility", "layout", "mockup", "icon"],
  ["family", "kids", "parenting", "chores", "birthday", "gift", "party", "school", "pets", "dog", "vet", "planning"],
  ["science", "astronomy", "biology", "genome", "chemistry", "climate", "ocean", "space", "satellite", "physics", "lab", "experiment"],
];

/** Words any card may use: verbs and qualifiers of agent descriptions. */
const GENERIC = [
  "data", "report", "fast", "automated", "accurate", "daily", "weekly", "personal", "team", "business", "assistant", "agent",
  "helps", "find", "create", "analyze", "track", "manage", "check", "generate", "answers", "questions", "simple", "detailed",
  "real-time", "multilingual", "summary", "insights", "tools", "workflow", "free", "private", "secure", "open", "source", "custom",
];
/** Stopwords and glue, as real sentences have them; the tokeniser drops most. */
const GLUE = ["and", "for", "the", "with", "your", "of", "in", "to", "a", "from", "any", "on", "or", "by", "that", "you"];
const AGENT_SUFFIX = ["bot", "helper", "scout", "pilot", "desk", "works", "buddy", "wizard", "lab", "hub", "pro", "assist"];
/** A word that is in no card: a query with it can match only partly. */
export const UNKNOWN_WORD = "zyxqwv";

/** Zipf-like weights 1/(rank + 2): a few topics (weather, code, ...) are much more common than others. */
function weighted(count: number): (r: number) => number {
  const cumulative: number[] = [];
  let sum = 0;
  for (let i = 0; i < count; i++) cumulative.push((sum += 1 / (i + 2)));
  return (r) => {
    const target = r * sum;
    let lo = 0;
    for (let hi = count - 1; lo < hi; ) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface Synthetic {
  cards: CardFile[];
  queries: string[];
  /** Distinct words the cards draw from. */
  vocabulary: number;
}

export function syntheticDirectory(agents: number, queryCount: number, seed = 20251130): Synthetic {
  const random = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const topicOf = weighted(TOPICS.length);
  const wordOf = weighted(12);
  // Within a topic, earlier words are more common ("weather" before "sunrise").
  const topicWord = (topic: readonly string[]) => topic[wordOf(random()) % topic.length]!;
  const sentence = (topic: readonly string[], lo: number, hi: number) =>
    Array.from({ length: int(lo, hi) }, () => {
      const r = random();
      return r < 0.55 ? topicWord(topic) : r < 0.8 ? pick(GENERIC) : pick(GLUE);
    }).join(" ");
  const title = (words: string[]) => words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join(" ");

  const cards: CardFile[] = [];
  for (let i = 0; i < agents; i++) {
    const main = TOPICS[topicOf(random())]!;
    // One agent in four also covers a second topic in one of its skills.
    const second = random() < 0.25 ? TOPICS[topicOf(random())]! : main;
    const skills: SkillEntry[] = Array.from({ length: int(2, 4) }, (_, j) => {
      const topic = j === 1 ? second : main;
      const nameWords = [...new Set(Array.from({ length: int(2, 3) }, () => topicWord(topic)))];
      return {
        id: nameWords.join("-"),
        name: title(nameWords),
        description: sentence(topic, 8, 18),
        tags: [...new Set(Array.from({ length: int(2, 4) }, () => topicWord(topic)))],
        examples: Array.from({ length: int(1, 2) }, () => sentence(topic, 5, 9) + "?"),
      };
    });
    // Skill ids must be unique within a card.
    skills.forEach((skill, j) => {
      if (skills.findIndex((s) => s.id === skill.id) !== j) skill.id = `${skill.id}-${j}`;
    });
    cards.push({
      name: `${main[0]}-${pick(AGENT_SUFFIX)}-${i}`,
      description: sentence(main, 10, 20),
      skills,
    });
  }
  // 1–4 terms, mostly from one topic with an occasional generic word; one term in twenty is a word
  // no card contains.
  const queries = Array.from({ length: queryCount }, () => {
    const topic = TOPICS[topicOf(random())]!;
    return Array.from({ length: int(1, 4) }, () => {
      const r = random();
      return r < 0.05 ? UNKNOWN_WORD : r < 0.85 ? topicWord(topic) : pick(GENERIC);
    }).join(" ");
  });
  const vocabulary = new Set([...TOPICS.flat(), ...GENERIC, ...GLUE]).size;
  return { cards, queries, vocabulary };
}
