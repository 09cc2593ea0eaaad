// Type checker and compiler: syntax tree → one SQL expression (ctx.dialect) with its value type.
//
// - Every engine-specific piece is the dialect's (ctx.dialect.expr, src/stores/events/engine.ts);
//   the compiler decides types, coercions and NULL rules, the same on every engine.
// - Literals never reach the SQL text: each goes through ctx.bind() and is wrapped in a CAST to
//   its type (`CAST($3 AS VARCHAR)`). The SQL text holds only the caller's column SQL, bound
//   placeholders, and the compiler's own fixed fragments (function names, 0, '', 'true', …).
// - A value that a function needs more than once is computed once: when its SQL is not trivially
//   small it is bound to a lambda variable (dialect.expr.share: in DuckDB
//   `list_transform([<sql>], lambda __w1: <body>)[1]`),
//   so the SQL grows linearly with the expression, never exponentially.
// - Sizes are bounded: the compiled SQL (calculated fields inlined) may not exceed
//   MAX_SQL_LENGTH characters nor MAX_SQL_NESTING levels of parentheses.
//
// Over 500 lines: one checker and compiler for every function of the expression language, so each
// function's typing, NULL rule and SQL read together in one switch.
import type { Call, Expr, Literal } from './ast.js';
import { CycleError, ExpressionError } from './errors.js';
import { arityProblem, lookupFunction } from './functions.js';
import { checkRegex } from './regex.js';
import type { CompileContext, FieldInfo, ValueType } from './index.js';

export const MAX_SQL_LENGTH = 500_000;
/** Parenthesis nesting of the compiled SQL; DuckDB refuses expressions deeper than 1000. */
export const MAX_SQL_NESTING = 600;
/** Column SQL up to this length is repeated rather than bound to a lambda variable. */
const SIMPLE_SQL = 120;

interface Val {
  sql: string;
  type: ValueType;
  /** Cheap to repeat in SQL (a literal placeholder or a short column expression). */
  simple: boolean;
  /** The literal this value came from, for arguments that must be literals. */
  lit?: Literal;
}

type Cls = 'num' | 'str' | 'bool' | 'null';
const cls = (t: ValueType): Cls => (t === 'integer' || t === 'float' ? 'num' : t === 'string' ? 'str' : t === 'boolean' ? 'bool' : 'null');

const v = (sql: string, type: ValueType, simple = false): Val => ({ sql, type, simple });

/**
 * strftime conversions FORMAT_TIME accepts (all supported by DuckDB's strftime; the test suite
 * checks each one). `-` (no padding) is allowed before d, m, y, H, I, M, S, j.
 */
const STRFTIME = new Set(['a', 'A', 'w', 'd', 'b', 'B', 'm', 'y', 'Y', 'H', 'I', 'p', 'M', 'S', 'f', 'z', 'Z', 'j', 'U', 'W', 'c', 'x', 'X', '%', 'g', 'n']);
const STRFTIME_UNPADDED = new Set(['d', 'm', 'y', 'H', 'I', 'M', 'S', 'j']);
export const STRFTIME_SPECIFIERS = [...STRFTIME];

export function compile(ast: Expr, ctx: CompileContext): FieldInfo {
  const c = new Compiler(ctx);
  const out = c.node(ast);
  checkSize(out.sql, ast.pos);
  return { sql: out.sql, type: out.type };
}

function checkSize(sql: string, pos: number): void {
  if (sql.length > MAX_SQL_LENGTH) {
    throw new ExpressionError(pos, `expression is too large once calculated fields are expanded (over ${MAX_SQL_LENGTH} characters of SQL)`);
  }
  let depth = 0;
  let max = 0;
  let quote = '';
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(' || ch === '[') max = Math.max(max, ++depth);
    else if (ch === ')' || ch === ']') depth--;
  }
  if (max > MAX_SQL_NESTING) {
    throw new ExpressionError(pos, 'expression is nested too deeply once calculated fields are expanded');
  }
}

/** The stored type a value of this type is written as (a null literal is text). */
const stored = (t: ValueType): Exclude<ValueType, 'null'> => (t === 'null' ? 'string' : t);

class Compiler {
  private lambdaVars = 0;
  constructor(private readonly ctx: CompileContext) {}

  private get d() {
    return this.ctx.dialect;
  }

  private get x() {
    return this.ctx.dialect.expr;
  }

  private constant(b: boolean): Val {
    return v(this.d.bool(b), 'boolean', true);
  }

  private nullOf(type: ValueType): Val {
    return v(this.ctx.dialect.nullOf(stored(type)), type, true);
  }

  node(e: Expr): Val {
    switch (e.kind) {
      case 'literal':
        return this.literal(e);
      case 'column':
        return this.column(e.name, e.pos);
      case 'call':
        return this.call(e);
    }
  }

  private literal(e: Literal): Val {
    // Bound on first use only: a literal the compiled SQL does not use (a SWITCH case against a
    // number, a LENGTH unit, an argument of a constant result) must not leave an unused parameter.
    const ctx = this.ctx;
    const bind = (value: string | number | boolean, type: ValueType): Val => {
      let sql: string | undefined;
      return {
        get sql() {
          return (sql ??= ctx.dialect.expr.literal(ctx.bind(value), stored(type)));
        },
        type,
        simple: true,
        lit: e,
      };
    };
    switch (e.type) {
      case 'string':
        return bind(e.value, 'string');
      case 'integer':
        // As text: a JavaScript number cannot carry every 64-bit integer.
        return bind(e.value.toString(), 'integer');
      case 'float':
        // As text too: the driver would bind a whole-valued number such as 1e300 as an integer.
        return bind(String(e.value), 'float');
      case 'boolean':
        return bind(e.value, 'boolean');
      case 'null':
        return { ...this.nullOf('null'), lit: e };
    }
  }

  private column(name: string, pos: number): Val {
    let info: FieldInfo | undefined;
    try {
      info = this.ctx.field(name);
    } catch (err) {
      if (err instanceof CycleError) throw new CycleError(pos, err.chain);
      if (err instanceof ExpressionError) throw new ExpressionError(pos, `in calculated field $${name}: ${err.message}`);
      throw err;
    }
    // Unknown: null on every event (the column may appear later).
    if (!info) return this.nullOf('null');
    return v(info.sql, info.type, info.sql.length <= SIMPLE_SQL);
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** Binds non-simple values to lambda variables so `body` can use each one many times. */
  private share(vals: Val[], body: (sql: string[]) => string): string {
    const names = vals.map((x) => (x.simple ? x.sql : `__w${++this.lambdaVars}`));
    let sql = body(names);
    for (let i = vals.length - 1; i >= 0; i--) {
      if (!vals[i].simple) sql = this.x.share(names[i], vals[i].sql, sql);
    }
    return sql;
  }

  /** The value, or NULL when it is zero (NULLIF repeats its argument inside DuckDB: shared). */
  private nonZero(x: Val): string {
    return this.share([x], ([s]) => this.x.nullIf(s, '0'));
  }

  /** Truthiness: booleans as they are, numbers when non-zero, the string "true"; null is false. */
  private truth(x: Val): string {
    switch (x.type) {
      case 'boolean':
        return `COALESCE(${x.sql}, ${this.d.bool(false)})`;
      case 'integer':
      case 'float':
        return `COALESCE(${x.sql} <> 0, ${this.d.bool(false)})`;
      case 'string':
        return `COALESCE(${x.sql} = 'true', ${this.d.bool(false)})`;
      case 'null':
        return this.d.bool(false);
    }
  }

  /** Number for arithmetic: strings parsed (unparseable → 0), booleans → 0, null stays null. */
  private num(x: Val): Val {
    switch (x.type) {
      case 'integer':
      case 'float':
        return x;
      case 'string':
        return v(this.share([x], ([s]) => `CASE WHEN ${s} IS NULL THEN NULL ELSE COALESCE(${this.x.parseFloat(s)}, 0) END`), 'float');
      case 'boolean':
        return v(`(${this.d.cast(x.sql, 'integer')} * 0)`, 'integer');
      case 'null':
        return this.nullOf('integer');
    }
  }

  /** String form; null stays null. Floats in shortest round-trip form ("2.5", "3.0"). */
  private str(x: Val): string {
    if (x.type === 'string') return x.sql;
    if (x.type === 'null') return this.d.nullOf('string');
    return this.x.text(x.sql, x.type);
  }

  /** The common type of values that may each be the result: one type, float for int+float, else string. */
  private unify(vals: Val[]): ValueType {
    const types = new Set(vals.map((x) => x.type).filter((t) => t !== 'null'));
    if (types.size === 0) return 'null';
    if (types.size === 1) return [...types][0];
    if ([...types].every((t) => t === 'integer' || t === 'float')) return 'float';
    return 'string';
  }

  private convert(x: Val, to: ValueType): string {
    if (x.type === to) return x.sql;
    if (x.type === 'null') return this.nullOf(to).sql;
    if (to === 'float') return this.d.cast(x.sql, 'float');
    if (to === 'string') return this.str(x);
    return this.ctx.dialect.cast(x.sql, stored(to));
  }

  /** EQUALS: same kind (numbers compare as numbers) and equal, or both null. Never null. */
  private equals(a: Val, b: Val, sa = a.sql, sb = b.sql): string {
    const ca = cls(a.type);
    const cb = cls(b.type);
    if (ca === 'null' && cb === 'null') return this.d.bool(true);
    if (ca === 'null') return `(${sb} IS NULL)`;
    if (cb === 'null') return `(${sa} IS NULL)`;
    if (ca === cb) return this.x.notDistinct(sa, sb);
    return `(${sa} IS NULL AND ${sb} IS NULL)`;
  }

  private stringLiteral(x: Val, what: string, pos: number): string {
    if (!x.lit || x.lit.type !== 'string') throw new ExpressionError(pos, `${what} must be a string literal`);
    return x.lit.value;
  }

  private numberLiteral(x: Val, what: string, pos: number): { value: number; integer: boolean } {
    if (!x.lit || (x.lit.type !== 'integer' && x.lit.type !== 'float')) throw new ExpressionError(pos, `${what} must be a number literal`);
    return { value: Number(x.lit.value), integer: x.lit.type === 'integer' };
  }

  // ---- calls ---------------------------------------------------------------------------------

  private call(e: Call): Val {
    const spec = lookupFunction(e.name, e.operator !== undefined);
    if (!spec) throw new ExpressionError(e.pos, `unknown function ${e.name}`);
    const problem = arityProblem(spec, e.args.length);
    if (problem) throw new ExpressionError(e.pos, problem);
    const args = e.args.map((a) => this.node(a));
    let total = 0;
    for (const a of args) total += a.lit ? 0 : a.sql.length;
    if (total > MAX_SQL_LENGTH) {
      throw new ExpressionError(e.pos, `expression is too large once calculated fields are expanded (over ${MAX_SQL_LENGTH} characters of SQL)`);
    }
    const what = (i: number) => `argument ${i + 1} of ${e.operator ? `operator ${e.operator}` : spec.name}`;
    const argPos = (i: number) => e.args[i].pos;

    switch (spec.name) {
      // -- conditional
      case 'IF': {
        const pairs = Math.floor(args.length / 2);
        const values = [...Array(pairs).keys()].map((i) => args[2 * i + 1]);
        const otherwise = args.length % 2 === 1 ? args[args.length - 1] : undefined;
        const type = this.unify(otherwise ? [...values, otherwise] : values);
        if (type === 'null') return this.nullOf('null');
        const whens = [...Array(pairs).keys()].map((i) => `WHEN ${this.truth(args[2 * i])} THEN ${this.convert(args[2 * i + 1], type)}`);
        return v(`CASE ${whens.join(' ')} ELSE ${otherwise ? this.convert(otherwise, type) : this.nullOf(type).sql} END`, type);
      }
      case 'SWITCH': {
        const value = args[0];
        const rest = args.slice(1);
        const pairs = Math.floor(rest.length / 2);
        const results: Val[] = [];
        for (let i = 0; i < pairs; i++) {
          this.stringLiteral(rest[2 * i], `SWITCH case (${what(2 * i + 1)})`, argPos(2 * i + 1));
          results.push(rest[2 * i + 1]);
        }
        const otherwise = rest.length % 2 === 1 ? rest[rest.length - 1] : undefined;
        const type = this.unify(otherwise ? [...results, otherwise] : results);
        if (type === 'null') return this.nullOf('null');
        const dflt = otherwise ? this.convert(otherwise, type) : this.nullOf(type).sql;
        // Cases are strings: a value of another type never matches (EQUALS rules), so only the default applies.
        if (value.type !== 'string') return v(dflt, type, otherwise?.simple ?? true);
        // A simple CASE repeats its operand per branch inside DuckDB: share it.
        const sql = this.share([value], ([x]) => {
          const whens = [...Array(pairs).keys()].map((i) => `WHEN ${x} = ${rest[2 * i].sql} THEN ${this.convert(rest[2 * i + 1], type)}`);
          return `CASE ${whens.join(' ')} ELSE ${dflt} END`;
        });
        return v(sql, type);
      }
      case 'COALESCE': {
        const type = this.unify(args);
        if (type === 'null') return this.nullOf('null');
        // NULLIF is expanded by DuckDB into a CASE that repeats its argument: share it.
        const parts = args.filter((a) => a.type !== 'null').map((a) => (a.type === 'string' ? this.share([a], ([x]) => this.x.nullIf(x, "''")) : a.sql));
        const typed = args.filter((a) => a.type !== 'null').map((a, i) => (a.type === type ? parts[i] : this.convert(v(parts[i], a.type), type)));
        return v(`COALESCE(${typed.join(', ')})`, type);
      }

      // -- comparison
      case 'LT':
      case 'LTE':
      case 'GT':
      case 'GTE': {
        const [a, b] = args;
        const ca = cls(a.type);
        if (ca === 'null' || ca === 'bool' || ca !== cls(b.type)) return this.constant(false);
        const op = { LT: '<', LTE: '<=', GT: '>', GTE: '>=' }[spec.name];
        return v(`COALESCE(${a.sql} ${op} ${b.sql}, ${this.d.bool(false)})`, 'boolean');
      }
      case 'EQUALS':
        return v(this.equals(args[0], args[1]), 'boolean');
      case 'NOT_EQUALS':
        return v(`(NOT ${this.equals(args[0], args[1])})`, 'boolean');
      case 'IN':
      case 'NOT_IN': {
        const [value, ...options] = args;
        const sql = this.share([value], ([x]) => `(${options.map((o) => this.equals(value, o, x, o.sql)).join(' OR ')})`);
        return v(spec.name === 'IN' ? sql : `(NOT ${sql})`, 'boolean');
      }

      // -- boolean
      case 'EXISTS':
        return args[0].type === 'null' ? this.constant(false) : v(`(${args[0].sql} IS NOT NULL)`, 'boolean');
      case 'NOT':
        return v(`(NOT ${this.truth(args[0])})`, 'boolean');
      case 'AND':
      case 'OR':
        return v(`(${args.map((a) => this.truth(a)).join(` ${spec.name} `)})`, 'boolean');

      // -- math
      case 'SUM':
      case 'SUB':
      case 'MUL': {
        const nums = args.map((a) => this.num(a));
        const type: ValueType = nums.every((n) => n.type === 'integer') ? 'integer' : 'float';
        if (nums.some((n) => n.type === 'null') || args.some((a) => a.type === 'null')) return this.nullOf(type);
        const op = { SUM: '+', SUB: '-', MUL: '*' }[spec.name];
        if (type === 'float') return v(`(${nums.map((n) => this.convert(n, 'float')).join(` ${op} `)})`, 'float');
        // Integers: a result outside the 64-bit range is null.
        if (spec.name === 'MUL') {
          let acc = nums[0].sql;
          for (const n of nums.slice(1)) acc = this.x.intArith('*', acc, n.sql);
          return v(acc, 'integer');
        }
        if (spec.name === 'SUM') return v(this.x.intSum(nums.map((n) => n.sql)), 'integer');
        return v(this.x.intArith('-', nums[0].sql, nums[1].sql), 'integer');
      }
      case 'DIV': {
        const [a, b] = args.map((x) => this.num(x));
        if (a.type === 'null' || b.type === 'null' || args[0].type === 'null' || args[1].type === 'null') return this.nullOf('float');
        // Division by zero → NULL (DOUBLE division alone would give ±inf).
        return v(`(${this.d.cast(a.sql, 'float')} / ${this.nonZero(v(this.convert(b, 'float'), 'float', b.simple))})`, 'float');
      }
      case 'MOD': {
        const [a, b] = args.map((x) => this.num(x));
        const type: ValueType = a.type === 'integer' && b.type === 'integer' ? 'integer' : 'float';
        if (args[0].type === 'null' || args[1].type === 'null') return this.nullOf(type);
        // Sign of the dividend (truncated division), like Go's % and math.Mod; modulo zero → NULL.
        if (type === 'integer') return v(this.share([b], ([y]) => this.x.intArith('%', a.sql, y)), 'integer');
        return v(this.share([v(this.convert(b, 'float'), 'float', b.simple)], ([y]) => this.x.floatMod(a.sql, y)), 'float');
      }
      case 'MIN':
      case 'MAX':
        return this.minMax(spec.name === 'MIN' ? 'least' : 'greatest', args);
      case 'LOG10': {
        const x = this.num(args[0]);
        if (x.type === 'null') return this.nullOf('float');
        // Zero and negative numbers have no logarithm: null.
        return v(this.share([x], ([s]) => `CASE WHEN ${s} > 0 THEN ${this.x.log10(s)} ELSE NULL END`), 'float');
      }
      case 'BUCKET':
        return this.bucket(args, argPos);

      // -- casts
      case 'INT': {
        const x = args[0];
        if (x.type === 'integer') return x;
        if (x.type === 'null') return this.nullOf('integer');
        const n = this.num(x);
        if (n.type === 'integer') return n;
        return v(this.x.truncToInt(n.sql), 'integer');
      }
      case 'FLOAT': {
        const x = args[0];
        if (x.type === 'null') return this.nullOf('float');
        return v(this.convert(this.num(x), 'float'), 'float');
      }
      case 'BOOL':
        return v(this.truth(args[0]), 'boolean');
      case 'STRING':
        return v(`COALESCE(${this.str(args[0])}, '')`, 'string');

      // -- strings
      case 'CONCAT':
        // NULLs are skipped: empty arguments are ignored; all empty gives "".
        return v(this.x.concat(args.map((a) => this.str(a))), 'string');
      case 'STARTS_WITH':
      case 'ENDS_WITH':
      case 'CONTAINS': {
        const [s, p] = args;
        if (s.type !== 'string' || p.type !== 'string') return this.constant(false);
        const f = { STARTS_WITH: this.d.startsWith, ENDS_WITH: this.d.endsWith, CONTAINS: this.d.contains }[spec.name];
        return v(`COALESCE(${f(s.sql, p.sql)}, ${this.d.bool(false)})`, 'boolean');
      }
      case 'TO_LOWER':
        return args[0].type === 'null' ? this.nullOf('string') : v(this.x.lower(this.str(args[0])), 'string');
      case 'LENGTH': {
        let unit = 'chars';
        if (args.length === 2) {
          unit = this.stringLiteral(args[1], `${what(1)} (the unit)`, argPos(1)).toLowerCase();
          if (unit !== 'chars' && unit !== 'bytes') throw new ExpressionError(argPos(1), `${what(1)} must be "chars" or "bytes"`);
        }
        const s = args[0];
        if (s.type === 'null') return this.nullOf('integer');
        // Not a string: 0 (null stays null).
        if (s.type !== 'string') return v(`(${this.x.length(this.str(s), 'chars')} * 0)`, 'integer');
        return v(this.x.length(s.sql, unit as 'chars' | 'bytes'), 'integer');
      }

      // -- regular expressions
      case 'REG_MATCH':
      case 'REG_VALUE':
      case 'REG_COUNT': {
        const pattern = this.stringLiteral(args[1], `the regular expression (${what(1)})`, argPos(1));
        const { groups } = checkRegex(pattern, argPos(1));
        const s = args[0];
        // Not a string: false / null / 0, and the pattern is not bound.
        if (s.type !== 'string') return spec.name === 'REG_MATCH' ? this.constant(false) : spec.name === 'REG_VALUE' ? this.nullOf('string') : v('0', 'integer', true);
        // (The pattern is bound as it is: an engine may need it to be a constant of its text type.)
        const re = this.ctx.bind(pattern);
        if (spec.name === 'REG_MATCH') return v(`COALESCE(${this.x.regexMatches(s.sql, re)}, ${this.d.bool(false)})`, 'boolean');
        if (spec.name === 'REG_VALUE') {
          const extracted = v(this.x.regexExtract(s.sql, re, groups > 0 ? 1 : 0), 'string');
          return v(this.share([extracted], ([x]) => this.x.nullIf(x, "''")), 'string');
        }
        return v(`COALESCE(${this.x.regexCount(s.sql, re)}, 0)`, 'integer');
      }

      // -- time
      case 'UNIX_TIMESTAMP': {
        const s = args[0];
        if (s.type === 'integer' || s.type === 'float') return v(this.convert(s, 'float'), 'float');
        if (s.type !== 'string') return this.nullOf('float');
        // With a zone (Z or ±hh:mm) the instant is exact; without one it is read as UTC.
        return v(this.share([s], ([x]) => this.x.parseTime(x)), 'float');
      }
      case 'EVENT_TIMESTAMP':
        return v(this.ctx.dialect.epochSeconds(this.ctx.eventTimeSql), 'float');
      case 'INGEST_TIMESTAMP':
        return v(this.ctx.dialect.epochSeconds(this.ctx.ingestTimeSql), 'float');
      case 'FORMAT_TIME': {
        const fmt = this.stringLiteral(args[0], `the format (${what(0)})`, argPos(0));
        checkStrftime(fmt, argPos(0));
        const t = args[1];
        let secs: Val;
        if (t.type === 'integer' || t.type === 'float') secs = t;
        else if (t.type === 'string') secs = v(this.x.parseFloat(t.sql), 'float');
        else return this.nullOf('string');
        // UTC; outside ±10^11 s (about year −1200 to 5100) → null.
        const sql = this.share(
          [secs],
          ([x]) => `CASE WHEN ${x} BETWEEN -100000000000 AND 100000000000 THEN ${this.x.formatTime(x, fmt, (t) => this.ctx.bind(t))} ELSE NULL END`,
        );
        return v(sql, 'string');
      }

      // -- other
      case 'RAND':
        return v(this.x.random(), 'float');
      case 'METRO_HASH': {
        const s = args[0];
        if (s.type === 'null') return this.nullOf('integer');
        // Not MetroHash itself: the low 64 bits of the MD5 of the value's string form, as a signed
        // 64-bit integer. Stable across engines, versions and platforms.
        return v(this.x.md5Low64(this.str(s)), 'integer');
      }
    }
    throw new ExpressionError(e.pos, `function ${spec.name} is not implemented`);
  }

  /** MIN/MAX: among the arguments of the same kind as the first non-null one; nulls ignored. */
  private minMax(f: 'least' | 'greatest', args: Val[]): Val {
    const present = args.filter((a) => a.type !== 'null');
    if (present.length === 0) return this.nullOf('null');
    const kinds = [...new Set(present.map((a) => cls(a.type)))];
    const type = this.unify(present);
    const group = (k: Cls, sqls: string[]) => {
      const members = present.map((a, i) => [a, sqls[i]] as const).filter(([a]) => cls(a.type) === k);
      const t = this.unify(members.map(([a]) => a));
      const parts = members.map(([a, s]) => this.convert(v(s, a.type), t));
      return this.convert(v(parts.length === 1 ? parts[0] : this.x[f](parts), t), type);
    };
    if (kinds.length === 1) return v(group(kinds[0], present.map((a) => a.sql)), type);
    const sql = this.share(present, (sqls) => {
      const whens = present.map((a, i) => `WHEN ${sqls[i]} IS NOT NULL THEN ${group(cls(a.type), sqls)}`);
      return `CASE ${whens.join(' ')} ELSE ${this.nullOf(type).sql} END`;
    });
    return v(sql, type);
  }

  /**
   * BUCKET(value, size[, min, max]) → a string label "[lo, hi)" of the bucket holding the value.
   * Buckets are aligned to min (0 without bounds); below min → "(-inf, min)", at or above max →
   * "[max, +inf)". Integer arithmetic when the value and every literal are integers, else float.
   */
  private bucket(args: Val[], argPos: (i: number) => number): Val {
    const size = this.numberLiteral(args[1], 'the bucket size (argument 2 of BUCKET)', argPos(1));
    if (!(size.value > 0)) throw new ExpressionError(argPos(1), 'the bucket size (argument 2 of BUCKET) must be greater than 0');
    let bounds: { min: { value: number; integer: boolean }; max: { value: number; integer: boolean } } | undefined;
    if (args.length === 4) {
      const min = this.numberLiteral(args[2], 'the minimum (argument 3 of BUCKET)', argPos(2));
      const max = this.numberLiteral(args[3], 'the maximum (argument 4 of BUCKET)', argPos(3));
      if (!(min.value < max.value)) throw new ExpressionError(argPos(2), 'BUCKET: the minimum must be less than the maximum');
      bounds = { min, max };
    }
    const x = this.num(args[0]);
    if (x.type === 'null' || args[0].type === 'null') return this.nullOf('string');
    const integer = x.type === 'integer' && size.integer && (!bounds || (bounds.min.integer && bounds.max.integer));
    const wide = (sql: string) => (integer ? this.x.wideInt(sql) : this.d.cast(sql, 'float'));
    const lit = (i: number) => wide(args[i].sql);
    const s = lit(1);
    const origin = bounds ? lit(2) : wide('0');
    const text = (sql: string) => this.x.text(sql, integer ? 'integer' : 'float');
    const sql = this.share([x], ([raw]) => {
      const val = wide(raw);
      const off = `(${val} - ${origin})`;
      const lo = integer ? `(${val} - (((${off} % ${s}) + ${s}) % ${s}))` : `(${origin} + floor(${off} / ${s}) * ${s})`;
      const hi = bounds ? this.x.least([`${lo} + ${s}`, lit(3)]) : `(${lo} + ${s})`;
      const label = `'[' || ${text(lo)} || ', ' || ${text(hi)} || ')'`;
      if (!bounds) return `CASE WHEN ${raw} IS NULL THEN NULL ELSE ${label} END`;
      return (
        `CASE WHEN ${raw} IS NULL THEN NULL ` +
        `WHEN ${val} < ${lit(2)} THEN '(-inf, ' || ${text(lit(2))} || ')' ` +
        `WHEN ${val} >= ${lit(3)} THEN '[' || ${text(lit(3))} || ', +inf)' ` +
        `ELSE ${label} END`
      );
    });
    return v(sql, 'string');
  }
}

function checkStrftime(fmt: string, pos: number): void {
  for (let i = 0; i < fmt.length; i++) {
    if (fmt[i] !== '%') continue;
    let c = fmt[i + 1];
    if (c === undefined) throw new ExpressionError(pos, 'FORMAT_TIME: the format ends with a lone "%" (write %% for a percent sign)');
    if (c === '-') {
      c = fmt[i + 2];
      if (c === undefined || !STRFTIME_UNPADDED.has(c)) throw new ExpressionError(pos, `FORMAT_TIME: unsupported conversion %-${c ?? ''}`);
      i += 2;
      continue;
    }
    if (!STRFTIME.has(c)) throw new ExpressionError(pos, `FORMAT_TIME: unsupported conversion %${c}`);
    i++;
  }
}
