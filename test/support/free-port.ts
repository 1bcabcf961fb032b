// For specs under src/, which may use test support but not apps/ (the import rules).
export { freePort } from '../../apps/bench/loopback.js';
