/**
 * Finds stop strings in streamed text. Text that could still become the start of a stop string is
 * held back until the next piece settles it, so a stop string split across tokens is never shown
 * to the client (this is why an engine can ack a token without a delta).
 */
export class StopStringMatcher {
  private held = '';
  private readonly stops: string[];

  constructor(stops: readonly string[]) {
    this.stops = stops.filter((stop) => stop.length > 0);
  }

  /** Feeds the next piece; returns the text that is safe to show and the stop string, if one matched. */
  push(text: string): { emit: string; stop?: string } {
    const buffer = this.held + text;
    if (this.stops.length === 0) return { emit: buffer };

    let earliest = -1;
    let matched: string | undefined;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at !== -1 && (earliest === -1 || at < earliest || (at === earliest && stop.length > matched!.length))) {
        earliest = at;
        matched = stop;
      }
    }
    if (matched !== undefined) {
      this.held = '';
      return { emit: buffer.slice(0, earliest), stop: matched };
    }

    const keep = this.longestPartialSuffix(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return { emit: buffer.slice(0, buffer.length - keep) };
  }

  /** Releases what was held back: the output ended without completing a stop string. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }

  /** Length of the longest suffix of `buffer` that is a proper prefix of some stop string. */
  private longestPartialSuffix(buffer: string): number {
    let longest = 0;
    for (const stop of this.stops) {
      const max = Math.min(stop.length - 1, buffer.length);
      for (let length = max; length > longest; length -= 1) {
        if (buffer.endsWith(stop.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
