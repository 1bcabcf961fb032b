import { describe, expect, it } from 'vitest';
import { AnswerRenderer, type TextSink } from './answer-renderer.js';
import type { ClientEvent } from './client-event.js';

/** A sink that keeps what was written. */
class Collector implements TextSink {
  text = '';
  write(text: string): void {
    this.text += text;
  }
}

/** A renderer over collectors, and a clock moved by hand. */
function setup(ansi: boolean, separateSide = false) {
  let now = 1000;
  const answer = new Collector();
  const side = separateSide ? new Collector() : answer;
  const renderer = new AnswerRenderer({ answer, side, ansi, clock: () => now });
  const at = (ms: number, ...events: ClientEvent[]) => {
    now = 1000 + ms;
    for (const event of events) renderer.handle(event);
  };
  return { renderer, answer, side, at };
}

const STATUS_CLEAR = '\r\x1b[K';
const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
/** What a terminal shows: each erase-line drops the line written so far, styles removed. */
const screen = (text: string) => stripAnsi(text.replace(/[^\n]*\r\x1b\[K/g, ''));

describe('AnswerRenderer on a terminal', () => {
  it('shows a status line with the heartbeats while waiting and erases it before the first output', () => {
    const { renderer, answer, at } = setup(true);
    at(0, { type: 'opened' });
    at(100, { type: 'heartbeat' });
    at(200, { type: 'heartbeat' });
    at(3200, { type: 'heartbeat' });
    renderer.tick();
    const lastStatus = stripAnsi(answer.text.slice(answer.text.lastIndexOf(STATUS_CLEAR)));
    expect(lastStatus).toBe('\r⠙ prefilling… ♥ 3 heartbeats · 3.2 s');

    at(3500, { type: 'text', text: 'Hello' });
    expect(answer.text.endsWith(`${STATUS_CLEAR}Hello`)).toBe(true);
    renderer.tick();
    at(3600, { type: 'heartbeat' }, { type: 'text', text: ' world' });
    expect(answer.text.endsWith(`${STATUS_CLEAR}Hello world`)).toBe(true);
  });

  it('says generating once prefill ended (usage or timings) and the heart flashes on a beat', () => {
    const { answer, at } = setup(true);
    at(0, { type: 'opened' }, { type: 'heartbeat' });
    expect(answer.text).toContain('\x1b[31m♥\x1b[39m');
    at(900, { type: 'usage', usage: { promptTokens: 3, completionTokens: 0 } });
    expect(stripAnsi(answer.text.slice(answer.text.lastIndexOf(STATUS_CLEAR)))).toBe(
      '\r⠋ generating… ♥ 1 heartbeat · 0.9 s',
    );
    expect(answer.text.endsWith('\x1b[2m♥\x1b[22m \x1b[2m1 heartbeat · 0.9 s\x1b[22m')).toBe(true);
  });

  it('dims reasoning, puts the answer on its own line, and ends with the stats line', () => {
    const { renderer, answer, at } = setup(true);
    at(0, { type: 'opened' });
    at(1230, { type: 'reasoning', text: 'think' });
    at(1300, { type: 'text', text: 'Answer' });
    at(1400, { type: 'usage', usage: { promptTokens: 12, completionTokens: 48 } });
    at(1400, { type: 'timings', timings: { predicted_n: 48, predicted_ms: 564, predicted_per_second: 85.1 } });
    at(1400, { type: 'done', finishReason: 'stop' });
    renderer.end();
    const afterStatus = answer.text.slice(answer.text.lastIndexOf(STATUS_CLEAR) + STATUS_CLEAR.length);
    expect(afterStatus).toBe(
      '\x1b[2mthink\x1b[22m\nAnswer\n\x1b[2mprompt 12 tok · completion 48 tok · TTFT 1.23 s · 85.1 tok/s\x1b[22m\n',
    );
  });

  it('gives each tool call its own line', () => {
    const { renderer, answer, at } = setup(true);
    at(10, { type: 'text', text: 'Let me check.' });
    at(20, { type: 'tool_call_start', index: 0, id: 'call_1', name: 'get_weather' });
    at(
      30,
      { type: 'tool_call_args', index: 0, fragment: '{"city":' },
      { type: 'tool_call_args', index: 0, fragment: '"Paris"}' },
    );
    at(
      40,
      { type: 'tool_call_start', index: 1, name: 'get_time' },
      { type: 'tool_call_args', index: 1, fragment: '{}' },
    );
    renderer.end();
    expect(screen(answer.text).split('\n')).toEqual([
      'Let me check.',
      '→ tool call get_weather {"city":"Paris"}',
      '→ tool call get_time {}',
      'TTFT 0.01 s · 166.7 tok/s',
      '',
    ]);
  });

  it('notes a stopped answer and an error, and leaves out what it does not know', () => {
    const stopped = setup(true);
    stopped.at(0, { type: 'opened' }, { type: 'usage', usage: { promptTokens: 0, completionTokens: 0 } });
    stopped.renderer.end(true);
    expect(stripAnsi(stopped.answer.text.slice(stopped.answer.text.lastIndexOf(STATUS_CLEAR)))).toBe('\r(stopped)\n');

    const failed = setup(true);
    failed.at(50, { type: 'error', message: 'HTTP 404: no such model' });
    failed.renderer.end();
    expect(failed.answer.text.endsWith(`${STATUS_CLEAR}\x1b[31merror: HTTP 404: no such model\x1b[39m\n`)).toBe(true);
  });
});

describe('AnswerRenderer for pipes', () => {
  it('writes the answer alone on its stream and everything else, without escapes, on the side', () => {
    const { renderer, answer, side, at } = setup(false, true);
    at(0, { type: 'opened' }, { type: 'heartbeat' });
    at(500, { type: 'reasoning', text: 'think' });
    at(1000, { type: 'text', text: 'one' });
    at(1100, { type: 'text', text: ' two' });
    at(1200, { type: 'text', text: ' three' });
    at(
      1300,
      { type: 'usage', usage: { promptTokens: 3, completionTokens: 3 } },
      { type: 'done', finishReason: 'length' },
    );
    renderer.tick();
    renderer.end();
    expect(answer.text).toBe('one two three\n');
    // No timings: speed from arrival times, (3 - 1) tokens over the 0.7 s from the first output
    // (the reasoning) to the last.
    expect(side.text).toBe('think\n(cut at max tokens)\nprompt 3 tok · completion 3 tok · TTFT 0.50 s · 2.9 tok/s\n');
  });
});
