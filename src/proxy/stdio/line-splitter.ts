/**
 * Newline-delimited JSON-RPC framing (MCP stdio): feed bytes, get complete lines. Bytes are split on `\n` only
 * (messages contain no raw newlines); a trailing `\r` is dropped as the MCP SDK's reader does.
 */
export class LineSplitter {
  private pending: Buffer[] = [];

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      this.pending.push(chunk.subarray(start, i));
      const line = Buffer.concat(this.pending).toString('utf8');
      this.pending = [];
      lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
      start = i + 1;
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
    return lines;
  }

  /** What arrived after the last newline (an unterminated last message). */
  rest(): string {
    return Buffer.concat(this.pending).toString('utf8');
  }
}
