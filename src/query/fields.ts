// Field resolution for queries and calculated fields: which SQL reads `$name` for an event.
//
// Columns come from the dataset's column registry (columnSources); calculated fields are compiled
// on first use, recursively (a calculated field may read another), memoised, with cycles refused.
// Calculated fields win over columns of the same name; among calculated fields the later entry of
// the list wins (callers pass environment-wide fields first, then the dataset's, then a query's
// inline ones).
import { compileExpression, CycleError, ExpressionError, parseExpression, type CompileContext, type FieldInfo } from './expr/index.js';
import type { SqlDialect } from '../stores/events/engine.js';
import { storedValueSql } from '../stores/events/placement.js';
import type { Column } from '../stores/config/types.js';

export interface ColumnSource {
  keyName: string;
  sql: string;
  type: 'string' | 'integer' | 'float' | 'boolean';
}

export interface CalculatedSource {
  name: string;
  expression: string;
  /** where it comes from, for error messages */
  origin?: string;
}

/**
 * The SQL that reads each column as its API type (a value that does not convert is null): the
 * dialect's readColumn, which knows what a cast costs on its engine and how it may rely on the
 * registry's stored type (the registry may lag the table for a moment: ingest/column-registry.ts widens
 * the table first).
 */
export function columnSources(d: SqlDialect, columns: readonly Column[]): ColumnLookup {
  return new LazyColumnSources(d, columns);
}

/** Columns by name, as a scope reads them. */
export interface ColumnLookup {
  get(keyName: string): ColumnSource | undefined;
}

/** A dataset's columns, each one's SQL made when first asked for: a scope resolves a few names of up to 10,000 columns. */
class LazyColumnSources implements ColumnLookup {
  private readonly byName: Map<string, Column>;
  private readonly made = new Map<string, ColumnSource>();

  constructor(
    private readonly d: SqlDialect,
    columns: readonly Column[],
  ) {
    this.byName = new Map(columns.map((c) => [c.keyName, c]));
  }

  get(keyName: string): ColumnSource | undefined {
    let source = this.made.get(keyName);
    if (!source) {
      const c = this.byName.get(keyName);
      if (!c) return undefined;
      source = { keyName, sql: readField(this.d, c, c.type), type: c.type };
      this.made.set(keyName, source);
    }
    return source;
  }
}

/** SQL reading a registered field as `asType` (its column or its attribute: stores/events/placement.ts). */
export function readField(d: SqlDialect, c: Pick<Column, 'physical' | 'storedType'>, asType: Column['type']): string {
  return d.readColumn(storedValueSql(d, c.physical, c.storedType), c.storedType, asType);
}

export class FieldScope {
  private readonly columns: ColumnLookup;
  private readonly calculated = new Map<string, CalculatedSource>();
  private readonly compiled = new Map<string, FieldInfo>();
  /** Calculated fields being compiled, outermost first (for cycle detection). */
  private readonly stack: string[] = [];
  private readonly ctx: CompileContext;

  constructor(opts: {
    dialect: SqlDialect;
    columns: ColumnSource[] | ColumnLookup;
    calculated: CalculatedSource[];
    eventTimeSql: string;
    ingestTimeSql: string;
    bind: (v: string | number | boolean) => string;
  }) {
    this.columns = Array.isArray(opts.columns) ? new Map(opts.columns.map((c) => [c.keyName, c])) : opts.columns;
    for (const f of opts.calculated) this.calculated.set(f.name, f);
    this.ctx = {
      dialect: opts.dialect,
      field: (name) => this.resolve(name),
      eventTimeSql: opts.eventTimeSql,
      ingestTimeSql: opts.ingestTimeSql,
      bind: opts.bind,
    };
  }

  /** The compile context this scope gives expressions (fields resolve through the scope). */
  get context(): CompileContext {
    return this.ctx;
  }

  /** True when `name` is a calculated field of this scope. */
  isCalculated(name: string): boolean {
    return this.calculated.has(name);
  }

  /**
   * A column or calculated field by name; calculated fields win over columns of the same name;
   * later entries of `calculated` shadow earlier ones of the same name. Compiles calculated fields
   * recursively (memoised), rejecting cycles with ExpressionError. Undefined when unknown.
   */
  resolve(name: string): FieldInfo | undefined {
    const calc = this.calculated.get(name);
    if (calc) return this.compileCalculated(calc);
    const col = this.columns.get(name);
    return col ? { sql: col.sql, type: col.type } : undefined;
  }

  /**
   * Compiles the calculated field `name` of this scope as the outermost field, so a cycle is
   * reported starting from it and its own errors carry positions in its own text (no wrapping).
   */
  compileAs(name: string): FieldInfo {
    const f = this.calculated.get(name);
    if (!f) throw new Error(`no calculated field ${name} in scope`);
    const done = this.compiled.get(name);
    if (done) return done;
    this.stack.push(name);
    try {
      const info = compileExpression(parseExpression(f.expression), this.ctx);
      const out = { sql: `(${info.sql})`, type: info.type };
      this.compiled.set(name, out);
      return out;
    } finally {
      this.stack.pop();
    }
  }

  private compileCalculated(f: CalculatedSource): FieldInfo {
    const done = this.compiled.get(f.name);
    if (done) return done;
    const at = this.stack.indexOf(f.name);
    if (at >= 0) throw new CycleError(0, [...this.stack.slice(at), f.name]);
    this.stack.push(f.name);
    try {
      let info: FieldInfo;
      try {
        info = compileExpression(parseExpression(f.expression), this.ctx);
      } catch (err) {
        if (err instanceof CycleError) throw err;
        if (err instanceof ExpressionError) {
          // The referencing expression adds "in calculated field $name" at its own position.
          throw new ExpressionError(err.position, `at position ${err.position} of its expression${f.origin ? ` (${f.origin})` : ''}: ${err.message}`);
        }
        throw err;
      }
      // Parenthesised so it composes as one operand.
      const out = { sql: `(${info.sql})`, type: info.type };
      this.compiled.set(f.name, out);
      return out;
    } finally {
      this.stack.pop();
    }
  }
}

/**
 * Validates an expression at create time: parse + compile in the scope (unknown fields are
 * allowed and read as null). Throws ExpressionError. Returns the compiled field.
 */
export function checkExpression(text: string, scope: FieldScope): FieldInfo {
  return compileExpression(parseExpression(text), scope.context);
}
