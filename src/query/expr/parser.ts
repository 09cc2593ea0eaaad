// Hand-written recursive-descent parser for the calculated-field language.
//
// Grammar (lowest precedence first; binary operators are left-associative):
//   expr     := or
//   or       := and ( OR and )*                     n-ary OR(…)
//   and      := equality ( AND equality )*          n-ary AND(…)
//   equality := relation ( ( "=" | "!=" ) relation )*
//   relation := additive ( ( "<" | "<=" | ">" | ">=" ) additive )*
//   additive := multiplicative ( ( "+" | "-" ) multiplicative )*      a chain of + is one SUM(…)
//   multiplicative := unary ( ( "*" | "/" | "%" ) unary )*           a chain of * is one MUL(…)
//   unary    := ( "!" | "-" ) unary | primary
//   primary  := literal | column | NAME "(" [ expr ( "," expr )* [ "," ] ] ")" | "(" expr ")"
// AND / OR are case-insensitive keywords in operator position; in operand position `AND(` is the
// function. Operators become ordinary calls (`a + b` is SUM(a, b), `!a` is NOT(a), `-a` is
// SUB(0, a); `-` before a number literal makes a negative literal).
import type { Call, Expr, Literal } from './ast.js';
import { depthOf } from './ast.js';
import { ExpressionError } from './errors.js';
import { tokenize, type Token } from './lexer.js';

/** Longest expression text accepted (the API's limit for `expression`). */
export const MAX_EXPRESSION_LENGTH = 4095;
/** Deepest nesting of the syntax tree (calls, operators, parentheses). */
export const MAX_EXPRESSION_DEPTH = 64;

const INT64_MAX = (1n << 63n) - 1n;

const BINARY: Record<string, string> = {
  '=': 'EQUALS',
  '!=': 'NOT_EQUALS',
  '<': 'LT',
  '<=': 'LTE',
  '>': 'GT',
  '>=': 'GTE',
  '+': 'SUM',
  '-': 'SUB',
  '*': 'MUL',
  '/': 'DIV',
  '%': 'MOD',
};

export function parseExpression(text: string): Expr {
  if (typeof text !== 'string') throw new ExpressionError(0, 'expression must be a string');
  if (text.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionError(MAX_EXPRESSION_LENGTH, `expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  }
  if (text.trim() === '') throw new ExpressionError(0, 'expression is empty');
  const p = new Parser(tokenize(text));
  const expr = p.parseExpr();
  const tok = p.peek();
  if (tok.t !== 'eof') {
    if (tok.t === 'op' && tok.op === ')') throw new ExpressionError(tok.pos, 'unbalanced ")": no matching "("');
    const prev = p.previous();
    const hint =
      prev?.t === 'column' && /[=+?-]$/.test(prev.name) && text[prev.pos + 1] !== '"' && text[prev.pos + 1] !== '`'
        ? ` (the column name $${prev.name} includes the "${prev.name.slice(-1)}": put spaces around operators after a column name)`
        : '';
    throw new ExpressionError(tok.pos, `unexpected ${describeToken(tok)} after a complete expression${hint}`);
  }
  const deepest = depthOf(expr);
  if (deepest.depth > MAX_EXPRESSION_DEPTH) {
    throw new ExpressionError(deepest.pos, `expression is nested too deeply (more than ${MAX_EXPRESSION_DEPTH} levels)`);
  }
  return expr;
}

export function describeToken(tok: Token): string {
  switch (tok.t) {
    case 'eof':
      return 'end of expression';
    case 'op':
      return `"${tok.op}"`;
    case 'ident':
      return `name ${tok.name}`;
    case 'column':
      return `column $${tok.name}`;
    case 'string':
      return 'string literal';
    default:
      return `number ${tok.text}`;
  }
}

class Parser {
  private i = 0;
  /** Current recursion depth, bounded so hostile input cannot overflow the stack. */
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  peek(): Token {
    return this.tokens[this.i];
  }
  previous(): Token | undefined {
    return this.tokens[this.i - 1];
  }
  private next(): Token {
    const t = this.tokens[this.i];
    if (t.t !== 'eof') this.i++;
    return t;
  }
  private isOp(op: string, tok = this.peek()): boolean {
    return tok.t === 'op' && tok.op === op;
  }
  private keyword(): string | undefined {
    const tok = this.peek();
    if (tok.t !== 'ident') return undefined;
    const up = tok.name.toUpperCase();
    return up === 'AND' || up === 'OR' ? up : undefined;
  }
  private enter(pos: number): void {
    if (++this.depth > MAX_EXPRESSION_DEPTH + 1) {
      throw new ExpressionError(pos, `expression is nested too deeply (more than ${MAX_EXPRESSION_DEPTH} levels)`);
    }
  }
  private leave(): void {
    this.depth--;
  }

  parseExpr(): Expr {
    this.enter(this.peek().pos);
    try {
      return this.parseLogical('OR', () => this.parseLogical('AND', () => this.parseEquality()));
    } finally {
      this.leave();
    }
  }

  private parseLogical(kw: 'AND' | 'OR', operand: () => Expr): Expr {
    const first = operand();
    if (this.keyword() !== kw) return first;
    const call: Call = { kind: 'call', name: kw, args: [first], pos: first.pos, end: first.end, operator: kw };
    while (this.keyword() === kw) {
      this.next();
      const rhs = operand();
      call.args.push(rhs);
      call.end = rhs.end;
    }
    return call;
  }

  private parseBinary(ops: string[], operand: () => Expr, flatten?: string): Expr {
    let left = operand();
    while (true) {
      const tok = this.peek();
      if (tok.t !== 'op' || !ops.includes(tok.op)) return left;
      this.next();
      const right = operand();
      if (flatten && tok.op === flatten && left.kind === 'call' && left.operator === flatten && left.end <= tok.pos) {
        left.args.push(right);
        left.end = right.end;
      } else {
        left = { kind: 'call', name: BINARY[tok.op], args: [left, right], pos: left.pos, end: right.end, operator: tok.op };
      }
    }
  }

  private parseEquality(): Expr {
    return this.parseBinary(['=', '!='], () => this.parseRelation());
  }
  private parseRelation(): Expr {
    return this.parseBinary(['<', '<=', '>', '>='], () => this.parseAdditive());
  }
  private parseAdditive(): Expr {
    return this.parseBinary(['+', '-'], () => this.parseMultiplicative(), '+');
  }
  private parseMultiplicative(): Expr {
    return this.parseBinary(['*', '/', '%'], () => this.parseUnary(), '*');
  }

  private parseUnary(): Expr {
    const tok = this.peek();
    if (this.isOp('!') || this.isOp('-')) {
      this.next();
      const op = (tok as { op: string }).op;
      // A minus directly before a number literal makes a negative literal.
      const lit = this.peek();
      if (op === '-' && (lit.t === 'int' || lit.t === 'float')) {
        this.next();
        return this.numberLiteral(lit, tok.pos, true);
      }
      this.enter(tok.pos);
      try {
        const operand = this.parseUnary();
        if (op === '-' && operand.kind === 'literal' && (operand.type === 'integer' || operand.type === 'float')) {
          return this.negate(operand, tok.pos);
        }
        if (op === '!') return { kind: 'call', name: 'NOT', args: [operand], pos: tok.pos, end: operand.end, operator: '!' };
        const zero: Literal = { kind: 'literal', type: 'integer', value: 0n, pos: tok.pos, end: tok.end };
        return { kind: 'call', name: 'SUB', args: [zero, operand], pos: tok.pos, end: operand.end, operator: 'unary -' };
      } finally {
        this.leave();
      }
    }
    return this.parsePrimary();
  }

  private negate(lit: Literal, pos: number): Literal {
    if (lit.type === 'integer') {
      const v = -lit.value;
      if (v > INT64_MAX) throw new ExpressionError(pos, 'integer literal is out of the 64-bit range');
      return { ...lit, value: v, pos };
    }
    if (lit.type === 'float') return { ...lit, value: -lit.value, pos };
    return lit;
  }

  private numberLiteral(tok: Extract<Token, { t: 'int' | 'float' }>, pos: number, negative: boolean): Literal {
    if (tok.t === 'int') {
      let v = BigInt(tok.text);
      if (negative) v = -v;
      if (v > INT64_MAX || v < -INT64_MAX - 1n) throw new ExpressionError(pos, 'integer literal is out of the 64-bit range');
      return { kind: 'literal', type: 'integer', value: v, pos, end: tok.end };
    }
    let v = Number(tok.text);
    if (!Number.isFinite(v)) throw new ExpressionError(pos, 'float literal is out of range');
    if (negative) v = -v;
    return { kind: 'literal', type: 'float', value: v, pos, end: tok.end };
  }

  private parsePrimary(): Expr {
    const tok = this.next();
    switch (tok.t) {
      case 'int':
      case 'float':
        return this.numberLiteral(tok, tok.pos, false);
      case 'string':
        return { kind: 'literal', type: 'string', value: tok.value, pos: tok.pos, end: tok.end, raw: tok.raw };
      case 'column':
        return { kind: 'column', name: tok.name, pos: tok.pos, end: tok.end };
      case 'ident': {
        if (this.isOp('(')) return this.parseCall(tok);
        const lower = tok.name.toLowerCase();
        if (lower === 'true' || lower === 'false') return { kind: 'literal', type: 'boolean', value: lower === 'true', pos: tok.pos, end: tok.end };
        if (lower === 'null') return { kind: 'literal', type: 'null', value: null, pos: tok.pos, end: tok.end };
        throw new ExpressionError(
          tok.pos,
          `unexpected name ${tok.name}: a function needs "(", a column needs "$" ($${tok.name}), a string needs quotes`,
        );
      }
      case 'op':
        if (tok.op === '(') {
          const inner = this.parseExpr();
          const close = this.next();
          if (!this.isOp(')', close)) {
            throw new ExpressionError(close.pos, `expected ")" to close the "(" at position ${tok.pos}, found ${describeToken(close)}`);
          }
          return inner;
        }
        if (tok.op === ')') throw new ExpressionError(tok.pos, 'unbalanced ")": no matching "("');
        throw new ExpressionError(tok.pos, `unexpected "${tok.op}": expected a value, column, function call or "("`);
      case 'eof':
        throw new ExpressionError(tok.pos, 'unexpected end of expression: expected a value');
    }
  }

  private parseCall(name: Extract<Token, { t: 'ident' }>): Call {
    const open = this.next(); // "("
    {
      const call: Call = { kind: 'call', name: name.name.toUpperCase(), args: [], pos: name.pos, end: open.end };
      if (this.isOp(')')) {
        call.end = this.next().end;
        return call;
      }
      while (true) {
        call.args.push(this.parseExpr());
        const sep = this.next();
        if (this.isOp(')', sep)) {
          call.end = sep.end;
          return call;
        }
        if (!this.isOp(',', sep)) {
          throw new ExpressionError(
            sep.pos,
            sep.t === 'eof'
              ? `unbalanced "(": ${call.name}( at position ${name.pos} is never closed`
              : `expected "," or ")" in the arguments of ${call.name}, found ${describeToken(sep)}`,
          );
        }
        // A trailing comma before ")" is allowed.
        if (this.isOp(')')) {
          call.end = this.next().end;
          return call;
        }
      }
    }
  }
}
