// WordPiece tokenizer (BERT family): basic split on whitespace and punctuation, optional lower-casing
// and accent stripping, then greedy longest-match sub-words with a continuation prefix. Pure: the
// adapter reads vocab.txt or tokenizer.json and hands the parsed content here.
import { EmbedderError } from "./embedder.js";

export interface WordPieceVocab {
  ids: Map<string, number>;
  lowercase: boolean;
  stripAccents: boolean;
  unk: string;
  cls: string;
  sep: string;
  pad: string;
  prefix: string;
  /** words longer than this (in characters) become the unknown token */
  maxWordChars: number;
}

export interface Encoding {
  inputIds: number[];
  attentionMask: number[];
  tokenTypeIds: number[];
}

/** vocab.txt: one token per line, its id is the line number. */
export function vocabFromText(text: string, opts: { lowercase?: boolean } = {}): WordPieceVocab {
  const ids = new Map<string, number>();
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.length > 0 && !ids.has(line)) ids.set(line, i);
  });
  return finish(ids, { lowercase: opts.lowercase ?? true, stripAccents: opts.lowercase ?? true });
}

/** tokenizer.json (Hugging Face tokenizers) with a WordPiece model. */
export function vocabFromTokenizerJson(json: unknown): WordPieceVocab {
  const j = json as {
    model?: { type?: string; vocab?: Record<string, number>; unk_token?: string; continuing_subword_prefix?: string; max_input_chars_per_word?: number };
    normalizer?: { type?: string; lowercase?: boolean; strip_accents?: boolean | null; normalizers?: { type?: string }[] } | null;
  };
  const model = j?.model;
  if (!model || model.type !== "WordPiece" || typeof model.vocab !== "object" || model.vocab === null) {
    throw new EmbedderError(
      "invalid",
      `tokenizer.json: only a WordPiece model is supported (found ${model?.type ?? "no model"}); use a BERT-family model or supply vocab.txt`,
    );
  }
  const ids = new Map<string, number>();
  for (const [tok, id] of Object.entries(model.vocab)) if (Number.isInteger(id)) ids.set(tok, id);
  const n = j.normalizer;
  let lowercase = false;
  let stripAccents = false;
  if (n?.type === "BertNormalizer") {
    lowercase = n.lowercase ?? true;
    // BERT strips accents whenever it lower-cases, unless told otherwise
    stripAccents = n.strip_accents ?? lowercase;
  } else if (n?.type === "Sequence") {
    lowercase = (n.normalizers ?? []).some((x) => x.type === "Lowercase");
    stripAccents = (n.normalizers ?? []).some((x) => x.type === "StripAccents");
  } else if (n?.type === "Lowercase") {
    lowercase = true;
  }
  return finish(ids, {
    lowercase,
    stripAccents,
    unk: model.unk_token,
    prefix: model.continuing_subword_prefix,
    maxWordChars: model.max_input_chars_per_word,
  });
}

function finish(
  ids: Map<string, number>,
  o: { lowercase: boolean; stripAccents: boolean; unk?: string | undefined; prefix?: string | undefined; maxWordChars?: number | undefined },
): WordPieceVocab {
  const v: WordPieceVocab = {
    ids,
    lowercase: o.lowercase,
    stripAccents: o.stripAccents,
    unk: o.unk ?? "[UNK]",
    cls: "[CLS]",
    sep: "[SEP]",
    pad: "[PAD]",
    prefix: o.prefix ?? "##",
    maxWordChars: o.maxWordChars ?? 100,
  };
  for (const t of [v.unk, v.cls, v.sep]) {
    if (!ids.has(t)) throw new EmbedderError("invalid", `WordPiece vocabulary has no ${t} token`);
  }
  return v;
}

// BERT's basic tokenizer, character classes as in its _is_control / _is_whitespace /
// _is_punctuation / _is_chinese_char:
// - every "other" character (Cc, Cf, Co, Cs, Cn: soft hyphen, zero-width space, BOM…) is dropped,
//   except \t \n \r, which are spaces; U+FFFD goes too;
// - spaces are \t \n \r and Zs; Zl and Zp also separate words (Python's str.split() after cleaning);
// - punctuation is ASCII 33–47, 58–64, 91–96, 123–126 (so $ + < = > ^ ` | ~ too) and Unicode P*,
//   but not other symbols: "25°C" and "5€" stay one word;
// - CJK ideographs (the unified blocks, extensions A–F, compatibility ideographs and their
//   supplement) are words of their own.
const DROPPED = /(?![\t\n\r])\p{C}|\ufffd/gu;
const SPACE = /[\t\n\r\p{Z}]/u;
const PUNCT = /[!-/:-@\[-`{-~\p{P}]/u;
const CJK = /[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\u{20000}-\u{2a6df}\u{2a700}-\u{2b73f}\u{2b740}-\u{2b81f}\u{2b820}-\u{2ceaf}\u{2f800}-\u{2fa1f}]/u;

/** Whitespace/punctuation split as BERT's basic tokenizer does it. */
export function basicTokens(text: string, v: Pick<WordPieceVocab, "lowercase" | "stripAccents">): string[] {
  let t = text.replace(DROPPED, "");
  if (v.lowercase) t = t.toLowerCase();
  if (v.stripAccents) t = t.normalize("NFD").replace(/\p{Mn}/gu, "");
  const out: string[] = [];
  let cur = "";
  for (const ch of t) {
    if (SPACE.test(ch)) {
      if (cur) out.push(cur);
      cur = "";
    } else if (PUNCT.test(ch) || CJK.test(ch)) {
      if (cur) out.push(cur);
      out.push(ch);
      cur = "";
    } else {
      cur += ch;
    }
  }
  if (cur) out.push(cur);
  return out;
}

/** Greedy longest-match-first sub-words of one basic token. */
export function wordPieces(word: string, v: WordPieceVocab): string[] {
  const chars = [...word];
  if (chars.length > v.maxWordChars) return [v.unk];
  const out: string[] = [];
  let start = 0;
  while (start < chars.length) {
    let end = chars.length;
    let found: string | null = null;
    while (start < end) {
      const piece = (start > 0 ? v.prefix : "") + chars.slice(start, end).join("");
      if (v.ids.has(piece)) {
        found = piece;
        break;
      }
      end--;
    }
    if (found === null) return [v.unk];
    out.push(found);
    start = end;
  }
  return out;
}

/** [CLS] pieces… [SEP], cut to maxTokens (both markers kept). */
export function encode(text: string, v: WordPieceVocab, maxTokens: number): Encoding {
  const pieces: string[] = [];
  const room = Math.max(0, maxTokens - 2);
  for (const w of basicTokens(text, v)) {
    for (const p of wordPieces(w, v)) pieces.push(p);
    if (pieces.length >= room) break;
  }
  const toks = [v.cls, ...pieces.slice(0, room), v.sep];
  const inputIds = toks.map((t) => v.ids.get(t) ?? v.ids.get(v.unk)!);
  return { inputIds, attentionMask: inputIds.map(() => 1), tokenTypeIds: inputIds.map(() => 0) };
}
