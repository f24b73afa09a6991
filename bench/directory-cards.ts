// Synthetic agent cards and queries for the directory scenario, from a fixed seed: real English topic words, so
// common ones ("data", "report", "api") match thousands of skills as in a real directory, with stopwords.
import type { CardFile, SkillEntry } from "../local-agent/society/card-file.ts";
import { rng } from "./seeded-random.ts";

/** A topic: the words its skills are named, described and tagged with, commonest first. */
const TOPICS = [
  "weather forecast temperature rain storm wind humidity climate snow alerts radar sunrise", "translate translation language spanish french german japanese chinese localization subtitles dictionary grammar",
  "code review refactor python typescript rust bug tests lint repository pull commit", "calendar meeting schedule reminder appointment availability timezone invite agenda booking event deadline",
  "email inbox reply draft newsletter spam thread attachment followup mailing outreach signature", "invoice accounting tax expense receipt payroll ledger budget bookkeeping vat reconciliation billing",
  "stock market trading portfolio crypto bitcoin dividend earnings price exchange investment options", "travel flight hotel itinerary visa airport train booking luggage destination trip rental",
  "recipe cooking meal nutrition ingredients diet vegan calories grocery baking kitchen menu", "fitness workout running training exercise yoga strength cardio steps sleep heart coach",
  "legal contract clause compliance gdpr privacy policy lawyer agreement terms license regulation", "image photo resize edit background generation illustration logo thumbnail filter upscale crop",
  "video editing transcription youtube clip caption streaming render animation podcast audio music", "research paper citation arxiv literature survey abstract journal academic review bibliography science",
  "summary summarize notes document pdf extract highlights digest article report outline tldr", "database sql query postgres schema migration index table backup replication mysql sqlite",
  "server deploy kubernetes docker monitoring logs uptime incident cloud infrastructure terraform scaling", "security vulnerability scan password encryption audit phishing firewall threat malware pentest secrets",
  "customer support ticket helpdesk chat faq refund complaint feedback satisfaction escalation sla", "sales lead crm pipeline prospect deal quote proposal demo churn revenue forecast",
  "marketing seo campaign social twitter instagram content ads analytics brand copywriting audience", "recruiting resume interview candidate job hiring onboarding salary linkedin screening offer talent",
  "education tutor math homework quiz lesson exam student course flashcards physics chemistry", "health symptom medication doctor appointment medical pharmacy diagnosis wellness mental therapy clinic",
  "real estate property rent mortgage apartment listing landlord tenant valuation house lease", "shopping product price deal coupon comparison order delivery tracking amazon checkout wishlist",
  "news headlines politics briefing daily rss breaking topic sources factcheck opinion local", "spreadsheet excel csv chart pivot formula dashboard visualization data cleaning statistics plot",
  "writing blog essay story poem editor proofread tone rewrite style novel fiction", "home automation lights thermostat smart sensor camera alarm energy solar appliance garden",
  "gaming game strategy guide chess puzzle tournament stats build minecraft multiplayer walkthrough", "sports football soccer basketball score league match player odds fixtures tennis results",
  "map location directions route traffic geocode address navigation distance places transit parking", "shipping logistics warehouse inventory supply freight parcel customs fleet carrier stock procurement",
  "api integration webhook oauth endpoint rest graphql sdk json schema token rate", "search web crawl scrape browse links sitemap archive monitor changes pages keywords",
  "voice speech dictation tts accent pronunciation call phone voicemail assistant transcribe recording", "design ui ux figma wireframe prototype color font accessibility layout mockup icon",
  "family kids parenting chores birthday gift party school pets dog vet planning", "science astronomy biology genome chemistry climate ocean space satellite physics lab experiment",].map((words) => words.split(" "));
const GENERIC = ("data report fast automated accurate daily weekly personal team business assistant agent helps find create analyze track manage check " +
  "generate answers questions simple detailed real-time multilingual summary insights tools workflow free private secure open source custom").split(" ");
/** Stopwords and glue, as real sentences have them; the tokeniser drops most. */
const GLUE = "and for the with your of in to a from any on or by that you".split(" ");
const AGENT_SUFFIX = "bot helper scout pilot desk works buddy wizard lab hub pro assist".split(" ");
/** A word that is in no card: a query with it can match only partly. */
const UNKNOWN_WORD = "zyxqwv";

export function syntheticDirectory(agents: number, queryCount: number, seed = 20251130) {
  const random = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  // A few topics (weather, code, ...) are much more common than others; within one, earlier words too.
  const [topicOf, wordOf] = [zipf(TOPICS.length, 2), zipf(12, 2)];
  const topic = () => TOPICS[topicOf(random())]!;
  const topicWord = (t: readonly string[]) => t[wordOf(random()) % t.length]!;
  const sentence = (t: readonly string[], lo: number, hi: number) =>
    Array.from({ length: int(lo, hi) }, () => ((r) => (r < 0.55 ? topicWord(t) : r < 0.8 ? pick(GENERIC) : pick(GLUE)))(random())).join(" ");
  const cards: CardFile[] = [];
  for (let i = 0; i < agents; i++) {
    const main = topic();
    // One agent in four also covers a second topic in one of its skills.
    const second = random() < 0.25 ? topic() : main;
    const skills = Array.from({ length: int(2, 4) }, (_, j): SkillEntry => {
      const t = j === 1 ? second : main;
      const nameWords = [...new Set(Array.from({ length: int(2, 3) }, () => topicWord(t)))];
      return {
        id: nameWords.join("-"),
        name: nameWords.map((w) => w[0]!.toUpperCase() + w.slice(1)).join(" "),
        description: sentence(t, 8, 18),
        tags: [...new Set(Array.from({ length: int(2, 4) }, () => topicWord(t)))],
        examples: Array.from({ length: int(1, 2) }, () => sentence(t, 5, 9) + "?"),
      };
    });
    // Skill ids must be unique within a card.
    skills.forEach((skill, j) => skills.findIndex((s) => s.id === skill.id) !== j && (skill.id = `${skill.id}-${j}`));
    cards.push({ name: `${main[0]}-${pick(AGENT_SUFFIX)}-${i}`, description: sentence(main, 10, 20), skills });
  }
  // 1–4 terms, mostly from one topic with an occasional generic word; one term in twenty is in no card.
  const queries = Array.from({ length: queryCount }, () => {
    const t = topic();
    return Array.from({ length: int(1, 4) }, () => ((r) => (r < 0.05 ? UNKNOWN_WORD : r < 0.85 ? topicWord(t) : pick(GENERIC)))(random())).join(" ");
  });
  return { cards, queries, vocabulary: new Set([...TOPICS.flat(), ...GENERIC, ...GLUE]).size };
}

function zipf(count: number, offset: number): (r: number) => number {
  const cumulative: number[] = [];
  for (let i = 0, sum = 0; i < count; i++) cumulative.push((sum += 1 / (i + offset)));
  return (r) => cumulative.findIndex((c) => c >= r * cumulative.at(-1)!);
}
