// Everyday near-synonyms: a question and the turn that answers it often name the same thing in
// different words ("girlfriend" / "my gf", "classes" / "a training course", "dogs" / "my new pup",
// "destress" / "unwind"). The Porter stemmer joins forms of one word, never two words. This is a
// small hand-written thesaurus of casual English, grouped by what people talk about; a query word
// in a group also searches the group's other words, at the added-word weight. General knowledge,
// not learned from any data set; pure and deterministic.
//
// A group holds words that can stand for one another in chat. Words that are common in any
// conversation ("good", "time", "love") and words with a frequent unrelated sense are left out.

import { isStopWord } from "./analyze.js";

const GROUPS: readonly (readonly string[])[] = [
  // people and relationships
  ["girlfriend", "gf", "partner", "sweetheart"],
  ["boyfriend", "bf", "partner", "sweetheart"],
  ["wife", "spouse", "partner", "missus"],
  ["husband", "spouse", "partner", "hubby"],
  ["mom", "mother", "mum", "mommy", "mama", "mam"],
  ["dad", "father", "papa", "daddy", "pops"],
  ["grandma", "grandmother", "granny", "nana", "grandparents"],
  ["grandpa", "grandfather", "granddad", "grandparents"],
  ["parents", "folks", "mom", "dad"],
  ["kids", "children", "child", "kid", "little ones", "son", "daughter"],
  ["baby", "newborn", "infant", "toddler"],
  ["sibling", "siblings", "brother", "sister"],
  ["friend", "buddy", "pal", "bestie", "mate"],
  ["coworker", "colleague", "teammate"],
  ["boss", "manager", "supervisor"],
  ["neighbor", "neighbour", "neighbors"],
  ["relationship", "dating", "date", "romance"],
  ["wedding", "marriage", "married", "engagement", "engaged", "proposal", "proposed"],
  ["breakup", "divorce", "split"],
  // animals
  ["dog", "pup", "puppy", "pooch", "doggo", "doggy", "mutt", "canine", "fur baby", "furry friend"],
  ["cat", "kitty", "kitten", "feline"],
  ["pet", "fur baby", "furry friend", "companion"],
  ["bird", "birds", "birdwatching", "birding"],
  ["adopt", "adoption", "rescue", "shelter"],
  ["vet", "veterinarian", "animal hospital"],
  ["groom", "grooming", "groomer", "brushing", "bath"],
  ["leash", "harness", "collar"],
  // work and money
  ["job", "career", "position", "role", "employment", "gig"],
  ["work", "job", "office", "shift"],
  ["company", "firm", "employer", "startup", "business"],
  ["business", "store", "shop", "boutique", "venture", "startup"],
  ["quit", "resign", "resigned", "leave"],
  ["fired", "laid off", "layoff", "let go"],
  ["promotion", "promoted", "raise"],
  ["interview", "hiring", "application", "applied"],
  ["money", "cash", "funds", "savings", "budget", "income"],
  ["buy", "purchase", "shopping", "order"],
  ["gift", "present", "surprise"],
  ["promote", "advertise", "advertising", "marketing", "ads", "social media", "instagram", "flyers"],
  ["customer", "client", "clients", "customers"],
  ["project", "assignment", "task"],
  ["deadline", "due"],
  // school and learning
  ["class", "course", "lesson", "lessons", "workshop", "seminar", "training", "program"],
  ["school", "college", "university", "campus", "academy"],
  ["teacher", "instructor", "tutor", "professor", "coach", "trainer", "mentor"],
  ["student", "students", "learner", "pupil"],
  ["study", "studying", "learn", "learning", "research"],
  ["degree", "diploma", "graduate", "graduated", "graduation"],
  ["exam", "test", "finals", "quiz"],
  ["skill", "skills", "technique", "techniques", "ability"],
  ["advice", "tips", "tip", "suggestion", "suggestions", "recommend", "recommendation", "recommendations"],
  ["mentor", "mentoring", "mentorship", "guide", "guidance"],
  ["discipline", "training", "obedience", "reinforcement", "reward"],
  // feelings and health
  ["stress", "stressed", "stressful", "stressor", "pressure", "overwhelmed", "burnout", "anxious", "anxiety", "tension"],
  ["destress", "relax", "relaxing", "unwind", "chill", "decompress", "calm", "peace", "peaceful"],
  ["happy", "joy", "joyful", "thrilled", "delighted", "glad", "cheerful"],
  ["sad", "upset", "unhappy", "depressed", "down", "heartbroken", "grief", "grieving"],
  ["afraid", "scared", "fear", "frightened", "nervous", "worried", "worry"],
  ["angry", "mad", "furious", "annoyed", "frustrated", "frustrating"],
  ["lonely", "alone", "isolated", "loneliness"],
  ["tired", "exhausted", "worn out", "drained"],
  ["proud", "pride", "accomplished", "accomplishment"],
  ["excited", "thrilled", "pumped", "stoked", "eager"],
  ["grateful", "thankful", "gratitude", "appreciate"],
  ["confidence", "confident", "self-esteem"],
  ["sick", "ill", "illness", "unwell", "flu", "cold"],
  ["doctor", "physician", "hospital", "clinic", "checkup"],
  ["injury", "injured", "hurt", "accident", "wound"],
  ["allergy", "allergic", "allergies", "reaction", "sneeze"],
  ["health", "healthy", "wellness", "wellbeing", "fit"],
  ["therapy", "therapist", "counseling", "counselor"],
  ["sleep", "rest", "nap"],
  ["diet", "nutrition", "vegan", "vegetarian", "healthy eating"],
  ["miss", "missing", "nostalgic", "longing"],
  // pastimes
  ["hobby", "hobbies", "pastime", "interest", "interests", "passion"],
  ["hike", "hiking", "trek", "trail", "trails"],
  ["camp", "camping", "tent", "campfire"],
  ["walk", "walks", "stroll"],
  ["run", "running", "jog", "jogging", "marathon"],
  ["bike", "biking", "cycling", "bicycle", "ride"],
  ["swim", "swimming", "pool"],
  ["fish", "fishing"],
  ["gym", "workout", "exercise", "fitness"],
  ["yoga", "meditation", "meditate", "mindfulness"],
  ["dance", "dancing", "dancer", "choreography"],
  ["music", "song", "songs", "tune", "tunes", "track"],
  ["concert", "gig", "show", "performance", "festival"],
  ["sing", "singing", "singer", "vocals", "choir"],
  ["paint", "painting", "canvas", "artwork", "art", "drawing"],
  ["photo", "picture", "pic", "photograph", "snapshot", "photography", "camera"],
  ["movie", "film", "flick", "cinema"],
  ["tv", "television", "series", "episode", "netflix"],
  ["book", "novel", "read", "reading"],
  ["write", "writing", "writer", "author"],
  ["story", "stories", "tale"],
  ["screenplay", "script", "screenwriting"],
  ["poem", "poems", "poetry", "poet"],
  ["blog", "post", "posts", "vlog"],
  ["game", "games", "gaming", "videogame", "video game", "console"],
  ["board game", "board games", "chess", "cards"],
  ["cook", "cooking", "cooked", "chef", "recipe", "recipes", "kitchen"],
  ["bake", "baking", "baked", "pastry", "pastries"],
  ["garden", "gardening", "plants", "flowers", "grow"],
  ["volunteer", "volunteering", "volunteered", "charity", "nonprofit", "donate", "donation", "fundraiser"],
  ["craft", "crafts", "diy", "handmade"],
  ["collect", "collection", "collecting", "collector"],
  ["tattoo", "tattoos", "ink"],
  // food and drink
  ["food", "meal", "dish", "eat", "eating", "snack", "snacks"],
  ["dessert", "desserts", "sweets", "treat", "treats", "cake", "pastry", "cookies", "ice cream", "pie"],
  ["restaurant", "cafe", "diner", "eatery", "bistro"],
  ["coffee", "latte", "espresso", "cafe"],
  ["wine", "winery", "vineyard", "wine tasting"],
  ["drink", "drinks", "beverage", "cocktail"],
  ["breakfast", "brunch", "lunch", "dinner"],
  ["picnic", "barbecue", "bbq", "cookout"],
  // places and travel
  ["trip", "travel", "traveling", "vacation", "holiday", "getaway", "journey", "tour", "visit"],
  ["beach", "ocean", "sea", "shore", "coast", "waves"],
  ["mountain", "mountains", "hill", "hills", "peak", "summit"],
  ["lake", "river", "pond", "creek"],
  ["nature", "outdoors", "outdoor", "wilderness", "woods", "forest", "fresh air"],
  ["park", "playground", "dog park"],
  ["city", "town", "downtown", "urban"],
  ["home", "house", "apartment", "place", "flat", "condo"],
  ["move", "moved", "moving", "relocate", "relocated"],
  ["neighborhood", "area", "community", "local"],
  ["car", "vehicle", "truck", "drive", "road trip"],
  ["flight", "plane", "airport", "fly"],
  ["country", "abroad", "overseas"],
  ["museum", "gallery", "exhibit", "exhibition"],
  // events and life
  ["party", "celebration", "celebrate", "bash", "gathering", "get-together"],
  ["birthday", "bday"],
  ["competition", "contest", "tournament", "championship", "match", "compete", "competing"],
  ["win", "won", "victory", "champion", "first place", "trophy", "award", "prize"],
  ["lose", "lost", "defeat"],
  ["goal", "goals", "dream", "dreams", "aspiration", "ambition", "plan", "plans"],
  ["inspire", "inspired", "inspiration", "inspiring", "motivate", "motivated", "motivation"],
  ["challenge", "challenges", "struggle", "struggles", "difficult", "tough", "hard", "problem", "problems", "setback", "obstacle"],
  ["help", "support", "supportive", "assist"],
  ["church", "faith", "religion", "religious", "spiritual", "prayer"],
  ["lgbtq", "queer", "gay", "lesbian", "transgender", "trans", "pride"],
  ["activist", "activism", "advocate", "advocacy", "cause", "rally", "protest"],
  ["childhood", "grew up", "growing up", "young", "kid"],
  ["memory", "memories", "remember", "reminder", "keepsake"],
  ["name", "named", "called"],
  ["indoor", "indoors", "inside", "at home"],
  ["new", "recently", "latest"],
  ["start", "started", "begin", "launch", "launched", "founded", "opened"],
  ["finish", "finished", "completed", "done"],
  ["family", "relatives", "mom", "dad", "siblings", "kids"],
  ["toy", "toys", "chew", "ball", "frisbee"],
  ["clothes", "clothing", "outfit", "outfits", "dress", "shirt", "fashion"],
];

// word (lower case) → the other words of every group it is in
const RELATED: ReadonlyMap<string, readonly string[]> = (() => {
  const m = new Map<string, Set<string>>();
  for (const g of GROUPS) {
    for (const w of g) {
      let s = m.get(w);
      if (!s) m.set(w, (s = new Set()));
      for (const o of g) if (o !== w) s.add(o);
    }
  }
  return new Map([...m].map(([w, s]) => [w, [...s]]));
})();

/** Simple English endings off: the lexicon holds base forms ("classes" → "class", "dogs" → "dog"). */
function baseForms(w: string): string[] {
  const out = [w];
  if (w.endsWith("ies")) out.push(w.slice(0, -3) + "y");
  if (w.endsWith("es")) out.push(w.slice(0, -2));
  if (w.endsWith("s") && !w.endsWith("ss")) out.push(w.slice(0, -1));
  return out;
}

/**
 * The near-synonyms of a query's words: every word of the lexicon groups its terms belong to,
 * split into single words (a phrase's words each search), none of the terms themselves.
 */
export function relatedWords(terms: readonly string[]): string[] {
  const own = new Set(terms);
  const out = new Set<string>();
  for (const t of terms) {
    for (const b of baseForms(t)) {
      for (const r of RELATED.get(b) ?? []) for (const w of r.split(/[\s-]+/u)) if (w.length > 1 && !isStopWord(w) && !own.has(w)) out.add(w);
    }
  }
  return [...out];
}
