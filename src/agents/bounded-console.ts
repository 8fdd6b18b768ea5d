// A build's console as every agent keeps it: chunks in order, up to the contract's bound for the
// whole build (`consoleChars`), the last chunk kept saying `truncated` when the rest was cut.

import { agentContract } from './contract.js';

export type ConsoleStream = 'stdout' | 'stderr';

/** A piece of the console and when it was written (`T`: the time as the agent knows it). */
export interface ConsoleChunk<T> {
  readonly t: T;
  readonly stream: ConsoleStream;
  text: string;
  truncated?: boolean;
}

export class BoundedConsole<T> {
  readonly chunks: ConsoleChunk<T>[] = [];
  private chars = 0;
  private cut = false;

  /**
   * @param mergeUpTo text that follows a chunk of the same stream shorter than this joins it
   *   (a console copied as it passes through arrives in many small writes); 0 keeps every piece.
   */
  constructor(
    private readonly mergeUpTo = 0,
    private readonly limit = agentContract().bounds.consoleChars,
  ) {}

  add(stream: ConsoleStream, text: string, t: T): void {
    if (text === '' || this.cut) return;
    if (this.chars + text.length > this.limit) {
      text = text.slice(0, this.limit - this.chars);
      this.cut = true;
    }
    this.chars += text.length;
    const last = this.chunks.at(-1);
    if (text !== '') {
      if (last !== undefined && last.stream === stream && last.text.length < this.mergeUpTo) last.text += text;
      else this.chunks.push({ t, stream, text });
    }
    if (this.cut && this.chunks.length > 0) this.chunks.at(-1)!.truncated = true;
  }
}
