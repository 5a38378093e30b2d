// Category words: a question that names a kind of thing ("What instruments does she play?", "Which
// countries has he visited?") is answered by turns that name members of it ("I've been practising
// the violin", "our trip to Portugal"), which share no word with it. A small hand-written lexicon of
// everyday English categories maps the category nouns a question uses to member words, which the
// stores search as a lower-weight addition to the word query. General knowledge, not learned from
// any data set; pure and deterministic.

interface Category {
  /** the nouns (singular and plural) or phrases that name the category in a question */
  names: string[];
  /** member words, lower case, as a turn would say them */
  members: string[];
}

const COUNTRIES = [
  "usa", "america", "canada", "mexico", "brazil", "argentina", "chile", "peru", "colombia", "cuba", "jamaica",
  "england", "britain", "uk", "scotland", "ireland", "wales", "france", "spain", "portugal", "italy", "germany",
  "austria", "switzerland", "netherlands", "holland", "belgium", "denmark", "sweden", "norway", "finland", "iceland",
  "poland", "czechia", "hungary", "greece", "turkey", "croatia", "romania", "russia", "ukraine", "israel", "egypt",
  "morocco", "kenya", "nigeria", "ghana", "ethiopia", "india", "pakistan", "china", "japan", "korea", "vietnam",
  "thailand", "indonesia", "philippines", "malaysia", "singapore", "australia", "zealand", "nepal", "iran", "iraq",
];

const US_STATES = [
  "alabama", "alaska", "arizona", "arkansas", "california", "colorado", "connecticut", "delaware", "florida",
  "georgia", "hawaii", "idaho", "illinois", "indiana", "iowa", "kansas", "kentucky", "louisiana", "maine",
  "maryland", "massachusetts", "michigan", "minnesota", "mississippi", "missouri", "montana", "nebraska", "nevada",
  "hampshire", "jersey", "carolina", "dakota", "ohio", "oklahoma", "oregon", "pennsylvania", "tennessee", "texas",
  "utah", "vermont", "virginia", "washington", "wisconsin", "wyoming",
];

const CITIES = [
  "london", "paris", "rome", "madrid", "barcelona", "lisbon", "berlin", "munich", "amsterdam", "vienna", "prague",
  "dublin", "edinburgh", "athens", "istanbul", "moscow", "tokyo", "kyoto", "seoul", "beijing", "shanghai",
  "bangkok", "delhi", "mumbai", "sydney", "melbourne", "toronto", "vancouver", "montreal", "york", "boston",
  "chicago", "seattle", "portland", "denver", "austin", "dallas", "houston", "miami", "orlando", "atlanta",
  "nashville", "vegas", "angeles", "francisco", "diego", "phoenix", "philadelphia", "detroit", "honolulu",
];

/** Every country, US state and city name the lexicon knows (lower case). */
export const PLACE_NAMES: ReadonlySet<string> = new Set([...COUNTRIES, ...US_STATES, ...CITIES]);

const CATEGORIES: Category[] = [
  { names: ["country", "countries", "nation", "nations"], members: COUNTRIES },
  { names: ["state", "states"], members: US_STATES },
  { names: ["city", "cities", "town", "towns"], members: CITIES },
  { names: ["place", "places", "location", "locations", "destination", "destinations"], members: [...COUNTRIES, ...US_STATES, ...CITIES] },
  {
    names: ["instrument", "instruments"],
    members: ["piano", "guitar", "violin", "drums", "drum", "flute", "clarinet", "saxophone", "sax", "trumpet", "cello", "ukulele", "bass", "harp", "keyboard", "banjo", "harmonica", "trombone", "accordion", "viola", "mandolin", "oboe"],
  },
  {
    names: ["sport", "sports"],
    members: ["soccer", "football", "basketball", "baseball", "tennis", "volleyball", "hockey", "golf", "swimming", "running", "cycling", "skiing", "snowboarding", "surfing", "skating", "boxing", "wrestling", "rugby", "cricket", "badminton", "climbing", "rowing", "marathon", "softball"],
  },
  {
    names: ["martial art", "martial arts"],
    members: ["karate", "taekwondo", "judo", "jujitsu", "jiu", "kung", "aikido", "kickboxing", "boxing", "muay", "krav", "capoeira", "wrestling", "mma"],
  },
  {
    names: ["pet", "pets", "animal", "animals"],
    members: ["dog", "dogs", "puppy", "cat", "cats", "kitten", "hamster", "rabbit", "bunny", "parrot", "bird", "fish", "turtle", "snake", "lizard", "horse", "ferret", "gecko", "pup"],
  },
  {
    names: ["exercise", "exercises", "workout", "workouts", "fitness"],
    members: ["running", "jogging", "yoga", "pilates", "weightlifting", "lifting", "weights", "pushups", "squats", "cardio", "cycling", "swimming", "hiking", "gym", "crossfit", "aerobics", "stretching", "kickboxing", "spinning", "treadmill"],
  },
  {
    names: ["art", "arts", "artwork", "artworks", "craft", "crafts"],
    members: ["painting", "paint", "drawing", "sketching", "sketch", "sculpture", "pottery", "ceramics", "photography", "watercolor", "acrylic", "canvas", "collage", "calligraphy", "knitting", "embroidery", "mural", "portrait"],
  },
  {
    names: ["activity", "activities", "hobby", "hobbies", "pastime", "pastimes"],
    members: ["painting", "drawing", "reading", "writing", "hiking", "camping", "fishing", "gardening", "cooking", "baking", "knitting", "photography", "pottery", "dancing", "singing", "swimming", "running", "cycling", "yoga", "gaming", "traveling", "volunteering", "surfing", "skiing", "kayaking", "climbing", "biking", "picnic", "beach"],
  },
  {
    names: ["event", "events"],
    members: ["party", "festival", "concert", "parade", "fundraiser", "conference", "workshop", "wedding", "ceremony", "marathon", "race", "rally", "march", "meetup", "exhibition", "fair", "gala", "competition", "tournament", "charity", "seminar", "convention"],
  },
  {
    names: ["concert", "concerts", "band", "bands", "musician", "musicians", "artist", "artists", "music"],
    members: ["concert", "festival", "gig", "show", "band", "singer", "album", "song", "songs", "tour", "orchestra", "performance"],
  },
  {
    names: ["family member", "family members", "relative", "relatives"],
    members: ["mother", "mom", "father", "dad", "sister", "brother", "son", "daughter", "kids", "children", "husband", "wife", "grandma", "grandmother", "grandpa", "grandfather", "aunt", "uncle", "cousin", "niece", "nephew", "parents"],
  },
  {
    names: ["food", "foods", "dish", "dishes", "meal", "meals", "recipe", "recipes"],
    members: ["pizza", "pasta", "sushi", "tacos", "burger", "salad", "soup", "cake", "cookies", "bread", "pie", "curry", "noodles", "sandwich", "steak", "chicken", "dessert", "pancakes", "cupcakes", "muffins"],
  },
  {
    names: ["book", "books", "novel", "novels"],
    members: ["book", "novel", "read", "reading", "author", "series", "chapter", "library"],
  },
  {
    names: ["movie", "movies", "film", "films", "show", "shows"],
    members: ["movie", "film", "cinema", "theater", "theatre", "series", "episode", "documentary", "watched", "netflix"],
  },
  {
    names: ["game", "games"],
    members: ["chess", "poker", "monopoly", "scrabble", "puzzle", "puzzles", "cards", "videogame", "console", "playstation", "xbox", "nintendo", "minecraft", "fortnite"],
  },
  {
    names: ["drink", "drinks", "beverage", "beverages"],
    members: ["coffee", "tea", "wine", "beer", "juice", "smoothie", "lemonade", "soda", "cocktail", "latte", "espresso", "milkshake", "water"],
  },
  {
    names: ["job", "jobs", "career", "careers", "profession", "professions", "occupation", "occupations"],
    members: ["teacher", "nurse", "doctor", "engineer", "counselor", "lawyer", "designer", "developer", "programmer", "chef", "writer", "artist", "manager", "accountant", "mechanic", "firefighter", "police", "officer", "banker", "therapist", "scientist", "musician", "photographer"],
  },
  {
    names: ["holiday", "holidays", "celebration", "celebrations"],
    members: ["christmas", "thanksgiving", "easter", "halloween", "hanukkah", "diwali", "ramadan", "eid", "birthday", "anniversary", "year", "independence", "valentine"],
  },
  {
    names: ["genre", "genres"],
    members: ["rock", "jazz", "pop", "classical", "hip", "rap", "country", "blues", "folk", "metal", "indie", "electronic", "fantasy", "mystery", "romance", "thriller", "horror", "comedy", "drama"],
  },
  {
    names: ["flower", "flowers", "plant", "plants"],
    members: ["rose", "roses", "tulip", "tulips", "sunflower", "sunflowers", "daisy", "lily", "orchid", "lavender", "succulent", "succulents", "cactus", "fern", "herbs", "tomatoes"],
  },
  {
    names: ["vehicle", "vehicles", "car", "cars"],
    members: ["car", "truck", "van", "suv", "motorcycle", "bike", "scooter", "jeep", "tesla", "convertible", "sedan"],
  },
  {
    names: ["language", "languages"],
    members: ["english", "spanish", "french", "german", "italian", "portuguese", "chinese", "mandarin", "japanese", "korean", "arabic", "hindi", "russian", "sign"],
  },
];

// every category name, longest first: "martial arts" is read before "arts" can be
const NAMES = CATEGORIES.flatMap((c) => c.names.map((name) => ({ name, c }))).sort((a, b) => b.name.length - a.name.length);
// a qualifier is never a verb: "What did Melanie show…" asks for no category
const AUX = "(?:did|does|do|has|have|had|is|are|was|were|will|would|can|could|should|might|may)";
// The category must be what the question asks for: "What instruments…", "Which European
// countries…", "What kind of art…", "What LGBTQ+ events…" (up to two words may qualify it), not a
// word in passing ("Did she go to the art show?").
const ASKS_FOR = new RegExp(
  `^\\s*(?:what|which)\\s+(?:(?:are|were)\\s+(?:some|the|a\\s+few|any)\\s+(?:of\\s+(?:the|their|his|her)\\s+)?)?(?:(?:kinds?|types?|sorts?)\\s+of\\s+)?(?:(?!${AUX}\\b)[\\p{L}\\p{N}+.'’/-]+\\s+){0,2}?(${NAMES.map((n) => n.name.replace(/ /g, "\\s+")).join("|")})\\b`,
  "iu",
);

/** The distinct member words of the category a question asks for (empty when it asks for none). */
export function categoryMembers(question: string): string[] {
  const m = ASKS_FOR.exec(question);
  if (!m) return [];
  const asked = m[1]!.toLowerCase().replace(/\s+/g, " ");
  const c = NAMES.find((n) => n.name === asked)!.c;
  // a member the question itself says is one of its own words, not an addition
  const own = new Set(question.toLowerCase().split(/[^\p{L}\p{N}]+/u));
  return c.members.filter((w) => !own.has(w));
}
