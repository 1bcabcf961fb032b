import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.git', 'bench-results', 'coverage', '.tmp']);

/** Every markdown file of the repository, as paths relative to its root. */
function markdownFiles(folder = root): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : markdownFiles(join(folder, entry.name));
    return entry.isFile() && entry.name.endsWith('.md') ? [relative(root, join(folder, entry.name))] : [];
  });
}

/** The text without fenced code blocks and inline code, where brackets and `#` are not markdown. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/**
 * GitHub's anchor for a heading (as github-slugger makes it): the heading's text, lower-cased,
 * without punctuation or symbols (letters, digits, `_`, `-` and spaces stay), spaces made `-`;
 * a repeated anchor gets `-1`, `-2`, ...
 */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>|[`*]/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    let anchor = slug;
    for (let repeat = 1; anchors.has(anchor); repeat++) anchor = `${slug}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Each relative link of a markdown file that does not resolve: a missing file, or an anchor its target lacks. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const links = [...prose(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]);
  return links.flatMap((link) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) return [];
    const [path, anchor] = link.split('#', 2) as [string, string | undefined];
    const target = path === '' ? join(root, file) : join(root, dirname(file), decodeURIComponent(path));
    if (!existsSync(target)) return [`${file}: ${link} (no such file)`];
    if (anchor === undefined || !target.endsWith('.md')) return [];
    return headingAnchors(readFileSync(target, 'utf8')).has(anchor) ? [] : [`${file}: ${link} (no such heading)`];
  });
}

describe('links between the markdown files', () => {
  it('makes anchors as GitHub does', () => {
    const anchors = headingAnchors(
      [
        "# Non-streaming: 0.41x–0.44x, below the stack's floor",
        '## `server.workers` and [links](x.md)',
        '## Twice',
        '## Twice',
        '```',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    expect([...anchors]).toEqual([
      'non-streaming-041x044x-below-the-stacks-floor',
      'serverworkers-and-links',
      'twice',
      'twice-1',
    ]);
  });

  it('resolve: every relative link names a file that exists, and a heading it has', () => {
    const files = markdownFiles();
    expect(files).toContain('README.md');
    expect(files.filter((file) => file.startsWith('docs/')).length).toBeGreaterThan(5);
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });
});
