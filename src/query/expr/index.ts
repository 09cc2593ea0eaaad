// The calculated-field language (Honeycomb's "derived columns"): lexer → parser → AST → type
// checker → SQL compiler. This file is the module's public face; the planner
// (src/query/plan.ts), the derived-columns API and query validation only use what it exports.
//
// CONTRACT (the planner is written against it):
// - parseExpression(text) returns an AST or throws ExpressionError (position = 0-based character
//   offset into `text`, message says what is wrong there).
// - compileExpression(ast, ctx) type-checks and compiles to one SQL expression in ctx.dialect; it throws
//   ExpressionError on type errors (wrong argument count or types, non-literal SWITCH cases, bad
//   regex literal, unknown function, …). Literals never appear in the SQL text: they go through
//   ctx.bind(), which returns a placeholder.
// - references(ast) lists the `$names` the expression reads (for dependency/cycle checks).
import type { SqlDialect } from '../../stores/events/engine.js';

export type ValueType = 'string' | 'integer' | 'float' | 'boolean' | 'null';

export { ExpressionError } from './errors.js';

/** A field as the compiler sees it: SQL that reads its value for the current event, and its type. */
export interface FieldInfo {
  sql: string;
  type: ValueType;
}

export interface CompileContext {
  /** The SQL dialect to compile to (the event store's). */
  dialect: SqlDialect;
  /** Resolves `$name` (a column or another calculated field); undefined when unknown. */
  field(name: string): FieldInfo | undefined;
  /** SQL of the event's time and ingest time (timestamps). */
  eventTimeSql: string;
  ingestTimeSql: string;
  /** Binds a literal as a query parameter; returns its placeholder (e.g. `$3`). */
  bind(value: string | number | boolean): string;
}

// ---- implementation (see lexer.ts, parser.ts, compile.ts, functions.ts, regex.ts) ----
import type { Expr } from './ast.js';
import { compile } from './compile.js';
import { parseExpression as parse } from './parser.js';

export type { Expr, Literal, ColumnRef, Call } from './ast.js';
export { CycleError } from './errors.js';
export { MAX_EXPRESSION_LENGTH, MAX_EXPRESSION_DEPTH } from './parser.js';
export { FUNCTION_NAMES } from './functions.js';

/** Parses an expression; throws ExpressionError (0-based position) on a syntax error or a text over the limits. */
export function parseExpression(text: string): Expr {
  return parse(text);
}

/** Type-checks and compiles to one SQL expression (ctx.dialect); throws ExpressionError naming position and problem. */
export function compileExpression(ast: Expr, ctx: CompileContext): FieldInfo {
  return compile(ast, ctx);
}

/** The `$names` the expression reads, each once, in order of first appearance. */
export function references(ast: Expr): string[] {
  const seen = new Set<string>();
  const stack: Expr[] = [ast];
  const out: string[] = [];
  // Depth-first, left to right, without recursion.
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.kind === 'column') {
      if (!seen.has(node.name)) {
        seen.add(node.name);
        out.push(node.name);
      }
    } else if (node.kind === 'call') {
      for (let i = node.args.length - 1; i >= 0; i--) stack.push(node.args[i]);
    }
  }
  return out;
}

/**
 * A dialect for type-checking alone (validation before any dataset or store is at hand): it
 * writes plain ANSI-looking SQL that is never run. Every check the compiler makes is independent
 * of the dialect, so an expression that passes here compiles in every engine's.
 */
export const CHECK_ONLY_DIALECT: SqlDialect = {
  name: 'check-only',
  quoteIdent: (name) => `"${name.replace(/"/g, '""')}"`,
  type: (t) => t,
  cast: (e, t) => `CAST(${e} AS ${t})`,
  tryCast: (e, t) => `CAST(${e} AS ${t})`,
  readColumn: (c, _stored, t) => `CAST(${c} AS ${t})`,
  attribute: (bucket, key, t) => `CAST(attribute(${bucket}, ${key}) AS ${t})`,
  nullOf: (t) => `CAST(NULL AS ${t})`,
  timestamp: (us) => String(Math.trunc(us)),
  epochUs: (e) => e,
  epochSeconds: (e) => e,
  boolToInt: (e) => e,
  startsWith: (a, b) => `starts(${a}, ${b})`,
  endsWith: (a, b) => `ends(${a}, ${b})`,
  contains: (a, b) => `contains(${a}, ${b})`,
  intDiv: (a, b) => `${a} / ${b}`,
  bool: (b) => (b ? 'true' : 'false'),
  nullTime: () => 'NULL',
  monotoneBucket: (e) => `floor(${e})`,
  trimSpaces: (e) => `trim(${e})`,
  expr: {
    literal: (p, t) => `CAST(${p} AS ${t})`,
    share: (name, value, body) => `share(${name}, ${value}, ${body})`,
    nullIf: (a, b) => `nullif(${a}, ${b})`,
    parseFloat: (t) => `float(${t})`,
    text: (e) => `text(${e})`,
    notDistinct: (a, b) => `(${a} IS NOT DISTINCT FROM ${b})`,
    intArith: (op, a, b) => `(${a} ${op} ${b})`,
    intSum: (parts) => `(${parts.join(' + ')})`,
    floatMod: (a, b) => `(${a} % ${b})`,
    least: (parts) => `least(${parts.join(', ')})`,
    greatest: (parts) => `greatest(${parts.join(', ')})`,
    log10: (x) => `log10(${x})`,
    truncToInt: (x) => `trunc(${x})`,
    wideInt: (x) => x,
    concat: (parts) => `concat(${parts.join(', ')})`,
    lower: (t) => `lower(${t})`,
    length: (t, unit) => `length_${unit}(${t})`,
    regexMatches: (t, re) => `regex_matches(${t}, ${re})`,
    regexExtract: (t, re, g) => `regex_extract(${t}, ${re}, ${g})`,
    regexCount: (t, re) => `regex_count(${t}, ${re})`,
    parseTime: (t) => `parse_time(${t})`,
    formatTime: (secs, format, bind) => `format_time(${secs}, ${bind(format)})`,
    random: () => 'random()',
    md5Low64: (t) => `md5_low64(${t})`,
  },
};
