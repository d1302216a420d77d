/** Just enough Markdown reading for the docs tests: fenced blocks, links and heading anchors. */

export interface FencedBlock {
  /** The info string after the opening fence (`sh`, `text`, `json` …). */
  readonly info: string;
  readonly body: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
}

export interface MarkdownLink {
  readonly target: string;
  readonly line: number;
}

/** The fenced code blocks (```), in order. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split('\n');
  let open: { info: string; line: number; indent: string; body: string[] } | undefined;
  for (const [index, line] of lines.entries()) {
    const fence = /^(\s*)```(.*)$/.exec(line);
    if (open === undefined) {
      if (fence !== null) open = { info: (fence[2] ?? '').trim(), line: index + 1, indent: fence[1] ?? '', body: [] };
    } else if (fence !== null && (fence[2] ?? '').trim() === '') {
      blocks.push({ info: open.info, body: open.body.join('\n'), line: open.line });
      open = undefined;
    } else {
      open.body.push(line.startsWith(open.indent) ? line.slice(open.indent.length) : line);
    }
  }
  return blocks;
}

/** The text outside fenced blocks and inline code, where links and headings live; line numbers are kept. */
function prose(markdown: string): string[] {
  let inFence = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line.replace(/`[^`]*`/g, (code) => (code.includes('](') ? '' : code));
  });
}

/** Links and images: `[text](target)`, with their line. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const [index, line] of prose(markdown).entries()) {
    for (const match of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      links.push({ target: match[1] ?? '', line: index + 1 });
    }
  }
  return links;
}

/**
 * The anchors a page offers: GitHub's slug of each heading (lower-cased, punctuation dropped,
 * spaces to hyphens, `-1`, `-2` … for repeats) and every explicit `id="…"`.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading !== null) {
      const base = (heading[1] ?? '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/ /g, '-');
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${String(count)}`);
    }
    for (const match of line.matchAll(/\bid="([^"]+)"/g)) anchors.add(match[1] ?? '');
  }
  return anchors;
}
