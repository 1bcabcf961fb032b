import type { Cell } from './text-table.js';

/** Failed requests of every reason. */
export const failuresOf = (failures: Record<string, number>) =>
  Object.values(failures).reduce((sum, count) => sum + count, 0);

/** Milliseconds to two decimals. */
export const ms = (value: number | undefined): Cell => (value === undefined ? undefined : Number(value.toFixed(2)));

/** Microseconds to one decimal; none where nothing was measured. */
export const micros = (value: number | undefined): Cell =>
  value === undefined || Number.isNaN(value) ? undefined : Number(value.toFixed(1));
