// Token counting with a real BPE vocabulary (gpt-tokenizer), so a budget in tokens means what a
// model will see. The vocabulary loads once (~0.2 s); `preload` lets servers pay it at start.
export interface TokenCounter {
  count(text: string): number;
}

export type TokenizerName = "o200k_base" | "cl100k_base";

const loaded = new Map<TokenizerName, Promise<TokenCounter>>();

export function loadTokenCounter(name: TokenizerName): Promise<TokenCounter> {
  let p = loaded.get(name);
  if (!p) {
    p = (name === "cl100k_base" ? import("gpt-tokenizer/encoding/cl100k_base") : import("gpt-tokenizer/encoding/o200k_base")).then(
      (m) => ({ count: (text: string) => m.countTokens(text) }),
    );
    loaded.set(name, p);
  }
  return p;
}
