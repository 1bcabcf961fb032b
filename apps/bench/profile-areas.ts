/**
 * What a gateway's profiles say, by area: a package, a folder of Gantry, a part of Node, the
 * garbage collector. Read by profile-summary.ts from what `npm run bench -- --profile KIND`
 * writes, so that a ratio to the bare proxy can be taken apart area by area (docs/benchmarks.md).
 */

/** The part of a V8 profile node this reads (CPU and sampling heap profiles share it). */
export interface CallFrame {
  functionName: string;
  url: string;
}

/** Where a call frame's code lives: `gc`, `node:streams`, `undici`, `gantry engines/http`, ... */
export function areaOf({ functionName, url }: CallFrame): string {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'gc';
    // Native code: a system call by its name (writev), a builtin or JSON as `native`.
    return /^[a-z][\w]*$/i.test(functionName) ? `native ${functionName}` : 'native';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const node = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (node) return `node:${node[1]}`;
  const own = /\/(src|apps)\/([^/]+)(?:\/([^/]+)\/)?/.exec(url);
  if (own) return `${own[1] === 'src' ? 'gantry' : 'apps'} ${own[2]}${own[3] ? `/${own[3]}` : ''}`;
  return url;
}

/** A `.cpuprofile` (the inspector's Profile). */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame & { lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  name: string;
  ms: number;
  /** Of the busy time (samples other than idle and the program's own bookkeeping). */
  share: number;
}

export interface CpuSummary {
  busyMs: number;
  areas: Share[];
  functions: Share[];
}

/** Self time by area and by function, leaving out the first `skipMs` (the start). */
export function summarizeCpuProfile(profile: CpuProfile, skipMs = 0): CpuSummary {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let clock = 0;
  let busy = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    clock += delta;
    const frame = frames.get(id);
    if (clock < skipMs * 1000 || frame === undefined || frame.functionName === '(idle)') return;
    busy += delta;
    add(byArea, areaOf(frame), delta);
    add(byFunction, `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`, delta);
  });
  return { busyMs: busy / 1000, areas: shares(byArea, busy), functions: shares(byFunction, busy) };
}

/** A sampling heap profile (`.heapprofile`): its tree of allocation sites. */
export interface HeapProfileNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapProfileNode[];
}

/** Bytes allocated by area (for `--profile heap`, those still live at exit; collected ones too where sampled so). */
export function summarizeHeapProfile(head: HeapProfileNode): Array<{ name: string; bytes: number }> {
  const byArea = new Map<string, number>();
  const visit = (node: HeapProfileNode) => {
    add(byArea, areaOf(node.callFrame), node.selfSize);
    node.children.forEach(visit);
  };
  visit(head);
  return [...byArea].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/** Totals of a `--trace-gc-nvp` log: what the collector copied is what it costs, not the garbage. */
export interface GcSummary {
  scavenges: number;
  markCompacts: number;
  /** Main-thread pauses, all kinds. */
  pauseMs: number;
  /** Helper threads' scavenging, beside the pauses (CPU the process pays, not a profile's samples). */
  backgroundScavengeMs: number;
  allocatedMb: number;
  /** Young objects a scavenge kept and copied within the young generation. */
  survivedMb: number;
  /** Young objects a scavenge moved to the old generation (freed only by a mark-compact). */
  promotedMb: number;
}

export function summarizeGcTrace(log: string): GcSummary {
  const summary: GcSummary = {
    scavenges: 0,
    markCompacts: 0,
    pauseMs: 0,
    backgroundScavengeMs: 0,
    allocatedMb: 0,
    survivedMb: 0,
    promotedMb: 0,
  };
  for (const line of log.split('\n')) {
    const kind = / gc=(\w+)/.exec(line)?.[1];
    if (kind === undefined) continue;
    const field = (name: string) => Number(new RegExp(` ${name.replace(/\./g, '\\.')}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    summary.pauseMs += field('pause');
    if (kind === 's') {
      summary.scavenges += 1;
      summary.backgroundScavengeMs += field('background.scavenge.parallel');
      summary.allocatedMb += field('allocated') / 1e6;
      summary.survivedMb += field('new_space_survived') / 1e6;
      summary.promotedMb += field('promoted') / 1e6;
    } else if (kind === 'mc') summary.markCompacts += 1;
  }
  return summary;
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

function shares(map: Map<string, number>, total: number): Share[] {
  return [...map]
    .map(([name, micros]) => ({ name, ms: micros / 1000, share: total === 0 ? 0 : micros / total }))
    .sort((a, b) => b.ms - a.ms);
}

function shortUrl(url: string): string {
  return url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, '');
}
