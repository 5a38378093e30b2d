// Newline framing as tokio's LinesCodec does it: a line ends at "\n", a trailing "\r" is not part
// of it, and bytes without a newline wait for more. Complete lines come back as the exact bytes
// received so they can be relayed unchanged; a chunk is scanned once, however long the line.

export class LineTooLongError extends Error {
  constructor(readonly limit: number) {
    super(`line longer than ${limit} bytes`);
    this.name = "LineTooLongError";
  }
}

export interface PushResult {
  /** every complete line of this push, terminators included, as one buffer (null when none) */
  bytes: Buffer | null;
  /** the same lines without their terminators */
  lines: Buffer[];
}

export class LineBuffer {
  private parts: Buffer[] = [];
  private pending = 0;

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Buffer): PushResult {
    const last = chunk.lastIndexOf(0x0a);
    if (last < 0) {
      this.pending += chunk.length;
      if (this.pending > this.maxLineBytes) throw new LineTooLongError(this.maxLineBytes);
      this.parts.push(chunk);
      return { bytes: null, lines: [] };
    }
    const head = chunk.subarray(0, last + 1);
    const bytes = this.parts.length > 0 ? Buffer.concat([...this.parts, head]) : head;
    const rest = chunk.subarray(last + 1);
    this.parts = rest.length > 0 ? [rest] : [];
    this.pending = rest.length;
    if (this.pending > this.maxLineBytes) throw new LineTooLongError(this.maxLineBytes);
    const lines: Buffer[] = [];
    let start = 0;
    for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, start)) {
      if (nl - start > this.maxLineBytes) throw new LineTooLongError(this.maxLineBytes);
      lines.push(bytes.subarray(start, nl));
      start = nl + 1;
    }
    return { bytes, lines };
  }

  /** the bytes after the last newline */
  rest(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
  }

  get pendingBytes(): number {
    return this.pending;
  }
}

/** a line's text as LinesCodec yields it: UTF-8, without a trailing "\r" */
export function lineText(line: Buffer): string {
  const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
  return line.toString("utf8", 0, end);
}
