// The calculated-field language's syntax tree. Every node carries the 0-based character range
// [pos, end) of the text it was parsed from, so errors can point at it.

export interface NodeBase {
  pos: number;
  end: number;
}

export type LiteralValue =
  | { type: 'string'; value: string }
  /** Integers are kept exactly (64-bit range checked by the parser). */
  | { type: 'integer'; value: bigint }
  | { type: 'float'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'null'; value: null };

export type Literal = NodeBase & { kind: 'literal'; raw?: boolean } & LiteralValue;

export interface ColumnRef extends NodeBase {
  kind: 'column';
  /** The field name as written, unescaped (case-sensitive). */
  name: string;
}

export interface Call extends NodeBase {
  kind: 'call';
  /** Upper-cased function name (aliases not yet resolved). */
  name: string;
  args: Expr[];
  /** Set when the call came from an infix or prefix operator (`+`, `!`, …), for error messages. */
  operator?: string;
}

export type Expr = Literal | ColumnRef | Call;

/** Nesting depth of a tree (a leaf is 1) and where its deepest node starts; no recursion. */
export function depthOf(root: Expr): { depth: number; pos: number } {
  let max = 0;
  let pos = root.pos;
  const stack: [Expr, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [node, d] = stack.pop()!;
    if (d > max) {
      max = d;
      pos = node.pos;
    }
    if (node.kind === 'call') for (const a of node.args) stack.push([a, d + 1]);
  }
  return { depth: max, pos };
}
