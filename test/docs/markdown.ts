/**
 * @module Reading the repository's Markdown as the docs tests need it: which files are the docs,
 * their fenced code blocks with the marks in their info strings, their links, and the anchors a link
 * may point at (explicit `<a id>` and GitHub's heading slugs).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** README.md first, then docs/*.md by name: the order the examples run in. */
export function docFiles(): string[] {
  const docs = readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export function readDoc(file: string): string {
  return readFileSync(join(REPO, file), 'utf8');
}

export interface FencedBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The info string's first word (`sh`), empty when there is none. */
  readonly lang: string;
  /** The info string's other words (`test`, `cluster`, …). */
  readonly marks: readonly string[];
  /** The lines between the fences, less the fence's indentation, joined with newlines. */
  readonly content: string;
}

const OPENING = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/** Every fenced code block of a Markdown text (CommonMark fences, indented up to three spaces, as in list items). */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i] as string);
    if (open === null) continue;
    const [, indent = '', fence = '', info = ''] = open;
    // A backtick fence's info string may not contain a backtick: such a line is inline code.
    if (fence.startsWith('`') && info.includes('`')) continue;
    const closing = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !closing.test(lines[j] as string); j++) {
      const line = lines[j] as string;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    const [lang = '', ...marks] = info.trim().split(/\s+/).filter(Boolean);
    blocks.push({ line: i + 1, lang, marks, content: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The text with every fenced block blanked (lines kept), so links and headings are read outside code only. */
export function withoutFencedBlocks(text: string): string {
  const lines = text.split('\n');
  for (const block of fencedBlocks(text)) {
    const lineCount = block.content === '' ? 0 : block.content.split('\n').length;
    for (let k = block.line - 1; k <= block.line + lineCount && k < lines.length; k++) lines[k] = '';
  }
  return lines.join('\n');
}

/** Inline code spans blanked: a `[x](y)` inside backticks is not a link. */
function withoutInlineCode(line: string): string {
  return line.replace(/(`+)[\s\S]*?\1/g, (span) => ' '.repeat(span.length));
}

export interface Link {
  readonly line: number;
  readonly target: string;
}

/** Every inline link and image of the text, outside code. */
export function links(text: string): Link[] {
  const found: Link[] = [];
  withoutFencedBlocks(text)
    .split('\n')
    .forEach((raw, index) => {
      for (const match of withoutInlineCode(raw).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
        found.push({ line: index + 1, target: match[1] as string });
    });
  return found;
}

/** GitHub's slug of a heading: lower case, punctuation dropped, spaces to dashes. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a document: explicit `<a id>`/`<a name>`, and each heading's slug (repeats get `-1`, `-2`, …). */
export function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFencedBlocks(text).split('\n')) {
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1] as string);
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const slug = headingSlug(heading[1] as string);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}
