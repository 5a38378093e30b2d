// Token counting with a real BPE vocabulary (gpt-tokenizer), so a budget in tokens means what a
// model will see. The vocabulary loads once (~0.2 s); `preload` lets servers pay it at start.
export interface TokenCounter {
  count(text: string): number;
}

export type TokenizerName = "o200k_base" | "cl100k_base";

const PLAIN = new Set<string>();

const loaded = new Map<TokenizerName, Promise<TokenCounter>>();

export function loadTokenCounter(name: TokenizerName): Promise<TokenCounter> {
  let p = loaded.get(name);
  if (!p) {
    p = (name === "cl100k_base" ? import("gpt-tokenizer/encoding/cl100k_base") : import("gpt-tokenizer/encoding/o200k_base")).then(
      // Special tokens ("<|endoftext|>") count as the plain text they are in a prefix: the library
      // throws on them by default, which would fail a whole prefix over one odd line.
      (m) => ({ count: (text: string) => m.countTokens(text, { disallowedSpecial: PLAIN }) }),
    );
    loaded.set(name, p);
  }
  return p;
}
