import {
  SqliteDialect, SqliteQueryCompiler, ValueNode, PrimitiveValueListNode,
  type BinaryOperationNode, type LimitNode, type OffsetNode, type QueryCompiler,
} from 'kysely';

/**
 * The SQLite inside better-sqlite3 is built with STAT4. With it, a comparison of an indexed column
 * with a bound parameter lets the planner look at the value, and the statement is then re-prepared
 * on every run (a bound LIMIT does the same): a 4 µs lookup becomes 25-60 µs (measured here).
 * Wrapping a string parameter in CAST(… AS TEXT) keeps the value out of planning and keeps the
 * index. Only strings are wrapped: against our typed columns a TEXT cast compares exactly as the
 * bare parameter would, while a numeric cast could turn a text comparison numeric.
 *
 * Done while compiling rather than as a plugin: a plugin rebuilds every query's whole node tree
 * before compiling, which cost more than the compile itself. The rewrite is SQLite's own concern,
 * so it lives in SQLite's compiler; PostgreSQL plans without it.
 */
export class SvcSqliteQueryCompiler extends SqliteQueryCompiler {
  protected override visitBinaryOperation(node: BinaryOperationNode): void {
    const operator = (node.operator as { operator?: string }).operator;
    if (!operator || !comparisons.has(operator)) return super.visitBinaryOperation(node);
    this.visitNode(node.leftOperand);
    this.append(' ');
    this.visitNode(node.operator);
    this.append(' ');
    const right = node.rightOperand;
    if (ValueNode.is(right) && !right.immediate && typeof right.value === 'string') this.appendCast(right.value, 'text');
    else if (PrimitiveValueListNode.is(right) && right.values.length > 0 && right.values.every((v) => typeof v === 'string')) this.appendCastList(right.values);
    else this.visitNode(right);
  }

  protected override visitLimit(node: LimitNode): void {
    this.append('limit ');
    this.visitIntegerOrNode(node.limit);
  }

  protected override visitOffset(node: OffsetNode): void {
    this.append('offset ');
    this.visitIntegerOrNode(node.offset);
  }

  private visitIntegerOrNode(node: LimitNode['limit']): void {
    if (ValueNode.is(node) && !node.immediate) this.appendCast(node.value, 'integer');
    else this.visitNode(node);
  }

  private appendCast(value: unknown, type: 'text' | 'integer'): void {
    this.append('cast(');
    this.appendValue(value);
    this.append(` as ${type})`);
  }

  private appendCastList(values: readonly unknown[]): void {
    this.append('(');
    values.forEach((value, i) => {
      if (i > 0) this.append(', ');
      this.appendCast(value, 'text');
    });
    this.append(')');
  }
}

const comparisons = new Set(['=', '==', '!=', '<>', '<', '<=', '>', '>=', 'in', 'not in', 'is', 'is not']);

/** Kysely's SQLite dialect with svc's compiler. */
export class SvcSqliteDialect extends SqliteDialect {
  override createQueryCompiler(): QueryCompiler {
    return new SvcSqliteQueryCompiler();
  }
}
