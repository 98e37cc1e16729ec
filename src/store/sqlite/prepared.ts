import type { Compilable, CompiledQuery, DialectAdapter } from 'kysely';
import type { Db } from '../db.js';
import { isSqlite } from './batches.js';

/**
 * Kysely builds and compiles every query anew. The few queries on the submission path that run on
 * every request with the same shape are compiled once per dialect instead, and only their
 * parameters are swapped. The builder is called once with placeholder values; where each
 * placeholder landed in the compiled parameters is remembered, so values are slotted in without
 * knowing the SQL. Placeholders must be distinct from each other and from any literal in the query.
 */
export function reusableQuery<A extends unknown[], R>(build: (db: Db, ...args: A) => Compilable<R>, ...placeholders: A) {
  const compiled = new WeakMap<DialectAdapter, { query: CompiledQuery<R>; slots: number[] }>();
  return (db: Db, ...args: A): CompiledQuery<R> => {
    const adapter = db.getExecutor().adapter;
    let entry = compiled.get(adapter);
    if (!entry) {
      const query = build(db, ...placeholders).compile();
      const index = new Map<unknown, number>(placeholders.map((value, i) => [value, i]));
      const slots = query.parameters.map((value) => index.get(value) ?? -1);
      if (slots.includes(-1)) throw new Error('reusableQuery: every parameter must come from a placeholder');
      entry = { query, slots };
      compiled.set(adapter, entry);
    }
    return { ...entry.query, parameters: entry.slots.map((i) => args[i]) };
  };
}

/**
 * A multi-row write compiled once per row count and reused (reusableQuery), for the writes of a
 * submission batch: on SQLite a batch is cut into chunks of a few sizes (batches.ts), so each
 * statement has a handful of shapes, and building a 19-column insert of 32 rows anew cost more
 * JavaScript than SQLite took to run it. On PostgreSQL a batch is one statement of any size, so
 * only the one-row shape is reused there.
 *
 * `build` gets the rows with every column of `columns` set. The function returned runs the write
 * for `rows` and gives the rows it returns: through the reused statement, or through `build` for a
 * shape not reused (above) or a row that leaves a column out (its default must apply, which a
 * reused statement would overwrite).
 */
export function reusableRows<C extends string, Q extends Compilable<unknown>>(columns: readonly C[], build: (db: Db, rows: Record<C, unknown>[]) => Q) {
  type R = Q extends Compilable<infer O> ? O : never;
  const bySize = new Map<number, (db: Db, ...values: unknown[]) => CompiledQuery<R>>();
  const width = columns.length;
  const queryOf = (size: number) => {
    let query = bySize.get(size);
    if (!query) {
      const rowsOf = (values: unknown[]) =>
        Array.from({ length: size }, (_, r) => Object.fromEntries(columns.map((c, i) => [c, values[r * width + i]])) as Record<C, unknown>);
      query = reusableQuery(
        (db: Db, ...values: unknown[]) => build(db, rowsOf(values)) as Compilable<R>,
        ...Array.from({ length: size * width }, (_, k): unknown => `\u0000${Math.floor(k / width)}:${columns[k % width]}`),
      );
      bySize.set(size, query);
    }
    return query;
  };
  const reused = (db: Db, rows: readonly Partial<Record<C, unknown>>[]): CompiledQuery<R> | undefined => {
    if (rows.length !== 1 && !isSqlite(db)) return undefined;
    const values = new Array<unknown>(rows.length * width);
    let k = 0;
    for (const row of rows) {
      for (const column of columns) {
        const value = row[column];
        if (value === undefined) return undefined;
        values[k++] = value;
      }
    }
    return queryOf(rows.length)(db, ...values);
  };
  return async (db: Db, rows: readonly Partial<Record<C, unknown>>[]): Promise<R[]> => {
    const query = reused(db, rows) ?? (build(db, rows as Record<C, unknown>[]).compile() as CompiledQuery<R>);
    return (await db.executeQuery(query)).rows;
  };
}

/**
 * A query over a list of values (an IN list, padded to a power of two by batches.ts `padded`),
 * compiled once per list length and reused: a batch's reads name every key of every submission,
 * and building their value lists anew cost more than running them. `placeholders` stand for the
 * other arguments, as in reusableQuery.
 */
export function reusableList<A extends unknown[], Q extends Compilable<unknown>>(
  build: (db: Db, list: readonly unknown[], ...args: A) => Q,
  ...placeholders: A
) {
  type R = Q extends Compilable<infer O> ? O : never;
  const byLength = new Map<number, (db: Db, ...values: unknown[]) => CompiledQuery<R>>();
  return (db: Db, list: readonly unknown[], ...args: A): CompiledQuery<R> => {
    let query = byLength.get(list.length);
    if (!query) {
      const length = list.length;
      query = reusableQuery(
        (db: Db, ...values: unknown[]) => build(db, values.slice(0, length), ...(values.slice(length) as A)) as Compilable<R>,
        ...[...Array.from({ length }, (_, i): unknown => `\u0000list:${i}`), ...placeholders],
      ) as (db: Db, ...values: unknown[]) => CompiledQuery<R>;
      byLength.set(length, query);
    }
    return query(db, ...list, ...args);
  };
}
