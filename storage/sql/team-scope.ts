import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely';

/** Which teams one statement covers: one team, or every team but some (retention windows). */
export type TeamScope = { only: string } | { except: readonly string[] };

/** The condition on a `team_id` column that keeps a statement inside `scope`. */
export function inTeamScope<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>, column: string, scope: TeamScope,
): ExpressionWrapper<DB, TB, SqlBool> {
  const ref = eb.ref(column as never);
  if ('only' in scope) return eb(ref, '=', scope.only as never);
  if (scope.except.length === 0) return eb.lit(true) as unknown as ExpressionWrapper<DB, TB, SqlBool>;
  return eb(ref, 'not in', [...scope.except] as never);
}
