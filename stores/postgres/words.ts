// What PostgreSQL's text search parser reads of a text (session index, skill search): ASCII
// punctuation as spaces. The parser keeps 'alice.smith@corp.com', 'vpn.acme-corp.io',
// '/home/a/b.pem', 'package.json' and '4417-9921' whole (an email, a host, a file, a signed
// '-9921'), so a word inside them was found nowhere; SQLite's tokenizer splits at every mark.

const PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/** `sql` (a text expression) with every ASCII punctuation mark as a space, for to_tsvector / plainto_tsquery */
export function splitPunct(sql: string): string {
  return `translate(${sql}, '${PUNCT.replace(/'/g, "''")}', '${" ".repeat(PUNCT.length)}')`;
}
