import { request } from 'node:http';
import { eventually as pollUntil } from './gateway.js';
import type { StreamOutcome } from './http-stream.js';

/** The response header naming the worker that answered. */
export const WORKER_HEADER = 'x-gantry-worker';

/** One exchange on a connection of its own (the cluster hands connections to its workers in turn). */
export function exchange(
  base: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  worker: number;
  json: any;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(new URL(path, base), {
      method: payload ? 'POST' : 'GET',
      agent: false,
      headers: {
        ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
        ...headers,
      },
    });
    req.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({
          status: response.statusCode ?? 0,
          worker: Number(response.headers[WORKER_HEADER]),
          json,
          text,
          headers: response.headers,
        });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export const chat = (model: string, text: string) => ({ model, messages: [{ role: 'user', content: text }] });
export const workerOf = (outcome: StreamOutcome) => Number(outcome.headers[WORKER_HEADER]);

/** Workers start, restart and reload slower than one process: a longer wait by default. */
export const eventually = (condition: () => boolean | Promise<boolean>, timeoutMs = 15_000) =>
  pollUntil(condition, timeoutMs);

/** Sends `body` on fresh connections until `accept` held for an answer from each of `count` workers. */
export async function fromEveryWorker(
  base: string,
  path: string,
  body: unknown,
  count: number,
  accept: (answer: Awaited<ReturnType<typeof exchange>>) => boolean,
) {
  const seen = new Map<number, Awaited<ReturnType<typeof exchange>>>();
  const done = await eventually(async () => {
    const answer = await exchange(base, path, body);
    if (accept(answer)) seen.set(answer.worker, answer);
    return seen.size >= count;
  });
  return { done, workers: [...seen.keys()] };
}

export const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
