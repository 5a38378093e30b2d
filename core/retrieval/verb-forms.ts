// Irregular English verbs: a question asks in the base form ("When did she go to the parade?",
// "What did he buy?", "What does her drawing mean?") while the turn that answers says it in the
// past ("I went to a pride parade", "I bought these figurines", "I drew it"). The FTS tokenizer's
// Porter stemmer joins "paint", "painted" and "painting" but never "go" and "went": their stems
// differ. A query word that is one form of an irregular verb (or its base with a regular ending)
// also searches the verb's other forms. General English, not learned from any data set. Forms that
// are common nouns or adjectives in everyday speech ("rose", "saw", "left", "felt", "found", "lead")
// are left out: they would match turns about flowers, tools and directions, and so are "bit",
// "said", "knew", "thought" and "meant", which chat uses in passing far more often than it reports
// with them, and the very common "make", "take", "come", "give". "be", "have", "do" and "get" are
// stop words.

/** base form, then its past and past-participle forms (a form the stemmer already joins is omitted) */
const VERBS: readonly (readonly string[])[] = [
  ["arise", "arose", "arisen"],
  ["awake", "awoke", "awoken"],
  ["become", "became"],
  ["begin", "began", "begun"],
  ["bend", "bent"],
  ["bite", "bitten"],
  ["blow", "blew", "blown"],
  ["break", "broke", "broken"],
  ["bring", "brought"],
  ["build", "built"],
  ["burn", "burnt"],
  ["buy", "bought"],
  ["catch", "caught"],
  ["choose", "chose", "chosen"],
  ["creep", "crept"],
  ["deal", "dealt"],
  ["dig", "dug"],
  ["draw", "drew", "drawn"],
  ["dream", "dreamt"],
  ["drink", "drank", "drunk"],
  ["drive", "drove", "driven"],
  ["eat", "ate", "eaten"],
  ["fall", "fell", "fallen"],
  ["feed", "fed"],
  ["fight", "fought"],
  ["fly", "flew", "flown"],
  ["forget", "forgot", "forgotten"],
  ["forgive", "forgave", "forgiven"],
  ["freeze", "froze", "frozen"],
  ["go", "went", "gone"],
  ["grow", "grew", "grown"],
  ["hang", "hung"],
  ["hear", "heard"],
  ["hide", "hid", "hidden"],
  ["hold", "held"],
  ["keep", "kept"],
  ["learn", "learnt"],
  ["lend", "lent"],
  ["lose", "lost"],
  ["meet", "met"],
  ["pay", "paid"],
  ["ride", "rode", "ridden"],
  ["ring", "rang", "rung"],
  ["run", "ran"],
  ["see", "seen"],
  ["seek", "sought"],
  ["sell", "sold"],
  ["send", "sent"],
  ["shake", "shook", "shaken"],
  ["shine", "shone"],
  ["shoot", "shot"],
  ["show", "shown"],
  ["shrink", "shrank", "shrunk"],
  ["sing", "sang", "sung"],
  ["sink", "sank", "sunk"],
  ["sit", "sat"],
  ["sleep", "slept"],
  ["speak", "spoke", "spoken"],
  ["spend", "spent"],
  ["stand", "stood"],
  ["steal", "stole", "stolen"],
  ["stick", "stuck"],
  ["sting", "stung"],
  ["strike", "struck"],
  ["swim", "swam", "swum"],
  ["swing", "swung"],
  ["teach", "taught"],
  ["tear", "tore", "torn"],
  ["tell", "told"],
  ["throw", "threw", "thrown"],
  ["understand", "understood"],
  ["wake", "woke", "woken"],
  ["wear", "wore", "worn"],
  ["weep", "wept"],
  ["win", "won"],
  ["write", "wrote", "written"],
];

const GROUP_OF = new Map<string, readonly string[]>();
for (const forms of VERBS) for (const f of forms) GROUP_OF.set(f, forms);

/**
 * The verb a word is a form of: itself, or its base under a regular ending the stemmer already
 * joins to it ("drawing", "draws", "running", "rides" → "draw", "run", "ride").
 */
function groupOf(w: string): readonly string[] | undefined {
  const direct = GROUP_OF.get(w);
  if (direct) return direct;
  const bases: string[] = [];
  if (w.endsWith("ing")) {
    const stem = w.slice(0, -3);
    bases.push(stem, stem + "e");
    if (stem.length >= 2 && stem.at(-1) === stem.at(-2)) bases.push(stem.slice(0, -1)); // running → run
  } else if (w.endsWith("es")) bases.push(w.slice(0, -2), w.slice(0, -1));
  else if (w.endsWith("s")) bases.push(w.slice(0, -1));
  for (const b of bases) {
    const g = GROUP_OF.get(b);
    // only from the base: "wrote" + "s" is no word
    if (g && g[0] === b) return g;
  }
  return undefined;
}

/** The other forms of the irregular verbs among these words, not already among them (in order). */
export function otherVerbForms(words: readonly string[]): string[] {
  const have = new Set(words);
  const out: string[] = [];
  for (const w of words) {
    const group = groupOf(w) ?? [];
    // the base of "drawing" is the same stem to the tokenizer: nothing to add
    const viaEnding = !GROUP_OF.has(w);
    for (const f of group) {
      if (viaEnding && f === group[0]) continue;
      if (!have.has(f)) {
        have.add(f);
        out.push(f);
      }
    }
  }
  return out;
}
