import type { Compilable, CompiledQuery, DialectAdapter } from 'kysely';
import type { Db } from './db.js';

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
