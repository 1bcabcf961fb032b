import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NEVER } from 'rxjs';
import { ClusterAdmission } from '../../src/cluster/cluster-admission.js';
import { InstanceAdmission } from '../../src/cluster/instance-admission.js';
import { IpcChannel } from '../../src/cluster/ipc-channel.js';
import { serveAdmission } from '../../src/cluster/primary-handlers.js';

/** One run of admissions through the primary, as `in flight` concurrent loops of reserve, run, release. */
export interface RoundTripResult {
  inFlight: number;
  admissions: number;
  /** Wall time per admission (reserve answered, then the release sent), µs. */
  wallMicrosPerAdmission: number;
  /** From sending a reserve to its answer, mean, µs. */
  roundTripMicros: number;
  /** CPU per admission in the worker's process and in the primary's, µs. */
  workerMicrosPerAdmission: number;
  primaryMicrosPerAdmission: number;
}

const LIMITS = { maxConcurrency: 1_000_000, maxQueue: 0 };
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/**
 * The cost of one coordinated admission alone, without HTTP: a forked process plays the worker
 * (ClusterAdmission) and this one the primary (InstanceAdmission and its handlers), over Node's
 * IPC channel as in a cluster. Each admission reserves a slot, runs nothing, and releases it.
 */
export async function measureAdmissionRoundTrips(
  inFlight: number,
  durationMs: number,
  warmupMs = durationMs / 2,
): Promise<RoundTripResult> {
  const child = fork(fileURLToPath(import.meta.url), ['--admission-worker'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const channel = new IpcChannel((message) => {
    child.send(message);
  });
  child.on('message', (message) => channel.receive(message));
  serveAdmission(channel, 1, new InstanceAdmission(() => undefined));
  const done = new Promise<{ admissions: number; wallMicros: number; roundTripMicros: number; workerMicros: number }>(
    (resolve) => channel.on('done', resolve),
  );
  let before = cpuMicros();
  channel.on('measuring', () => (before = cpuMicros()));
  channel.notify('start', { inFlight, durationMs, warmupMs });
  const result = await done;
  const primaryMicros = cpuMicros() - before;
  child.kill();
  return {
    inFlight,
    admissions: result.admissions,
    wallMicrosPerAdmission: result.wallMicros / result.admissions,
    roundTripMicros: result.roundTripMicros,
    workerMicrosPerAdmission: result.workerMicros / result.admissions,
    primaryMicrosPerAdmission: primaryMicros / result.admissions,
  };
}

/** The worker's side: `inFlight` loops reserve, run and release until the time is up. */
function runWorker(): void {
  const channel = new IpcChannel((message) => {
    process.send!(message);
  });
  process.on('message', (message) => channel.receive(message));
  const admission = new ClusterAdmission(channel).admissionFor('m', LIMITS);
  const measure = async ({
    inFlight,
    durationMs,
    warmupMs,
  }: {
    inFlight: number;
    durationMs: number;
    warmupMs: number;
  }) => {
    // Unmeasured first (the code compiles, the channel's buffers grow), then counted from zero.
    let started = performance.now();
    let cpuBefore = cpuMicros();
    let admissions = 0;
    let roundTrips = 0;
    let measuring = false;
    const warming = setTimeout(() => {
      measuring = true;
      channel.notify('measuring');
      started = performance.now();
      cpuBefore = cpuMicros();
      admissions = 0;
      roundTrips = 0;
    }, warmupMs);
    const loop = async () => {
      // oxlint-disable-next-line no-unmodified-loop-condition -- set by the warm-up timer
      while (!measuring || performance.now() - started < durationMs) {
        const sent = performance.now();
        const ticket = await admission.reserve('m');
        roundTrips += performance.now() - sent;
        ticket.run(NEVER).subscribe().unsubscribe();
        admissions += 1;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, loop));
    clearTimeout(warming);
    channel.notify('done', {
      admissions,
      wallMicros: (performance.now() - started) * 1000,
      roundTripMicros: (roundTrips / admissions) * 1000,
      workerMicros: cpuMicros() - cpuBefore,
    });
  };
  // The run answers over the channel ('done'); nothing awaits the listener.
  channel.on<Parameters<typeof measure>[0]>('start', (params) => void measure(params));
}

if (process.argv.includes('--admission-worker')) runWorker();
