// The function table: canonical names, aliases, arity, and which arguments must be literals.
// Semantics and result types live in compile.ts (one case per function) and in
// docs/calculated-fields.md.

export interface FunctionSpec {
  name: string;
  minArgs: number;
  /** Infinity for variadic functions. */
  maxArgs: number;
  /** Extra rule on the argument count, checked after min/max. */
  arity?: (n: number) => string | undefined;
  /** Only produced by an operator (`!=`), not callable by name. */
  internal?: boolean;
}

const fn = (name: string, minArgs: number, maxArgs = minArgs, extra: Partial<FunctionSpec> = {}): FunctionSpec => ({
  name,
  minArgs,
  maxArgs,
  ...extra,
});

const SPECS: FunctionSpec[] = [
  // Conditional
  fn('IF', 2, Infinity),
  fn('SWITCH', 3, Infinity),
  fn('COALESCE', 1, Infinity),
  // Comparison
  fn('LT', 2),
  fn('LTE', 2),
  fn('GT', 2),
  fn('GTE', 2),
  fn('EQUALS', 2),
  fn('NOT_EQUALS', 2, 2, { internal: true }),
  fn('IN', 2, Infinity),
  fn('NOT_IN', 2, Infinity),
  // Boolean
  fn('EXISTS', 1),
  fn('NOT', 1),
  fn('AND', 1, Infinity),
  fn('OR', 1, Infinity),
  // Math
  fn('SUM', 1, Infinity),
  fn('SUB', 2),
  fn('MUL', 1, Infinity),
  fn('DIV', 2),
  fn('MOD', 2),
  fn('MIN', 1, Infinity),
  fn('MAX', 1, Infinity),
  fn('LOG10', 1),
  fn('BUCKET', 2, 4, { arity: (n) => (n === 3 ? 'BUCKET takes 2 arguments (value, size) or 4 (value, size, min, max)' : undefined) }),
  // Casts
  fn('INT', 1),
  fn('FLOAT', 1),
  fn('BOOL', 1),
  fn('STRING', 1),
  // Strings
  fn('CONCAT', 1, Infinity),
  fn('STARTS_WITH', 2),
  fn('ENDS_WITH', 2),
  fn('CONTAINS', 2),
  fn('TO_LOWER', 1),
  fn('LENGTH', 1, 2),
  // Regular expressions
  fn('REG_MATCH', 2),
  fn('REG_VALUE', 2),
  fn('REG_COUNT', 2),
  // Time
  fn('UNIX_TIMESTAMP', 1),
  fn('EVENT_TIMESTAMP', 0),
  fn('INGEST_TIMESTAMP', 0),
  fn('FORMAT_TIME', 2),
  // Other
  fn('RAND', 0),
  fn('METRO_HASH', 1),
];

const ALIASES: Record<string, string> = {
  HAS_VALUE: 'EXISTS',
  PREFIX: 'STARTS_WITH',
  SUFFIX: 'ENDS_WITH',
};

const BY_NAME = new Map(SPECS.map((s) => [s.name, s]));

/** The spec of a function by (upper-cased) name or alias; internal names only when `internal`. */
export function lookupFunction(name: string, internal = false): FunctionSpec | undefined {
  const spec = BY_NAME.get(ALIASES[name] ?? name);
  if (spec?.internal && !internal) return undefined;
  return spec;
}

/** Every callable name (aliases included), for error messages and documentation tests. */
export const FUNCTION_NAMES: string[] = [...SPECS.filter((s) => !s.internal).map((s) => s.name), ...Object.keys(ALIASES)].sort();

/** The argument-count problem of a call, or undefined. */
export function arityProblem(spec: FunctionSpec, n: number): string | undefined {
  const plural = (k: number) => `${k} argument${k === 1 ? '' : 's'}`;
  if (n < spec.minArgs || n > spec.maxArgs) {
    const expected =
      spec.maxArgs === Infinity ? `at least ${plural(spec.minArgs)}` : spec.minArgs === spec.maxArgs ? plural(spec.minArgs) : `${spec.minArgs} to ${spec.maxArgs} arguments`;
    return `${spec.name} takes ${expected}, got ${n}`;
  }
  return spec.arity?.(n);
}
