// The language's one error type (re-exported by index.ts, the module's public face).
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

/** Calculated fields that reference each other in a circle. */
export class CycleError extends ExpressionError {
  constructor(position: number, readonly chain: string[]) {
    super(position, `calculated fields reference each other in a cycle: ${chain.map((n) => `$${n}`).join(' → ')}`);
    this.name = 'CycleError';
  }
}
