// The one tokenizer of the word indexes (memories, past conversations, skills) and of the
// planner's scratch table that turns query words into index tokens: they must agree token for
// token. unicode61's default categories (L* N* Co) make a combining mark a separator, so a word
// in Devanagari, Bengali, Tamil, Thai or vowelled Arabic was indexed as loose letters ("नमस्ते" as
// "नमस" and "त") and could not be searched as a word; with M* the mark stays inside its word.
// remove_diacritics 2 still folds Latin accents ("café" is "cafe").
export const WORD_TOKENIZE = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'";

/** the tokenize option as it is written inside a CREATE VIRTUAL TABLE statement */
export const WORD_TOKENIZE_OPTION = `tokenize = "${WORD_TOKENIZE}"`;
