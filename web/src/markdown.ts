// Markdown of board text panels, parsed into a small tree that components render as elements:
// no HTML from the text is ever interpreted (a `<script>` stays text), and links are kept only
// for http(s) and mailto addresses. Covers what panels use: headings, paragraphs, lists,
// block quotes, code blocks, rules, emphasis, strong, inline code and links.
export type Inline =
  | { t: 'text'; text: string }
  | { t: 'em' | 'strong'; children: Inline[] }
  | { t: 'code'; text: string }
  | { t: 'link'; href: string; children: Inline[] };

export type Block =
  | { t: 'heading'; level: number; children: Inline[] }
  | { t: 'paragraph'; children: Inline[] }
  | { t: 'list'; ordered: boolean; items: Inline[][] }
  | { t: 'quote'; children: Inline[] }
  | { t: 'codeblock'; text: string }
  | { t: 'rule' };

export function safeHref(href: string): string | undefined {
  const h = href.trim();
  return /^(https?:\/\/|mailto:)/i.test(h) ? h : undefined;
}

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let buf = '';
  const flush = () => {
    if (buf) out.push({ t: 'text', text: buf });
    buf = '';
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    let m: RegExpExecArray | null;
    if (rest[0] === '\\' && rest.length > 1) {
      buf += rest[1];
      i += 2;
    } else if ((m = /^`([^`]+)`/.exec(rest))) {
      flush();
      out.push({ t: 'code', text: m[1] });
      i += m[0].length;
    } else if ((m = /^\[([^\]]*)\]\(([^)\s]*)\)/.exec(rest))) {
      flush();
      const href = safeHref(m[2]);
      const children = parseInline(m[1]);
      if (href) out.push({ t: 'link', href, children });
      else out.push(...children);
      i += m[0].length;
    } else if ((m = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest))) {
      flush();
      out.push({ t: 'strong', children: parseInline(m[2]) });
      i += m[0].length;
    } else if ((m = /^(\*|_)(?=\S)([\s\S]*?\S)\1/.exec(rest))) {
      flush();
      out.push({ t: 'em', children: parseInline(m[2]) });
      i += m[0].length;
    } else if ((m = /^https?:\/\/[^\s<>()]+[^\s<>().,;:!?]/.exec(rest))) {
      flush();
      out.push({ t: 'link', href: m[0], children: [{ t: 'text', text: m[0] }] });
      i += m[0].length;
    } else {
      buf += rest[0];
      i += 1;
    }
  }
  flush();
  return out;
}

export function parseMarkdown(src: string): Block[] {
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) {
      i++;
      continue;
    }
    let m: RegExpExecArray | null;
    if (/^```/.test(line)) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^```/.test(lines[i])) body.push(lines[i++]);
      i++;
      blocks.push({ t: 'codeblock', text: body.join('\n') });
    } else if ((m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
      blocks.push({ t: 'heading', level: m[1].length, children: parseInline(m[2]) });
      i++;
    } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      blocks.push({ t: 'rule' });
      i++;
    } else if (/^\s*>/.test(line)) {
      const body: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''));
      blocks.push({ t: 'quote', children: parseInline(body.join(' ')) });
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: Inline[][] = [];
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        items.push(parseInline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, '')));
        i++;
      }
      blocks.push({ t: 'list', ordered, items });
    } else {
      const body: string[] = [];
      while (i < lines.length && !/^\s*$/.test(lines[i]) && !/^(#{1,6}\s|```|\s*>|\s*([-*+]|\d+[.)])\s+)/.test(lines[i])) body.push(lines[i++].trim());
      blocks.push({ t: 'paragraph', children: parseInline(body.join(' ')) });
    }
  }
  return blocks;
}
