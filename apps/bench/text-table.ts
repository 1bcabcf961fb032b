export type Cell = string | number | undefined | null;

/**
 * A plain-text table: a header row, a rule, then the rows; text columns are left-aligned and
 * numeric ones right-aligned (a column is numeric when every non-empty cell in it is a number).
 * Empty cells (undefined, null) print as `-`.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const numeric = headers.map((_, column) =>
    rows.every((row) => row[column] === undefined || row[column] === null || typeof row[column] === 'number'),
  );
  const text = rows.map((row) => headers.map((_, column) => cellText(row[column])));
  const widths = headers.map((header, column) => Math.max(header.length, ...text.map((row) => row[column].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...text.map(line)].join('\n');
}

function cellText(cell: Cell): string {
  if (cell === undefined || cell === null) return '-';
  if (typeof cell === 'string') return cell;
  return formatNumber(cell);
}

/** Three significant digits, thousands grouped for large values: 0.0123, 1.23, 123, 12,345. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString('en-US');
  if (magnitude === 0) return '0';
  return Number(value.toPrecision(3)).toString();
}
