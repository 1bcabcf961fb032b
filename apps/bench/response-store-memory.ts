/**
 * Heap held by the memory response store: per stored response (a typical one: three input
 * messages, about 1 KB of output text, kept as the routes keep it: created, then completed) and
 * per kept event of a background stream (an output_text delta), measured after a full GC.
 *
 *   npm run build && node --expose-gc dist/apps/bench/response-store-memory.js [--responses 5000] [--events 100000]
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { MemoryResponseStore } from '../../src/stored-responses/memory-response-store.js';
import type { ResponseObject, StoredEvent, StoredItem } from '../../src/stored-responses/response-store.js';

export interface ResponseStoreMemory {
  /** Heap bytes per stored response. */
  bytesPerResponse: number;
  /** Heap bytes per kept event. */
  bytesPerEvent: number;
  /** The store's own count of JSON bytes per response (what `maxStoredBytes` bounds). */
  jsonBytesPerResponse: number;
  /** The store's own count of JSON bytes per event. */
  jsonBytesPerEvent: number;
}

const WORDS = 'the gateway keeps each response for later turns so a client can continue where it left off'.split(' ');
const DELTA_EVENT = 'response.output_text.delta';

const text = (length: number, seed: number) => {
  let out = '';
  for (let index = seed; out.length < length; index++) out += `${WORDS[index % WORDS.length]} `;
  return out.slice(0, length);
};

const hexId = (prefix: string, n: number) =>
  `${prefix}_${n.toString(16).padStart(8, '0')}${'a1b2c3d4e5f60718293a4b5c'.slice(0, 24)}`;

function message(id: string, role: 'user' | 'assistant', body: string): StoredItem {
  const type = role === 'user' ? 'input_text' : 'output_text';
  return {
    id,
    type: 'message',
    role,
    status: 'completed',
    content: [{ type, text: body, ...(role === 'assistant' ? { annotations: [], logprobs: [] } : {}) }],
  };
}

/** A Response object as the Responses route writes it, with every field OpenAI's has. */
function responseOf(id: string, status: string, output: StoredItem[]): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: 1_760_000_000,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: 'llama-3.1-8b',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: {
      input_tokens: 180,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 240,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 420,
    },
    user: null,
    metadata: {},
  };
}

function deltaEvent(sequence: number, itemId: string): StoredEvent {
  const data = JSON.stringify({
    type: DELTA_EVENT,
    sequence_number: sequence,
    item_id: itemId,
    output_index: 0,
    content_index: 0,
    delta: ` ${WORDS[sequence % WORDS.length]}`,
    logprobs: [],
  });
  return { sequence, event: DELTA_EVENT, data };
}

function heapAfterGc(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function requireGc(): () => void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('Run with node --expose-gc: the figures are taken after a full GC.');
  return gc;
}

async function storeResponses(store: MemoryResponseStore, count: number, offset: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    const n = offset + index;
    const id = hexId('resp', n);
    await store.create({
      response: responseOf(id, 'queued', []),
      inputItems: [
        message(hexId('msg', 4 * n), 'user', text(200, n)),
        message(hexId('msg', 4 * n + 1), 'assistant', text(300, n + 1)),
        message(hexId('msg', 4 * n + 2), 'user', text(200, n + 2)),
      ],
      previousResponseId: null,
    });
    await store.update(responseOf(id, 'completed', [message(hexId('msg', 4 * n + 3), 'assistant', text(1024, n + 3))]));
  }
}

/** Opens `logs` background responses (nothing appended yet); returns their ids. */
async function openLogs(store: MemoryResponseStore, logs: number, offset: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < logs; index++) {
    const id = hexId('resp', offset + index);
    await store.create({ response: responseOf(id, 'in_progress', []), inputItems: [], previousResponseId: null });
    ids.push(id);
  }
  return ids;
}

/** Appends `perLog` deltas to each log as a background run does: a few events per turn of the event loop. */
async function appendEvents(store: MemoryResponseStore, ids: readonly string[], perLog: number): Promise<void> {
  for (const id of ids) {
    const itemId = id.replace('resp_', 'msg_');
    for (let sequence = 0; sequence < perLog; sequence += 8) {
      const batch: StoredEvent[] = [];
      for (let index = sequence; index < Math.min(sequence + 8, perLog); index++) batch.push(deltaEvent(index, itemId));
      await store.append(id, batch, false);
    }
  }
}

/** Heap per stored response and per kept event in the memory store (needs `node --expose-gc`). */
export async function measureResponseStoreMemory(
  options: { responses?: number; events?: number } = {},
): Promise<ResponseStoreMemory> {
  const gc = requireGc();
  const responses = options.responses ?? 5_000;
  const events = options.events ?? 100_000;
  const bounds = { maxStoredResponses: 10_000_000, maxStoredBytes: 2 ** 40, maxEventsPerResponse: 10_000_000 };

  const perLog = 1_000;
  // Warm up: compiled code and one-time allocations are not per response.
  const warm = new MemoryResponseStore(bounds);
  await storeResponses(warm, 200, 900_000_000);
  await appendEvents(warm, await openLogs(warm, 2, 900_000_000), perLog);
  await warm.close();

  const responseStore = new MemoryResponseStore(bounds);
  const beforeResponses = heapAfterGc(gc);
  await storeResponses(responseStore, responses, 0);
  const afterResponses = heapAfterGc(gc);
  const jsonBytesPerResponse = responseStore.bytes / responses;
  await responseStore.close();

  // The logs' own responses are made before the first reading: what grows after is the events'.
  const eventStore = new MemoryResponseStore(bounds);
  const ids = await openLogs(eventStore, Math.ceil(events / perLog), 0);
  const jsonBytesOfLogs = eventStore.bytes;
  const beforeEvents = heapAfterGc(gc);
  await appendEvents(eventStore, ids, perLog);
  const afterEvents = heapAfterGc(gc);
  const kept = ids.length * perLog;
  const jsonBytesPerEvent = (eventStore.bytes - jsonBytesOfLogs) / kept;
  await eventStore.close();

  return {
    bytesPerResponse: (afterResponses - beforeResponses) / responses,
    bytesPerEvent: (afterEvents - beforeEvents) / kept,
    jsonBytesPerResponse,
    jsonBytesPerEvent,
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { responses: { type: 'string', default: '5000' }, events: { type: 'string', default: '100000' } },
  });
  const responses = Number(values.responses);
  const events = Number(values.events);
  if (![responses, events].every((n) => Number.isInteger(n) && n > 0)) {
    process.stderr.write('--responses and --events take positive integers\n');
    return 2;
  }
  const figures = await measureResponseStoreMemory({ responses, events });
  process.stdout.write(
    `memory response store, heap after a full GC (${responses} responses: 3 input messages, ~1 KB output; ${events} output_text deltas)\n` +
      `  per stored response: ${Math.round(figures.bytesPerResponse)} bytes (JSON counted by the store: ${Math.round(figures.jsonBytesPerResponse)})\n` +
      `  per kept event:      ${Math.round(figures.bytesPerEvent)} bytes (JSON counted by the store: ${Math.round(figures.jsonBytesPerEvent)})\n`,
  );
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => (process.exitCode = code),
    (error: Error) => {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
    },
  );
}
