import {
  OperationNodeTransformer, RawNode, ValueNode, PrimitiveValueListNode,
  type BinaryOperationNode, type LimitNode, type OffsetNode, type KyselyPlugin, type OperationNode, type PluginTransformQueryArgs,
  type PluginTransformResultArgs, type QueryId, type QueryResult, type RootOperationNode, type UnknownRow,
} from 'kysely';

/**
 * The SQLite inside better-sqlite3 is built with STAT4. With it, a comparison of an indexed column
 * with a bound parameter lets the planner look at the value, and the statement is then re-prepared
 * on every run (a bound LIMIT does the same): a 4 µs lookup becomes 25-60 µs (measured here). Wrapping a string parameter in
 * CAST(… AS TEXT) keeps the value out of planning and keeps the index. Only strings are wrapped:
 * against our typed columns a TEXT cast compares exactly as the bare parameter would, while a
 * numeric cast could turn a text comparison numeric.
 */
export class BoundValuesPlugin implements KyselyPlugin {
  private readonly transformer = new CastComparedValues();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

const comparisons = new Set(['=', '==', '!=', '<>', '<', '<=', '>', '>=', 'in', 'not in', 'is', 'is not']);

class CastComparedValues extends OperationNodeTransformer {
  protected override transformBinaryOperation(node: BinaryOperationNode, queryId?: QueryId): BinaryOperationNode {
    const transformed = super.transformBinaryOperation(node, queryId);
    const operator = (transformed.operator as { operator?: string }).operator;
    if (!operator || !comparisons.has(operator)) return transformed;
    const right = transformed.rightOperand;
    if (ValueNode.is(right)) return { ...transformed, rightOperand: castValue(right) };
    if (PrimitiveValueListNode.is(right)) return { ...transformed, rightOperand: castList(right) };
    return transformed;
  }

  // A bound LIMIT or OFFSET counts as a plan-shaping value too; an integer cast is exact there.
  protected override transformLimit(node: LimitNode, queryId?: QueryId): LimitNode {
    const transformed = super.transformLimit(node, queryId);
    return ValueNode.is(transformed.limit) ? { ...transformed, limit: castInteger(transformed.limit) } : transformed;
  }

  protected override transformOffset(node: OffsetNode, queryId?: QueryId): OffsetNode {
    const transformed = super.transformOffset(node, queryId);
    return ValueNode.is(transformed.offset) ? { ...transformed, offset: castInteger(transformed.offset) } : transformed;
  }
}

const castInteger = (node: ValueNode): OperationNode => RawNode.create(['cast(', ' as integer)'], [node]);

function sqlType(value: unknown): string | undefined {
  return typeof value === 'string' ? 'text' : undefined;
}

function castValue(node: ValueNode): OperationNode {
  const type = sqlType(node.value);
  return type ? RawNode.create(['cast(', ` as ${type})`], [node]) : node;
}

function castList(node: PrimitiveValueListNode): OperationNode {
  if (!node.values.every((v) => sqlType(v) !== undefined)) return node;
  const fragments = ['('];
  const parameters: OperationNode[] = [];
  node.values.forEach((value, i) => {
    parameters.push(ValueNode.create(value));
    fragments[fragments.length - 1] += 'cast(';
    fragments.push(` as ${sqlType(value)})${i === node.values.length - 1 ? ')' : ', '}`);
  });
  return RawNode.create(fragments, parameters);
}
