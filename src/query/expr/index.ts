// The calculated-field language (Honeycomb's "derived columns"): lexer → parser → AST → type
// checker → SQL compiler. This file is the module's public face; the planner
// (src/query/plan.ts), the derived-columns API and query validation only use what it exports.
//
// CONTRACT (the planner is written against it):
// - parseExpression(text) returns an AST or throws ExpressionError (position = 0-based character
//   offset into `text`, message says what is wrong there).
// - compileExpression(ast, ctx) type-checks and compiles to one DuckDB SQL expression; it throws
//   ExpressionError on type errors (wrong argument count or types, non-literal SWITCH cases, bad
//   regex literal, unknown function, …). Literals never appear in the SQL text: they go through
//   ctx.bind(), which returns a placeholder.
// - references(ast) lists the `$names` the expression reads (for dependency/cycle checks).
export type ValueType = 'string' | 'integer' | 'float' | 'boolean' | 'null';

export class ExpressionError extends Error {
  constructor(
    /** 0-based character offset into the expression text. */
    readonly position: number,
    message: string,
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

/** A field as the compiler sees it: SQL that reads its value for the current event, and its type. */
export interface FieldInfo {
  sql: string;
  type: ValueType;
}

export interface CompileContext {
  /** Resolves `$name` (a column or another calculated field); undefined when unknown. */
  field(name: string): FieldInfo | undefined;
  /** SQL of the event's time and ingest time (DuckDB TIMESTAMP). */
  eventTimeSql: string;
  ingestTimeSql: string;
  /** Binds a literal as a query parameter; returns its placeholder (e.g. `$3`). */
  bind(value: string | number | boolean): string;
}
