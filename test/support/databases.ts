import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

async function adminQuery(sqlText: string): Promise<void> {
  const adminUrl = process.env.TEST_POSTGRES_URL;
  if (!adminUrl) throw new Error('TEST_POSTGRES_URL is not set');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sqlText);
  } finally {
    await client.end();
  }
}

/** Creates a PostgreSQL database with a random name on TEST_POSTGRES_URL's server; drop() removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `hts_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.TEST_POSTGRES_URL as string);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
