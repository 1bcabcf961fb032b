import { Writable } from 'node:stream';

/** A log destination for a gateway (`observability.logDestination`) that keeps every JSON line. */
export interface LogCapture {
  destination: Writable;
  /** The lines as written. */
  raw: string[];
  /** The same lines, parsed. */
  lines: Array<Record<string, unknown>>;
}

export function captureLogs(): LogCapture {
  const raw: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { destination, raw, lines };
}
