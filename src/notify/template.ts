// A small, safe renderer for webhook payload templates in the Go text/template style Honeycomb
// documents (`{{ .Alert.Summary }}`, `{{ toJson .Datasets }}`, `{{ .Vars.team }}`). It only
// reads values from the data it is given and calls the fixed functions below: no code runs, no
// method is called, nothing outside the data is reachable.
//
// Supported:
// - `{{ pipeline }}` — a field path (`.`, `.A.B`, `$`, `$.A`), a literal ("string", `raw`, 12,
//   1.5, true, false, nil), a function call (`toJson .X`, `eq .A "b"`), a parenthesised
//   pipeline, and pipes (`.X | toJson`: the left value becomes the last argument);
// - `{{ if P }} … {{ else if P }} … {{ else }} … {{ end }}`, `{{ range P }} … {{ else }} … {{ end }}`
//   (inside range, `.` is the element and `$` the root);
// - comments `{{/* … */}}` and the trim markers `{{- ` and ` -}}`.
// Functions: toJson (alias toJSON), eq, ne, lt, le, gt, ge, not, and, or, len, upper, lower,
// trim, default, join, quote.
//
// Values: a field that the data does not have is an error (the template is broken); a field of
// `.Vars` that is not defined renders as an empty string, like a missing key of a Go map; a
// null or absent value renders as an empty string. Arrays and objects render as compact JSON.
//
// JSON templates (`json: true`): strings (and the text of numbers and booleans) are written
// JSON-escaped without quotes, so `"{{ .Alert.Name }}"` stays valid JSON whatever the name
// holds; the output of toJson, and arrays and objects, are written as JSON as they are.
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** JSON text that is written verbatim (the result of toJson). */
export class RawJson {
  constructor(readonly text: string) {}
}

type Arg =
  | { k: 'field'; root: 'dot' | 'dollar'; path: string[] }
  | { k: 'lit'; v: unknown }
  | { k: 'fn'; name: string }
  | { k: 'sub'; p: Pipe };
type Cmd = Arg[];
type Pipe = Cmd[];
type Node =
  | { t: 'text'; s: string }
  | { t: 'out'; p: Pipe }
  | { t: 'if'; branches: { cond: Pipe; body: Node[] }[]; otherwise?: Node[] }
  | { t: 'range'; p: Pipe; body: Node[]; otherwise?: Node[] };

type Tok = { k: 'field' | 'var' | 'str' | 'num' | 'ident' | 'pipe' | 'lparen' | 'rparen'; v: string };

const MAX_OUTPUT = 1_000_000;
const MAX_TEMPLATE = 100_000;

// --- lexing

interface Action {
  toks: Tok[];
  at: number;
}

/** Splits the template into text and action tokens, applying trim markers. */
function split(src: string): (string | Action)[] {
  const out: (string | Action)[] = [];
  let i = 0;
  let trimNext = false;
  while (i <= src.length) {
    const open = src.indexOf('{{', i);
    let text = src.slice(i, open < 0 ? src.length : open);
    if (trimNext) text = text.replace(/^\s+/, '');
    trimNext = false;
    if (open < 0) {
      if (text) out.push(text);
      break;
    }
    let j = open + 2;
    if (src[j] === '-' && /\s/.test(src[j + 1] ?? '')) {
      text = text.replace(/\s+$/, '');
      j++;
    }
    if (text) out.push(text);
    const toks: Tok[] = [];
    let closed = false;
    while (j < src.length) {
      const c = src[j];
      if (src.startsWith('}}', j)) {
        j += 2;
        closed = true;
        break;
      }
      if (/\s/.test(c)) {
        if (src.startsWith('-}}', j + 1)) {
          trimNext = true;
          j += 4;
          closed = true;
          break;
        }
        j++;
        continue;
      }
      if (src.startsWith('/*', j)) {
        const end = src.indexOf('*/', j + 2);
        if (end < 0) throw new TemplateError(`unclosed comment at offset ${j}`);
        j = end + 2;
        continue;
      }
      if (c === '"') {
        let k = j + 1;
        while (k < src.length && src[k] !== '"') k += src[k] === '\\' ? 2 : 1;
        if (k >= src.length) throw new TemplateError(`unterminated string at offset ${j}`);
        try {
          toks.push({ k: 'str', v: JSON.parse(src.slice(j, k + 1)) as string });
        } catch {
          throw new TemplateError(`bad string literal at offset ${j}`);
        }
        j = k + 1;
        continue;
      }
      if (c === '`') {
        const end = src.indexOf('`', j + 1);
        if (end < 0) throw new TemplateError(`unterminated raw string at offset ${j}`);
        toks.push({ k: 'str', v: src.slice(j + 1, end) });
        j = end + 1;
        continue;
      }
      const m = /^(?:\.(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)?|\$(?:\.[A-Za-z_][A-Za-z0-9_]*)*|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[A-Za-z_][A-Za-z0-9_]*|[|()])/.exec(src.slice(j, j + 300));
      if (!m) throw new TemplateError(`unexpected ${JSON.stringify(c)} at offset ${j}`);
      const v = m[0];
      const k: Tok['k'] = v.startsWith('.') ? 'field' : v.startsWith('$') ? 'var' : /^-?\d/.test(v) ? 'num' : v === '|' ? 'pipe' : v === '(' ? 'lparen' : v === ')' ? 'rparen' : 'ident';
      toks.push({ k, v });
      j += v.length;
    }
    if (!closed) throw new TemplateError(`unclosed action at offset ${open}`);
    if (toks.length) out.push({ toks, at: open });
    i = j;
  }
  return out;
}

// --- parsing

const FUNCTIONS = new Set(['toJson', 'toJSON', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'not', 'and', 'or', 'len', 'upper', 'lower', 'trim', 'default', 'join', 'quote']);

function parsePipe(toks: Tok[], at: number): Pipe {
  let pos = 0;
  const pipe = (): Pipe => {
    const cmds: Pipe = [cmd()];
    while (toks[pos]?.k === 'pipe') {
      pos++;
      cmds.push(cmd());
    }
    return cmds;
  };
  const cmd = (): Cmd => {
    const args: Cmd = [];
    while (pos < toks.length && toks[pos].k !== 'pipe' && toks[pos].k !== 'rparen') {
      const t = toks[pos++];
      switch (t.k) {
        case 'field':
          args.push({ k: 'field', root: 'dot', path: t.v === '.' ? [] : t.v.slice(1).split('.') });
          break;
        case 'var':
          args.push({ k: 'field', root: 'dollar', path: t.v === '$' ? [] : t.v.slice(2).split('.') });
          break;
        case 'str':
          args.push({ k: 'lit', v: t.v });
          break;
        case 'num':
          args.push({ k: 'lit', v: Number(t.v) });
          break;
        case 'lparen': {
          const p = pipe();
          if (toks[pos]?.k !== 'rparen') throw new TemplateError(`missing ) in action at offset ${at}`);
          pos++;
          args.push({ k: 'sub', p });
          break;
        }
        case 'ident':
          if (t.v === 'true' || t.v === 'false') args.push({ k: 'lit', v: t.v === 'true' });
          else if (t.v === 'nil') args.push({ k: 'lit', v: null });
          else if (FUNCTIONS.has(t.v)) {
            if (args.length) throw new TemplateError(`function ${t.v} must come first in a command (offset ${at})`);
            args.push({ k: 'fn', name: t.v });
          } else throw new TemplateError(`function ${JSON.stringify(t.v)} not defined (offset ${at})`);
          break;
        default:
          throw new TemplateError(`unexpected ${JSON.stringify(t.v)} at offset ${at}`);
      }
    }
    if (!args.length) throw new TemplateError(`missing value in action at offset ${at}`);
    return args;
  };
  const p = pipe();
  if (pos !== toks.length) throw new TemplateError(`unexpected ${JSON.stringify(toks[pos].v)} in action at offset ${at}`);
  return p;
}

/** Parses a template; throws TemplateError with the offset of the first problem. */
export function parseTemplate(src: string): Node[] {
  if (src.length > MAX_TEMPLATE) throw new TemplateError(`template is longer than ${MAX_TEMPLATE} characters`);
  const items = split(src);
  let pos = 0;
  // Parses nodes until `{{ end }}`/`{{ else … }}` (returned to the caller) or the end.
  const block = (inside: string | null): { nodes: Node[]; stop?: Action } => {
    const nodes: Node[] = [];
    while (pos < items.length) {
      const item = items[pos++];
      if (typeof item === 'string') {
        nodes.push({ t: 'text', s: item });
        continue;
      }
      const head = item.toks[0];
      const kw = head.k === 'ident' ? head.v : '';
      if (kw === 'end' || kw === 'else') {
        if (!inside) throw new TemplateError(`unexpected {{ ${kw} }} at offset ${item.at}`);
        return { nodes, stop: item };
      }
      if (kw === 'if') {
        const node: Extract<Node, { t: 'if' }> = { t: 'if', branches: [] };
        let cond = parsePipe(item.toks.slice(1), item.at);
        for (;;) {
          const b = block('if');
          if (!b.stop) throw new TemplateError(`{{ if }} at offset ${item.at} has no {{ end }}`);
          node.branches.push({ cond, body: b.nodes });
          const st = b.stop.toks;
          if (st[0].v === 'end') {
            if (st.length > 1) throw new TemplateError(`unexpected tokens after end at offset ${b.stop.at}`);
            break;
          }
          if (st[1]?.k === 'ident' && st[1].v === 'if') {
            cond = parsePipe(st.slice(2), b.stop.at);
            continue;
          }
          if (st.length > 1) throw new TemplateError(`unexpected tokens after else at offset ${b.stop.at}`);
          const e = block('if');
          if (!e.stop || e.stop.toks[0].v !== 'end') throw new TemplateError(`{{ else }} at offset ${b.stop.at} has no {{ end }}`);
          node.otherwise = e.nodes;
          break;
        }
        nodes.push(node);
        continue;
      }
      if (kw === 'range') {
        const p = parsePipe(item.toks.slice(1), item.at);
        const b = block('range');
        if (!b.stop) throw new TemplateError(`{{ range }} at offset ${item.at} has no {{ end }}`);
        const node: Extract<Node, { t: 'range' }> = { t: 'range', p, body: b.nodes };
        if (b.stop.toks[0].v === 'else') {
          const e = block('range');
          if (!e.stop || e.stop.toks[0].v !== 'end') throw new TemplateError(`{{ else }} at offset ${b.stop.at} has no {{ end }}`);
          node.otherwise = e.nodes;
        }
        nodes.push(node);
        continue;
      }
      nodes.push({ t: 'out', p: parsePipe(item.toks, item.at) });
    }
    if (inside) throw new TemplateError(`{{ ${inside} }} has no {{ end }}`);
    return { nodes };
  };
  return block(null).nodes;
}

// --- evaluation

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof RawJson);

function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (isPlainObject(v)) return Object.keys(v).length > 0;
  return true;
}

/** Plain JSON of a value (Maps become objects, RawJson is parsed back). */
function toPlain(v: unknown): unknown {
  if (v instanceof RawJson) return JSON.parse(v.text);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, toPlain(x)]));
  if (Array.isArray(v)) return v.map(toPlain);
  if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPlain(x)]));
  return v === undefined ? null : v;
}

function compare(name: string, a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') {
    return name === 'lt' ? a < b : name === 'le' ? a <= b : name === 'gt' ? a > b : a >= b;
  }
  if (typeof a === 'string' && typeof b === 'string') {
    return name === 'lt' ? a < b : name === 'le' ? a <= b : name === 'gt' ? a > b : a >= b;
  }
  throw new TemplateError(`${name}: incompatible types for comparison`);
}

const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : v instanceof RawJson ? v.text : typeof v === 'object' ? JSON.stringify(toPlain(v)) : String(v));

function call(name: string, args: unknown[]): unknown {
  const need = (n: number) => {
    if (args.length !== n) throw new TemplateError(`${name} takes ${n} argument${n === 1 ? '' : 's'}, got ${args.length}`);
  };
  switch (name) {
    case 'toJson':
    case 'toJSON':
      need(1);
      return new RawJson(JSON.stringify(toPlain(args[0])));
    case 'eq':
      if (args.length < 2) throw new TemplateError('eq takes at least 2 arguments');
      return args.slice(1).some((b) => JSON.stringify(toPlain(args[0])) === JSON.stringify(toPlain(b)));
    case 'ne':
      need(2);
      return JSON.stringify(toPlain(args[0])) !== JSON.stringify(toPlain(args[1]));
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      need(2);
      return compare(name, args[0], args[1]);
    case 'not':
      need(1);
      return !truthy(args[0]);
    case 'and':
      if (!args.length) throw new TemplateError('and takes at least 1 argument');
      return args.find((a) => !truthy(a)) ?? args[args.length - 1];
    case 'or':
      if (!args.length) throw new TemplateError('or takes at least 1 argument');
      return args.find(truthy) ?? args[args.length - 1];
    case 'len': {
      need(1);
      const v = args[0];
      if (typeof v === 'string' || Array.isArray(v)) return v.length;
      if (v instanceof Map) return v.size;
      if (isPlainObject(v)) return Object.keys(v).length;
      if (v === null || v === undefined) return 0;
      throw new TemplateError('len of a value that has no length');
    }
    case 'upper':
      need(1);
      return text(args[0]).toUpperCase();
    case 'lower':
      need(1);
      return text(args[0]).toLowerCase();
    case 'trim':
      need(1);
      return text(args[0]).trim();
    case 'default':
      need(2);
      return truthy(args[1]) ? args[1] : args[0];
    case 'join': {
      need(2);
      const list = args[1];
      if (!Array.isArray(list)) throw new TemplateError('join: second argument must be an array');
      return list.map(text).join(text(args[0]));
    }
    case 'quote':
      need(1);
      return new RawJson(JSON.stringify(text(args[0])));
  }
  throw new TemplateError(`function ${name} not defined`);
}

interface Scope {
  dot: unknown;
  root: unknown;
}

function field(base: unknown, path: string[], shown: string): unknown {
  let v = base;
  for (const [i, name] of path.entries()) {
    if (v === null || v === undefined) return undefined;
    if (v instanceof Map) {
      v = v.get(name);
      continue;
    }
    if (isPlainObject(v) && Object.prototype.hasOwnProperty.call(v, name)) {
      v = v[name];
      continue;
    }
    const at = `${shown}${path.slice(0, i + 1).join('.')}`;
    throw new TemplateError(`can't evaluate ${at}: no such field`);
  }
  return v;
}

function evalArg(a: Arg, s: Scope): unknown {
  switch (a.k) {
    case 'lit':
      return a.v;
    case 'sub':
      return evalPipe(a.p, s);
    case 'field':
      return a.root === 'dot' ? field(s.dot, a.path, '.') : field(s.root, a.path, '$.');
    case 'fn':
      throw new TemplateError(`function ${a.name} used as a value`);
  }
}

function evalPipe(p: Pipe, s: Scope): unknown {
  let prev: unknown;
  p.forEach((cmd, i) => {
    const extra = i > 0 ? [prev] : [];
    const head = cmd[0];
    if (head.k === 'fn') {
      prev = call(head.name, [...cmd.slice(1).map((a) => evalArg(a, s)), ...extra]);
    } else {
      if (cmd.length > 1 || extra.length) throw new TemplateError("can't give arguments to a value that is not a function");
      prev = evalArg(head, s);
    }
  });
  return prev;
}

function render(nodes: Node[], s: Scope, json: boolean, out: string[], size: { n: number }): void {
  const emit = (t: string) => {
    size.n += t.length;
    if (size.n > MAX_OUTPUT) throw new TemplateError(`output is larger than ${MAX_OUTPUT} characters`);
    out.push(t);
  };
  for (const node of nodes) {
    switch (node.t) {
      case 'text':
        emit(node.s);
        break;
      case 'out': {
        const v = evalPipe(node.p, s);
        if (v instanceof RawJson) emit(v.text);
        else if (v !== null && typeof v === 'object') emit(JSON.stringify(toPlain(v)));
        else emit(json ? JSON.stringify(text(v)).slice(1, -1) : text(v));
        break;
      }
      case 'if': {
        const hit = node.branches.find((b) => truthy(evalPipe(b.cond, s)));
        const body = hit ? hit.body : node.otherwise;
        if (body) render(body, s, json, out, size);
        break;
      }
      case 'range': {
        const v = evalPipe(node.p, s);
        const items = Array.isArray(v) ? v : v instanceof Map ? [...v.values()] : isPlainObject(v) ? Object.values(v) : v === null || v === undefined ? [] : null;
        if (items === null) throw new TemplateError("range can't iterate over a single value");
        if (items.length === 0) {
          if (node.otherwise) render(node.otherwise, s, json, out, size);
        } else {
          for (const item of items) render(node.body, { dot: item, root: s.root }, json, out, size);
        }
        break;
      }
    }
  }
}

/**
 * Renders `src` over `data`. With `json`, values are JSON-escaped as described in the header and
 * the result must parse as JSON. Throws TemplateError on any problem.
 */
export function renderTemplate(src: string, data: unknown, opts: { json?: boolean } = {}): string {
  const nodes = parseTemplate(src);
  const out: string[] = [];
  render(nodes, { dot: data, root: data }, opts.json ?? false, out, { n: 0 });
  const result = out.join('');
  if (opts.json) {
    try {
      JSON.parse(result);
    } catch (err) {
      throw new TemplateError(`the rendered payload is not valid JSON: ${(err as Error).message}`);
    }
  }
  return result;
}

/** A template is treated as JSON when its first non-blank character is `{` or `[`. */
export const looksLikeJson = (src: string) => /^\s*[[{]/.test(src);
