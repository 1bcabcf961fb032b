/** How the client styles its output: ANSI escapes on a terminal, nothing for pipes and files. */
export interface TextStyle {
  dim(text: string): string;
  bold(text: string): string;
  cyan(text: string): string;
  red(text: string): string;
  /** Back to column 0 and erase the line: how the status line is redrawn and removed. */
  readonly clearLine: string;
}

export const ANSI: TextStyle = {
  dim: (text) => `\x1b[2m${text}\x1b[22m`,
  bold: (text) => `\x1b[1m${text}\x1b[22m`,
  cyan: (text) => `\x1b[36m${text}\x1b[39m`,
  red: (text) => `\x1b[31m${text}\x1b[39m`,
  clearLine: '\r\x1b[K',
};

export const PLAIN: TextStyle = {
  dim: (text) => text,
  bold: (text) => text,
  cyan: (text) => text,
  red: (text) => text,
  clearLine: '',
};
