/**
 * Where `GET /metrics` takes its text from when it is not this process's registry alone: a worker
 * of several answers for the whole instance (the primary sums every worker's series).
 */
export abstract class MetricsExposition {
  abstract expose(): Promise<string>;
}
