// General English words: too common to make a card an answer on their own, and never respelled by the
// typo fallback. Imported by term-index.ts (the off-topic guard and typo-fallback.ts's eligibility);
// platform-free. Covered by test/worker/directory/ranking-guard.test.ts and ranking-typos.test.ts.
//
// Unlike tokenize.ts's STOPWORDS these words are kept and scored: "table" is what a tide-table card is
// about. They only stop counting as evidence on their own: "book a table for two at a sushi place"
// shares "table" with that card and nothing else, and is not a question for it. Written for this
// project (everyday verbs, nouns, adjectives, times, numbers), not taken from a corpus; a word that names
// what agents do (weather, translate, invoice, forecast) does not belong here.
import { stem } from "./tokenize.ts";

const WORDS = `
able above across act add advice after again against age ago agree ahead all allow almost alone along
already also always among amount another answer anyone anything anyway anywhere apart appear area arm
around arrive art ask available away baby back bad bag ball bar base basic bear beat beautiful because
become bed before begin beginner behind believe below beside best better between big bit black blue
board boat body book born both bottom box boy break bring brother brown build business busy buy call
care carry case catch cause center central certain chair chance change cheap check child choose church
city clean clear close cold color come common complete cool corner correct could count country couple
course cover create cross cup current cut daily dark daughter day dead deal dear decide deep different
difficult direct do door double down draw dream dress drive drop dry during each early easy eat edge
effect either else empty end enjoy enough enter entire even evening ever every everyone everything exact
example except expect explain eye face fact fail fair fall family famous far fast father favorite feel
few field fight figure file fill final find fine finish fire first fit five fix floor fly follow foot
force form four free friend front full fun future general get girl give glad glass go goal going gone
good got great green ground group grow guess guy hair half hall hand handle hang happen happy hard hate
have head hear heart heavy hello help here high hill hit hold hole home hope hot hour huge idea
important inside instead interest issue item join just keep kid kill kind king know lady land large last
late later laugh lay lead leak learn least leave left leg less let level lie life light like line list
listen little live long look lose lot loud love low main make man many mark matter maybe mean member
middle might mind minute miss mister moment month more morning most mother move much must name near need
never new next nice night nine nobody none normal nothing notice now number off offer office often old
once one only open order other out outside over own page pair paper part party pass past pattern people
perfect perhaps person pick piece place plain play point poor possible pretty problem pull push put
question quick quiet quite rather reach read ready real really reason receive red remember rest result
return rich ride right ring rise road rock room round rule run safe same save say second see seem sell
send sense serious serve set seven several shall share sharp short should show shut side sign simple
since single sister sit six size small smile some someone something sometimes son soon sorry sort sound
space speak special spend stand star start state stay step still stop story straight strange street
strong stuff such sure table take talk tall team tell ten than thank thing think third though thought
three through throw time tiny today together told tomorrow tonight too top total touch toward town true
try turn twelve twenty two type under understand until up upon use used useful usual very view wait walk
wall want warm watch way wear week weekend well went whatever when where whether while white whole why
wide wife win wish within without woman won wonder work world worry worse worst write wrong yard year
yellow yes yesterday yet young anybody everybody somebody nowhere somewhere okay thanks monday tuesday
wednesday thursday friday saturday sunday january february march april may june july august september
october november december spring summer autumn winter eight eleven hundred thousand million zero twice
`;

/** The list's words as index terms (stemmed as tokenize.ts stems a query). */
export const COMMON_TERMS: ReadonlySet<string> = new Set(WORDS.split(/\s+/).filter(Boolean).map(stem));

export function isCommonTerm(term: string): boolean {
  return COMMON_TERMS.has(term);
}
