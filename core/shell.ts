// Commands we print for a person to paste into a POSIX shell: each word quoted only when it has
// characters the shell would read (a tool pattern such as Bash(git log:*) has parentheses and a space).

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
