// Board text panels: Markdown rendered as elements from the parsed tree (markdown.ts); no HTML
// in the text is ever interpreted.
import { parseMarkdown, type Block, type Inline } from '../markdown.js';

function Inlines({ items }: { items: Inline[] }) {
  return (
    <>
      {items.map((n, i) => {
        switch (n.t) {
          case 'text':
            return n.text;
          case 'code':
            return <code key={i}>{n.text}</code>;
          case 'em':
            return <em key={i}><Inlines items={n.children} /></em>;
          case 'strong':
            return <strong key={i}><Inlines items={n.children} /></strong>;
          case 'link':
            return <a key={i} href={n.href} rel="noopener noreferrer" target="_blank"><Inlines items={n.children} /></a>;
        }
      })}
    </>
  );
}

function BlockView({ b }: { b: Block }) {
  switch (b.t) {
    case 'heading': {
      const H = (`h${Math.min(b.level + 1, 6)}`) as 'h2';
      return <H><Inlines items={b.children} /></H>;
    }
    case 'paragraph':
      return <p><Inlines items={b.children} /></p>;
    case 'quote':
      return <blockquote><Inlines items={b.children} /></blockquote>;
    case 'codeblock':
      return <pre>{b.text}</pre>;
    case 'rule':
      return <hr />;
    case 'list': {
      const L = b.ordered ? 'ol' : 'ul';
      return <L>{b.items.map((it, i) => <li key={i}><Inlines items={it} /></li>)}</L>;
    }
  }
}

export function Markdown({ text }: { text: string }) {
  return <div class="md">{parseMarkdown(text).map((b, i) => <BlockView key={i} b={b} />)}</div>;
}
