import { describe, expect, it } from 'vitest';
import { formatNumber, renderTable } from './text-table.js';

describe('renderTable', () => {
  it('aligns text left and numbers right, with a rule under the header and - for empty cells', () => {
    const table = renderTable(
      ['target', 'chunks/s', 'ratio'],
      [
        ['direct', 139522.4, undefined],
        ['gantry http', 98000, '0.70x'],
      ],
    );
    expect(table).toBe(
      [
        'target       chunks/s  ratio',
        '-----------  --------  -----',
        'direct        139,522  -',
        'gantry http    98,000  0.70x',
      ].join('\n'),
    );
  });
});

describe('formatNumber', () => {
  it('keeps three significant digits below 1000 and groups thousands', () => {
    expect(formatNumber(0.012345)).toBe('0.0123');
    expect(formatNumber(12.345)).toBe('12.3');
    expect(formatNumber(999.4)).toBe('999');
    expect(formatNumber(12345.6)).toBe('12,346');
    expect(formatNumber(0)).toBe('0');
  });
});
